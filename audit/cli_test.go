package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The writer's output for a fixed clock is stable: testdata/sample.jsonl is
// exactly what it writes (guards the line format against silent change).
func TestSampleTrailIsStable(t *testing.T) {
	golden(t, "sample.jsonl", writeSample(t))
	b, _ := os.ReadFile("testdata/sample.jsonl")
	mustVerifyOK(t, b)
	// Every event type of the schema appears in the sample.
	recs, _, _ := ReadAll(bytes.NewReader(b))
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Type] = true
	}
	for _, typ := range Types {
		if !seen[typ] {
			t.Errorf("sample lacks a %s event", typ)
		}
	}
	// A tampered copy (line 6 edited) for the broken-summary golden.
	ls := lines(b)
	edited := bytes.Replace(ls[4], []byte(`"git","status"`), []byte(`"git","push"`), 1)
	if bytes.Equal(edited, ls[4]) {
		t.Fatal("tampering did not change line 5")
	}
	ls[4] = edited
	golden(t, "sample-tampered.jsonl", join(ls))
}

// runCLI runs the CLI with options written the way package main parses
// them (--follow --json --verify --type T FILE), to keep the goldens readable.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runOpts(context.Background(), t, optsOf(t, args...))
}

func optsOf(t *testing.T, args ...string) CLIOptions {
	t.Helper()
	o := CLIOptions{Poll: 5 * time.Millisecond}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--follow":
			o.Follow = true
		case "--json":
			o.JSON = true
		case "--verify":
			o.Verify = true
		case "--type":
			i++
			o.Types = append(o.Types, strings.Split(args[i], ",")...)
		default:
			o.File = a
		}
	}
	return o
}

func runOpts(ctx context.Context, t *testing.T, o CLIOptions) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := o.Check(); err != nil {
		t.Fatalf("options %+v: %v", o, err)
	}
	code := RunCLI(ctx, o, &out, &errb)
	return out.String(), errb.String(), code
}

func TestCLIGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
		code   int
	}{
		{"summary.golden", []string{"testdata/sample.jsonl"}, 0},
		{"summary-tampered.golden", []string{"testdata/sample-tampered.jsonl"}, 1},
		{"verify.golden", []string{"--verify", "testdata/sample.jsonl"}, 0},
		{"verify-tampered.golden", []string{"testdata/sample-tampered.jsonl", "--verify"}, 1},
		{"json-net.golden", []string{"--json", "--type", "net", "testdata/sample.jsonl"}, 0},
		{"type-deny-dns.golden", []string{"--type", "deny,dns", "--type", "exec", "testdata/sample.jsonl"}, 0},
		{"follow.golden", []string{"--follow", "testdata/sample.jsonl"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errs, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, errs)
			}
			golden(t, tt.golden, []byte(out))
		})
	}
}

// Adversarial: escape sequences planted in argv by the agent never reach
// the reader's terminal raw.
func TestHumanOutputNeutralizesEscapes(t *testing.T) {
	for _, args := range [][]string{{"testdata/sample.jsonl"}, {"--type", "exec", "testdata/sample.jsonl"}, {"--follow", "testdata/sample.jsonl"}} {
		out, _, _ := runCLI(t, args...)
		if strings.ContainsRune(out, 0x1b) {
			t.Errorf("%v: raw ESC in human output", args)
		}
	}
	if !strings.Contains(string(must(os.ReadFile("testdata/sample.jsonl"))), `\u001b[31m`) {
		t.Fatal("sample lacks the planted escape; test would prove nothing")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Combinations that make no sense are refused before anything is read.
func TestCLIOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		o    CLIOptions
		want string
	}{
		{CLIOptions{}, "needs a FILE"},
		{CLIOptions{Verify: true, JSON: true, File: "x"}, "--verify takes no other flag"},
		{CLIOptions{Follow: true, File: "-"}, "--follow needs a file"},
		{CLIOptions{Types: []string{"bogus"}, File: "x"}, "--type bogus: want one of start"},
	} {
		if err := c.o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, errs, code := runCLI(t, filepath.Join(t.TempDir(), "missing")); code != 1 || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
}

// watchWriter is a goroutine-safe buffer that closes a channel the first time
// its content satisfies a condition: the test waits for what --follow has
// printed instead of sleeping.
type watchWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	cond func(string) bool
	hit  chan struct{}
}

func newWatch(cond func(string) bool) *watchWriter {
	return &watchWriter{cond: cond, hit: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if w.cond != nil && w.cond(w.b.String()) {
		close(w.hit)
		w.cond = nil
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *watchWriter) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-w.hit:
	case <-time.After(10 * time.Second):
		t.Fatalf("--follow never printed %s; it printed:\n%s", what, w.String())
	}
}

// --follow prints events as they are written, stops at exit, and flags a
// chain break it sees live.
func TestFollowLive(t *testing.T) {
	w, path := newTestWriter(t, 64)
	w.Record(Exec{PID: 1, Path: "/bin/a", Argv: []string{"a"}, Decision: DecisionAllow})
	w.Sync()
	done := make(chan struct{})
	out := newWatch(func(s string) bool { return strings.Count(s, "\n") >= 1 })
	errb := newWatch(nil)
	var code int
	go func() {
		code = RunCLI(context.Background(), CLIOptions{Follow: true, File: path, Poll: 2 * time.Millisecond}, out, errb)
		close(done)
	}()
	// The first event is printed: --follow is now at the end of the file,
	// waiting for more.
	out.wait(t, "the first event")
	select {
	case <-done:
		t.Fatal("--follow returned before the exit event")
	default:
	}
	w.Record(Exec{PID: 2, Path: "/bin/b", Argv: []string{"b"}, Decision: DecisionDeny})
	w.Record(Exit{Code: 0, Reason: "exited"})
	w.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("--follow did not stop at the exit event")
	}
	if code != 0 || strings.Count(out.String(), "\n") != 3 || !strings.Contains(out.String(), "deny pid 2 b") {
		t.Fatalf("exit %d, out:\n%s\nerr: %s", code, out.String(), errb.String())
	}

	// Interrupt stops it (no exit event), and a tampered trail is flagged:
	// the interrupt comes once every line of the file has been printed.
	const tampered = "testdata/sample-tampered.jsonl"
	data, err := os.ReadFile(tampered)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(data, []byte("\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out = newWatch(func(s string) bool { return strings.Count(s, "\n") >= lines })
	errb = newWatch(nil)
	go func() {
		select {
		case <-out.hit:
			cancel()
		case <-ctx.Done():
		}
	}()
	code = RunCLI(ctx, CLIOptions{Follow: true, File: tampered, Poll: 2 * time.Millisecond}, out, errb)
	if code != 1 || !strings.Contains(errb.String(), "chain broken at line 6") {
		t.Fatalf("tampered follow: exit %d, stderr %q, stdout:\n%s", code, errb.String(), out.String())
	}
}
