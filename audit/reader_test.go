package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "JAIL_AUDIT_TEST_WRITER"

// TestMain runs the writer child of TestSIGKILLMidWrite when re-executed.
func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		writerChild(path)
		return
	}
	os.Exit(m.Run())
}

// writerChild writes events as fast as it can until killed.
func writerChild(path string) {
	w, err := Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	argv := []string{"sh", "-c", strings.Repeat("x", 3000)} // multi-page batches
	for i := 0; ; i++ {
		w.Record(Exec{PID: i, Path: "/bin/sh", Argv: argv, Decision: DecisionAllow})
		if i%64 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// Crash safety: SIGKILL the writing process at random points; every complete
// line must verify and at most the final line may be incomplete.
func TestSIGKILLMidWrite(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 5; round++ {
		path := t.TempDir() + "/trail.jsonl"
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child has written something, then a bit more.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if st, err := os.Stat(path); err == nil && st.Size() > 1<<20 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child wrote nothing: %s", stderr.String())
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(round*7) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child did not die of SIGKILL: %v %s", err, stderr.String())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Verify(bytes.NewReader(b))
		if err != nil || !res.OK || res.Lines < 100 {
			t.Fatalf("round %d: after SIGKILL: %+v %v", round, res, err)
		}
		if res.Truncated != !bytes.HasSuffix(b, []byte("\n")) {
			t.Fatalf("Truncated = %v but file ends with %q", res.Truncated, b[len(b)-1:])
		}
		t.Logf("round %d: %d complete lines, truncated tail %v", round, res.Lines, res.Truncated)
	}
}

// chainTrail returns a verified 12-line trail.
func chainTrail(t *testing.T) [][]byte {
	t.Helper()
	w, path := newTestWriter(t, 64)
	for i := 0; i < 12; i++ {
		w.Record(Exec{PID: 100 + i, Path: "/bin/echo", Argv: []string{"echo", strconv.Itoa(i)}, Decision: DecisionAllow})
	}
	w.Close()
	b, _ := os.ReadFile(path)
	mustVerifyOK(t, b)
	return lines(b)
}

// Adversarial: every kind of tampering with a non-final line is caught and
// located.
func TestVerifyCatchesTampering(t *testing.T) {
	tests := []struct {
		name     string
		tamper   func(ls [][]byte) [][]byte
		firstBad int
	}{
		{"edit a value", func(ls [][]byte) [][]byte {
			ls[4] = bytes.Replace(ls[4], []byte(`"pid":104`), []byte(`"pid":666`), 1)
			return ls
		}, 6},
		{"edit allow to deny", func(ls [][]byte) [][]byte {
			ls[0] = bytes.Replace(ls[0], []byte(`allow`), []byte(`deny!`), 1)
			return ls
		}, 2},
		{"delete a line", func(ls [][]byte) [][]byte { return append(ls[:5], ls[6:]...) }, 6},
		{"delete first line", func(ls [][]byte) [][]byte { return ls[1:] }, 1},
		{"swap two lines", func(ls [][]byte) [][]byte { ls[3], ls[4] = ls[4], ls[3]; return ls }, 4},
		{"duplicate a line", func(ls [][]byte) [][]byte {
			return append(ls[:3], append([][]byte{ls[2]}, ls[3:]...)...)
		}, 4},
		{"insert forged line with right seq", func(ls [][]byte) [][]byte {
			forged := []byte(`{"ts":"2026-01-02T03:04:05.000000000Z","seq":3,"type":"exec","prev":"` + hashOf(ls[1]) + `","pid":1}`)
			return append(ls[:2], append([][]byte{forged}, ls[2:]...)...)
		}, 4},
		{"rewrite line and its seq, fix own prev", func(ls [][]byte) [][]byte {
			// A forger who recomputes the edited line's prev still breaks the next one.
			ls[6] = bytes.Replace(ls[6], []byte(`"echo","6"`), []byte(`"rm","-rf"`), 1)
			return ls
		}, 8},
		{"blank line inserted", func(ls [][]byte) [][]byte {
			return append(ls[:2], append([][]byte{{}}, ls[2:]...)...)
		}, 3},
		{"garbage line", func(ls [][]byte) [][]byte { ls[9] = []byte("{not json"); return ls }, 10},
		{"two lines joined", func(ls [][]byte) [][]byte {
			ls[2] = append(append([]byte{}, ls[2]...), ls[3]...)
			return append(ls[:3], ls[4:]...)
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := tt.tamper(chainTrail(t))
			res, err := Verify(bytes.NewReader(join(ls)))
			var ve *VerifyError
			if !errors.As(err, &ve) || !errors.Is(err, ErrBroken) || res.OK {
				t.Fatalf("tampering not detected: %+v %v", res, err)
			}
			if res.FirstBad != tt.firstBad || ve.Line != tt.firstBad {
				t.Errorf("first bad line %d (%s), want %d", res.FirstBad, ve.Reason, tt.firstBad)
			}
		})
	}
}

func hashOf(b []byte) string {
	c := NewChain()
	c.Add(1, b, nil, nil)
	return c.Result().Head
}

func TestVerifyEdgeCases(t *testing.T) {
	good := join(chainTrail(t))
	tests := []struct {
		name      string
		in        []byte
		ok        bool
		truncated bool
		lines     int
	}{
		{"empty", nil, true, false, 0},
		{"intact", good, true, false, 12},
		{"cut mid last line", good[:len(good)-10], true, true, 11},
		{"cut before newline", good[:len(good)-1], true, true, 11},
		{"garbage tail without newline", append(append([]byte{}, good...), "{\"x"...), true, true, 12},
		{"crlf", bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")), false, false, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(bytes.NewReader(tt.in))
			if res.OK != tt.ok || (err == nil) != tt.ok || res.Truncated != tt.truncated || res.Lines != tt.lines {
				t.Errorf("Verify = %+v, %v; want ok %v truncated %v lines %d", res, err, tt.ok, tt.truncated, tt.lines)
			}
		})
	}
}

func TestReaderReportsLineNumbers(t *testing.T) {
	ls := chainTrail(t)[:3]
	in := string(join(ls)) + "oops\n[1,2]\n{\"ts\":\"x\",\"seq\":1,\"type\":\"a\",\"prev\":\"" + GenesisPrev + "\"}\n" +
		strings.Repeat("a", MaxLineBytes+10) + "\n" + string(ls[0]) + "\n" + `{"ts":"2026-01-01T00:00:00Z","seq":-1}`
	recs, bad, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line int
		err  error
	}{{4, ErrMalformed}, {5, ErrMalformed}, {6, ErrMalformed}, {7, ErrLineTooLong}, {9, ErrTruncated}}
	if len(bad) != len(want) || len(recs) != 4 || recs[3].Line != 8 {
		t.Fatalf("recs %d, bad %v", len(recs), bad)
	}
	for i, w := range want {
		if bad[i].Line != w.line || !errors.Is(bad[i], w.err) {
			t.Errorf("bad[%d] = %v, want line %d %v", i, bad[i], w.line, w.err)
		}
		if !strings.HasPrefix(bad[i].Error(), fmt.Sprintf("line %d: ", w.line)) {
			t.Errorf("error text %q lacks its line number", bad[i].Error())
		}
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, syscall.EIO }

func TestVerifyIOError(t *testing.T) {
	_, err := Verify(io.MultiReader(strings.NewReader("{}\n"), errReader{}))
	if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrBroken) {
		t.Fatalf("err = %v, want EIO and not ErrBroken", err)
	}
}

