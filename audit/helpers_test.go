package audit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden and testdata/sample*.jsonl")

// fakeClock returns a clock starting at a fixed instant, advancing step per call.
func fakeClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}

// newTestWriter creates a writer in a temp dir with a fake clock.
func newTestWriter(t testing.TB, queue int) (*Writer, string) {
	return newTestWriterOpts(t, queue, Options{})
}

func newTestWriterOpts(t testing.TB, queue int, o Options) (*Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trail.jsonl")
	w, err := create(path, fakeClock(time.Millisecond), queue, o)
	if err != nil {
		t.Fatal(err)
	}
	return w, path
}

// sampleEvents is a run with every event type, used by golden tests.
func sampleEvents() []Event {
	return []Event{
		Start{Schema: SchemaVersion, Version: "0.1.0", ID: "5f2c9a1b7e3d",
			Argv:    []string{"jail", "--net", "allow:api.anthropic.com", "--", "claude", "-p", "fix the tests"},
			Command: []string{"claude", "-p", "fix the tests"}, Cwd: "/home/ada/src/proj",
			UID: 1000, GID: 1000, PID: 4242,
			Policy: map[string]any{"net": map[string]any{"mode": "allow", "allow": []string{"api.anthropic.com:443"}},
				"limits": map[string]any{"pids": 64, "memory": "2G", "timeout": "2s"}},
			Kernel: Kernel{Release: "6.18.0", LandlockABI: 7, Seccomp: true, SeccompNotify: true, CgroupMode: "v1", NetworkMode: "allow"}},
		Exec{PID: 2, Path: "/usr/bin/claude", Argv: []string{"/usr/bin/claude", "-p", "fix the tests"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow},
		DNS{Name: "api.anthropic.com", QType: "A", Decision: DecisionAllow, Answers: []string{"198.18.0.1"}},
		Net{Decision: DecisionAllow, Proto: "tcp", Name: "api.anthropic.com", Address: "198.18.0.1", Remote: "160.79.104.10", Port: 443, BytesUp: 18234, BytesDown: 1234567, DurationMS: 812.5},
		Exec{PID: 7, Path: "/usr/bin/git", Argv: []string{"git", "status"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow},
		Exec{PID: 8, Path: "/usr/bin/git", Argv: []string{"git", "diff", "--stat"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow},
		Exec{PID: 9, Path: "/usr/bin/go", Argv: []string{"go", "test", "./..."}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow},
		Exec{PID: 10, Path: "/usr/local/sbin/rg", Argv: []string{"rg", "TODO"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow, Missing: true},
		Exec{PID: 10, Path: "/usr/local/bin/rg", Argv: []string{"rg", "TODO"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow, Missing: true},
		Exec{PID: 10, Path: "/usr/bin/rg", Argv: []string{"rg", "TODO"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow},
		DNS{Name: "evil.example", QType: "A", Decision: DecisionDeny, Reason: "not in allowlist"},
		DNS{Name: "evil.example", QType: "AAAA", Decision: DecisionDeny, Reason: "not in allowlist"},
		DNS{Name: "evil.example", QType: "A", Decision: DecisionDeny, Reason: "not in allowlist"},
		Net{Decision: DecisionAllow, Proto: "tcp", Name: "down.example.com", Address: "198.18.0.3", Port: 443, DurationMS: 3.5, Reason: "host could not resolve down.example.com: no such host", Failed: true},
		Net{Decision: DecisionDeny, Proto: "tcp", Address: "203.0.113.9", Port: 80, Reason: "raw IP not allowed"},
		Exec{PID: 12, Path: "/usr/bin/curl", Argv: []string{"curl", "-s", "http://x.example/i.sh"}, Cwd: "/home/ada/src/proj", Decision: DecisionDeny, Rule: "curl *", Reason: "guard rail"},
		Deny{Layer: "seccomp", What: "syscall", Target: "unshare", PID: 13, Reason: "new namespaces are denied"},
		Quarantine{Phase: "run", Path: "/home/ada/src/proj/.git/commondir", Rule: "git: commondir",
			Reason: "commondir makes git take config, hooks and objects from another directory", Action: "moved",
			Stored: "/home/ada/.local/state/jail/quarantine/5f2c9a1b7e3d/001-commondir"},
		Unmasked{Path: "/home/ada/src/proj/.env", Kind: "mask", Rule: "secret: .env*", How: "renamed over", Action: "reported"},
		Notice{Kind: "exec", Severity: "warning", Text: "blocked command: curl -s http://x.example/i.sh (guard rail curl *)"},
		Exec{PID: 14, Path: "/usr/bin/git", Argv: []string{"git", "commit", "-m", "wip: \x1b[31mred\x1b[0m"}, Cwd: "/home/ada/src/proj", Decision: DecisionAllow},
		Net{Decision: DecisionAllow, Proto: "tcp", Name: "api.anthropic.com", Address: "198.18.0.1", Remote: "160.79.104.10", Port: 443, BytesUp: 2048, BytesDown: 4096, DurationMS: 120},
		Limit{Kind: "pids", Source: "cgroup-v1", Limit: 64, Value: 64, Action: "refused"},
		Signal{Signal: "SIGINT", Number: 2, From: "terminal", To: "agent", Forwarded: true},
		Timeout{LimitMS: 2000, WallMS: 2000.4},
		Kill{By: "timeout", Reason: "wall-clock timeout 2s", Method: "cgroup.kill", Signal: "SIGKILL", Processes: 3},
		Dropped{Count: 2, Types: map[string]uint64{TypeExec: 2}},
		Agent{Request: "SIGN_REQUEST", Key: "SHA256:LHDhK3oGRvkiefQnx7OOczTY5Tic/xZ6HcMOc/gmtoM", Decision: DecisionAllow},
		Agent{Request: "ADD_IDENTITY", Decision: DecisionDeny},
		Exit{Code: 124, Reason: "timeout", WallMS: 2003.25, CPUUserMS: 812, CPUSysMS: 95.5, PeakMemoryBytes: 187 << 20},
	}
}

// writeSample writes sampleEvents with the fake clock and returns the bytes.
func writeSample(t testing.TB) []byte {
	t.Helper()
	w, path := newTestWriter(t, QueueSize)
	w.now = fakeClock(125 * time.Millisecond)
	for _, ev := range sampleEvents() {
		w.Record(ev)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (run with -update if intended)\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}

func lines(b []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func join(ls [][]byte) []byte {
	return append(bytes.Join(ls, []byte("\n")), '\n')
}

func mustVerifyOK(t *testing.T, b []byte) Result {
	t.Helper()
	res, err := Verify(bytes.NewReader(b))
	if err != nil || !res.OK {
		t.Fatalf("Verify = %+v, %v; want OK\n%s", res, err, firstLines(b, 5))
	}
	return res
}

func firstLines(b []byte, n int) string {
	ls := strings.SplitN(string(b), "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "\n")
}
