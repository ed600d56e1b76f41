package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestCreatePermissionsAndLineShape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "jail", "audit")
	path := filepath.Join(dir, "x.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Exec{PID: 1, Path: "/bin/true", Argv: []string{"true"}, Decision: DecisionAllow})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{dir: 0o700 | fs.ModeDir, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s mode %v, want %v", p, st.Mode(), want)
		}
	}
	b, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(b), &m); err != nil {
		t.Fatal(err)
	}
	if m["seq"] != 1.0 || m["type"] != "exec" || m["prev"] != GenesisPrev || m["path"] != "/bin/true" {
		t.Errorf("line = %s", b)
	}
	if _, err := time.Parse(time.RFC3339Nano, m["ts"].(string)); err != nil || len(m["ts"].(string)) != len("2006-01-02T15:04:05.000000000Z") {
		t.Errorf("ts %q: want RFC 3339 with 9 fraction digits (%v)", m["ts"], err)
	}
}

// Adversarial: a planted file or symlink at the trail path must not be
// appended to or followed.
func TestCreateRefusesExistingAndSymlink(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	os.WriteFile(existing, []byte("keep\n"), 0o600)
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("victim\n"), 0o600)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.jsonl")
	os.Symlink(filepath.Join(dir, "nothere"), dangling)
	for _, p := range []string{existing, link, dangling} {
		w, err := Create(p)
		if err == nil {
			w.Close()
			t.Errorf("Create(%s) succeeded; want refusal", p)
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			t.Errorf("Create(%s) = %v; want errors.Is fs.ErrExist", p, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "victim\n" {
		t.Errorf("symlink target modified: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nothere")); err == nil {
		t.Errorf("dangling symlink was followed and its target created")
	}
}

// 10,000 exec events from 8 goroutines: seq contiguous 1..10000, chain intact.
func TestTenThousandExecsContiguous(t *testing.T) {
	w, path := newTestWriter(t, QueueSize)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1250; i++ {
				w.Record(Exec{PID: g*10000 + i, Path: "/usr/bin/true", Argv: []string{"true"}, Decision: DecisionAllow})
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	res := mustVerifyOK(t, b)
	recs, bad, err := ReadAll(bytes.NewReader(b))
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	if res.Lines != 10000 || res.LastSeq != 10000 || res.Dropped != 0 || len(recs) != 10000 {
		t.Fatalf("lines %d last seq %d dropped %d", res.Lines, res.LastSeq, res.Dropped)
	}
	pids := map[int]bool{}
	for i, r := range recs {
		if r.Seq != uint64(i+1) || r.Type != TypeExec {
			t.Fatalf("line %d: seq %d type %s", i+1, r.Seq, r.Type)
		}
		var e Exec
		if err := r.Decode(&e); err != nil {
			t.Fatal(err)
		}
		pids[e.PID] = true
	}
	if len(pids) != 10000 {
		t.Errorf("%d distinct events, want 10000", len(pids))
	}
	if st := w.Stats(); st.Written != 10000 || st.Head != res.Head {
		t.Errorf("stats %+v, verify head %s", st, res.Head)
	}
}

// The writer must keep up with 10,000 events/s with the production queue:
// 20,000 events paced over two seconds (more than the queue holds, so a
// writer slower than ~2,000 events/s even on a loaded machine fails), zero drops.
func TestSustains10kPerSecond(t *testing.T) {
	w, path := newTestWriter(t, QueueSize)
	const n = 20000
	start := time.Now()
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			if d := time.Until(start.Add(time.Duration(i) * 100 * time.Microsecond)); d > 0 {
				time.Sleep(d)
			}
		}
		w.Record(Net{Decision: DecisionAllow, Proto: "tcp", Address: "198.18.0.1", Port: 443, BytesUp: int64(i)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Dropped != 0 || st.Written != n {
		t.Fatalf("stats %+v: want %d written, 0 dropped", st, n)
	}
	t.Logf("%d events in %v, deepest queue %d of %d", n, time.Since(start).Round(time.Millisecond), st.MaxQueued, QueueSize)
	b, _ := os.ReadFile(path)
	mustVerifyOK(t, b)
}

// Overload: nothing is dropped silently. Every emitted event is either in
// the file or counted by a dropped event that follows.
func TestDropsAreRecorded(t *testing.T) {
	w, path := newTestWriter(t, 4)
	release := make(chan struct{})
	var once sync.Once
	w.beforeWrite = func() { <-release }
	const n = 500
	for i := 0; i < n; i++ {
		w.Record(Exec{PID: i, Path: "/bin/x", Decision: DecisionAllow})
		if i == n/2 {
			once.Do(func() { close(release) })
			time.Sleep(10 * time.Millisecond)
		}
	}
	once.Do(func() { close(release) })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	res := mustVerifyOK(t, b)
	recs, _, _ := ReadAll(bytes.NewReader(b))
	execs := 0
	for _, r := range recs {
		if r.Type == TypeExec {
			execs++
		}
	}
	if res.Dropped == 0 {
		t.Fatal("queue of 4 with a blocked writer dropped nothing; test is not exercising overload")
	}
	if uint64(execs)+res.Dropped != n {
		t.Fatalf("%d written + %d recorded as dropped != %d emitted", execs, res.Dropped, n)
	}
	if w.Stats().Dropped != res.Dropped {
		t.Errorf("Stats().Dropped %d, file says %d", w.Stats().Dropped, res.Dropped)
	}
}

// Adversarial: fields cannot forge the envelope (ts, seq, type, prev).
func TestFieldsCannotForgeEnvelope(t *testing.T) {
	w, path := newTestWriter(t, 16)
	w.Emit("exec", map[string]any{"seq": 999, "type": "exit", "prev": GenesisPrev, "ts": "1999-01-01T00:00:00Z", "field_seq": 1, "path": "/x"})
	type forged struct {
		Seq  int    `json:"seq"`
		Type string `json:"type"`
	}
	w.Emit("deny", forged{Seq: 7, Type: "exit"})
	w.Close()
	b, _ := os.ReadFile(path)
	mustVerifyOK(t, b)
	recs, bad, _ := ReadAll(bytes.NewReader(b))
	if len(bad) != 0 || len(recs) != 2 {
		t.Fatalf("recs %d bad %v", len(recs), bad)
	}
	if recs[0].Seq != 1 || recs[0].Type != "exec" || recs[1].Seq != 2 || recs[1].Type != "deny" {
		t.Fatalf("envelope forged: %s", b)
	}
	if recs[0].TS.Year() != 2026 || string(recs[0].Fields["field_field_seq"]) != "999" || string(recs[0].Fields["field_type"]) != `"exit"` {
		t.Fatalf("renamed fields missing: %s", recs[0].Raw)
	}
	// Duplicate keys would let a naive reader see the forged value.
	for _, l := range lines(b) {
		if bytes.Count(l, []byte(`"seq":`)) != 1 || bytes.Count(l, []byte(`"type":`)) != 1 {
			t.Errorf("duplicate envelope key in %s", l)
		}
	}
}

func TestFieldKinds(t *testing.T) {
	var nilExec *Exec
	tests := []struct {
		name   string
		fields any
		want   string // substring of the line after the envelope
	}{
		{"nil", nil, `"}`},
		{"typed nil", nilExec, `"}`},
		{"struct", Deny{Layer: "landlock", What: "path", Target: "/etc/shadow"}, `","layer":"landlock","what":"path","target":"/etc/shadow"}`},
		{"map", map[string]int{"b": 2, "a": 1}, `","a":1,"b":2}`},
		{"scalar", "hello", `","value":"hello"}`},
		{"empty map", map[string]int{}, `"}`},
		{"unmarshalable", map[string]any{"c": make(chan int)}, `","marshal_error":"json: unsupported type: chan int"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, path := newTestWriter(t, 4)
			w.Emit("deny", tt.fields)
			w.Close()
			b, _ := os.ReadFile(path)
			mustVerifyOK(t, b)
			if !bytes.HasSuffix(b, []byte(tt.want+"\n")) {
				t.Errorf("line %s, want suffix %s", b, tt.want)
			}
		})
	}
}

func TestSyncCloseLifecycle(t *testing.T) {
	w, path := newTestWriter(t, 16)
	w.Emit("signal", Signal{Signal: "SIGTERM", Number: 15, From: "user"})
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	// After Sync returns, the line is in the file (not just queued).
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"SIGTERM"`)) {
		t.Fatalf("Sync returned before the event was written: %q", b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close = %v, want ErrClosed", err)
	}
	w.Emit("exit", nil)
	if st := w.Stats(); st.LateEmits != 1 || st.Written != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func BenchmarkEmit(b *testing.B) {
	w, _ := newTestWriter(b, QueueSize)
	w.now = time.Now
	ev := Exec{PID: 1234, Path: "/usr/bin/git", Argv: []string{"git", "status", "--short"}, Cwd: "/home/u/src/p", Decision: DecisionAllow}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Record(ev)
	}
	b.StopTimer() // caller-side cost only; a burst this fast may overflow the queue
	w.Close()
	b.ReportMetric(float64(w.Stats().Dropped)/float64(b.N), "dropped/op")
}

// BenchmarkWriteThrough measures the end-to-end rate (emit + write(2)):
// each iteration waits for the file, so ns/op is the writer's cost per event.
func BenchmarkWriteThrough(b *testing.B) {
	w, _ := newTestWriter(b, QueueSize)
	w.now = time.Now
	ev := Exec{PID: 1234, Path: "/usr/bin/git", Argv: []string{"git", "status", "--short"}, Cwd: "/home/u/src/p", Decision: DecisionAllow}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Record(ev)
		if i%1000 == 999 {
			w.Sync()
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	st := w.Stats()
	if st.Dropped != 0 {
		b.Fatalf("dropped %d", st.Dropped)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// kill, timeout and exit reach the disk as they are written (README: the
// trail is "fsynced at kill and exit"), with no Sync or Close by the caller;
// ordinary events do not cost an fsync each.
func TestFsyncAtKillTimeoutExit(t *testing.T) {
	for _, ev := range []Event{Kill{By: "user", Reason: "test", Method: "pid1", Signal: "SIGKILL"}, Timeout{LimitMS: 1}, Exit{Code: 137, Reason: "killed"}} {
		t.Run(ev.EventType(), func(t *testing.T) {
			w, _ := newTestWriter(t, QueueSize)
			defer w.Close()
			for i := 0; i < 3; i++ {
				w.Record(Exec{PID: 1, Path: "/bin/true", Decision: DecisionAllow})
			}
			deadline := time.Now().Add(5 * time.Second)
			for w.Stats().Written < 3 {
				if time.Now().After(deadline) {
					t.Fatal("the writer never wrote the execs")
				}
				time.Sleep(time.Millisecond)
			}
			if st := w.Stats(); st.Synced != 0 {
				t.Fatalf("exec events were fsynced one by one: %+v", st)
			}
			w.Record(ev)
			for w.Stats().Synced < 4 {
				if time.Now().After(deadline) {
					t.Fatalf("the %s line was not fsynced: %+v", ev.EventType(), w.Stats())
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