// FuzzRead: arbitrary input never panics; bad lines carry a valid number.
func FuzzRead(f *testing.F) {
	f.Add(writeSample(f))
	f.Add([]byte("{}\n\n{\"seq\":1}\n"))
	f.Add([]byte(`{"ts":"2026-01-01T00:00:00Z","seq":1,"type":"exit","prev":"` + GenesisPrev + `","code":"x"}`))
	// A budget dropped event with keys and others (the summary's lines).
	f.Add([]byte(`{"ts":"2026-01-01T00:00:00Z","seq":1,"type":"dropped","prev":"` + GenesisPrev + `","count":9,"reason":"budget","keys":{"dns deny a":2},"others":{"dns deny":{"keys":3,"events":7,"uncounted":1}}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nl := bytes.Count(data, []byte("\n"))
		recs, bad, err := ReadAll(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, le := range bad {
			if le.Line < 1 || le.Line > nl+1 || !strings.HasPrefix(le.Error(), "line ") {
				t.Fatalf("bad line number %d of %d: %v", le.Line, nl+1, le)
			}
		}
		s, err := Summarize(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		s.Write(io.Discard, "fuzz")
		for _, r := range recs {
			FormatRecord(r)
		}
		res, err := Verify(bytes.NewReader(data))
		if res.OK != (err == nil) {
			t.Fatalf("OK %v but err %v", res.OK, err)
		}
		if res.OK && len(bad) > 0 && !(len(bad) == 1 && errors.Is(bad[0], ErrTruncated)) {
			t.Fatalf("verified a trail with bad lines %v", bad)
		}
	})
}

// FuzzVerify: changing any byte of any line but the last of a valid trail
// must be detected (the last line has no successor to vouch for it).
func FuzzVerify(f *testing.F) {
	f.Add(uint(10), byte('x'))
	f.Add(uint(300), byte('\n'))
	f.Add(uint(0), byte(' '))
	f.Fuzz(func(t *testing.T, pos uint, b byte) {
		data := writeSample(t)
		lastStart := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
		if lastStart <= 0 {
			t.Fatal("sample has one line")
		}
		p := int(pos % uint(lastStart)) // any byte before the last line, newlines included
		if data[p] == b {
			return
		}
		data[p] = b
		res, err := Verify(bytes.NewReader(data))
		if res.OK || !errors.Is(err, ErrBroken) {
			t.Fatalf("byte %d changed to %q not detected: %+v", p, b, res)
		}
	})
}
