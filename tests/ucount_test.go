//go:build linux

package tests

// Issue 10, class 9: per-user kernel counters. inotify instances and
// watches (and fanotify groups and marks, namespaces, queued signals,
// mqueue bytes, locked memory) are counted per user, and a sandbox's
// user namespace charges its owner on the host: the invoking user, or
// root when root started jail. An agent exhausting them breaks the host
// user's own services while it runs. The sandbox must be bounded so that
// the host user keeps its own.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ucountHog grabs inotify instances until the kernel refuses, then
// watches on 2000 files from every instance until it refuses again
// (watches count per instance and inode), reports both counts, and holds
// everything until the host side is done.
const ucountHog = `
use strict; use warnings;
$| = 1;
my ($init1, $addw) = ($ENV{NR_INIT1}, $ENV{NR_ADDW});
my @fds;
while (@fds < 100000) {
  my $fd = syscall($init1, 0);
  if ($fd < 0) { print "instances ", scalar(@fds), " stopped: ", ($!+0), "\n"; last; }
  push @fds, $fd;
}
open(my $r, ">", "instances-held") or die; close($r);
mkdir "/tmp/w" or die "mkdir: $!";
for my $i (1..2000) { open(my $f, ">", "/tmp/w/$i") or die "create: $!"; close($f); }
my $n = 0; my $err = 0;
OUTER: for my $fd (@fds) {
  for my $i (1..2000) {
    my $path = "/tmp/w/$i";
    my $wd = syscall($addw, $fd, $path, 0x100);   # IN_CREATE
    if ($wd < 0) { $err = $!+0; last OUTER; }
    $n++;
  }
}
print "watches $n stopped: $err\n";
open($r, ">", "watches-held") or die; close($r);
for (1..600) { last if -e "host-done"; select(undef, undef, undef, 0.05); }
print "hog-done\n";
`

func ucountWaitFile(t *testing.T, p string, cmd *exec.Cmd, out *syncBuffer, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never appeared; jail says:\n%s", filepath.Base(p), out.String())
}

// ucountStart starts the hog and returns a stop function that lets it end
// and waits for jail.
func ucountStart(t *testing.T, ws string) (*exec.Cmd, *syncBuffer, func() string) {
	t.Helper()
	if _, err := exec.LookPath("perl"); err != nil {
		if inCI() {
			t.Fatal("perl is needed for this test")
		}
		t.Skip("no perl")
	}
	out := &syncBuffer{}
	cmd := exec.Command(jail(t), "--setenv", "NR_INIT1="+strconv.Itoa(unix.SYS_INOTIFY_INIT1),
		"--setenv", "NR_ADDW="+strconv.Itoa(unix.SYS_INOTIFY_ADD_WATCH), "--", "perl", "-e", ucountHog)
	cmd.Dir = ws
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() string {
		if !stopped {
			stopped = true
			os.WriteFile(filepath.Join(ws, "host-done"), nil, 0o644)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("jail did not exit")
			}
		}
		return out.String()
	}
	t.Cleanup(func() { stop() })
	return cmd, out, stop
}

// ucountShare checks the agent was bounded, not starved: it still got a
// share agents can work with.
func ucountShare(t *testing.T, got string) {
	t.Helper()
	if !strings.Contains(got, "hog-done") {
		t.Fatalf("agent did not finish:\n%s", got)
	}
	var inst, watches, e1, e2 int
	for _, l := range strings.Split(got, "\n") {
		fmt.Sscanf(l, "instances %d stopped: %d", &inst, &e1)
		fmt.Sscanf(l, "watches %d stopped: %d", &watches, &e2)
	}
	t.Logf("agent got %d inotify instances (errno %d), %d watches (errno %d)", inst, e1, watches, e2)
	if inst < 8 || watches < 8000 {
		t.Errorf("the sandbox's share is too small for agents: %d inotify instances, %d watches", inst, watches)
	}
}

// While the agent holds every inotify instance it could get, the host
// user (this test process: jail's invoker, root or not) still opens one.
func TestUcountInotifyInstances(t *testing.T) {
	ws := workspace(t)
	cmd, out, stop := ucountStart(t, ws)
	ucountWaitFile(t, filepath.Join(ws, "instances-held"), cmd, out, 30*time.Second)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("host inotify_init1 as uid %d while the sandbox runs: %v\njail says:\n%s", os.Getuid(), err, out.String())
	}
	unix.Close(fd)
	ucountShare(t, stop())
}

// The same for watches: the host user's instance exists before the run
// (so only watches are at stake); the agent watches 2000 files from every
// instance it gets until the kernel refuses; the host then adds watches.
func TestUcountInotifyWatches(t *testing.T) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("host inotify_init1 before the run: %v", err)
	}
	defer unix.Close(fd)
	ws := workspace(t)
	cmd, out, stop := ucountStart(t, ws)
	ucountWaitFile(t, filepath.Join(ws, "watches-held"), cmd, out, 60*time.Second)
	dir := t.TempDir()
	for i := 0; i < 8; i++ {
		p := filepath.Join(dir, strconv.Itoa(i))
		os.WriteFile(p, nil, 0o644)
		if _, err := unix.InotifyAddWatch(fd, p, unix.IN_CREATE); err != nil {
			t.Fatalf("host inotify_add_watch #%d as uid %d while the sandbox runs: %v\njail says:\n%s", i, os.Getuid(), err, out.String())
		}
	}
	ucountShare(t, stop())
}

// The bounds are visible: --dry-run prints them and the audit trail's
// start event records them.
func TestUcountBoundsReported(t *testing.T) {
	ws := workspace(t)
	r := run(t, runOpts{dir: ws}, "--dry-run", "--", "/bin/true")
	mustCode(t, r, 0)
	for _, want := range []string{"max_inotify_instances", "max_inotify_watches", "max_user_namespaces", "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_MEMLOCK"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--dry-run lacks %q:\n%s", want, r.stdout)
		}
	}
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	r = run(t, runOpts{dir: ws}, "--audit", trail, "--", "/bin/true")
	mustCode(t, r, 0)
	b, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	var start struct {
		Policy struct {
			Plan struct {
				Counters []struct {
					Name  string `json:"name"`
					Value uint64 `json:"value"`
					Host  uint64 `json:"host"`
				} `json:"counters"`
			} `json:"plan"`
		} `json:"policy"`
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(first), &start); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range start.Policy.Plan.Counters {
		names[c.Name] = true
		if c.Value > c.Host {
			t.Errorf("counter %s: sandbox bound %d above the host's %d", c.Name, c.Value, c.Host)
		}
	}
	for _, want := range []string{"max_inotify_instances", "max_inotify_watches", "RLIMIT_SIGPENDING"} {
		if !names[want] {
			t.Errorf("start event lacks counter %s: %+v", want, start.Policy.Plan.Counters)
		}
	}
}

// Inside, the limits are the sandbox user namespace's own, and the agent
// cannot raise them.
func TestUcountLimitsInside(t *testing.T) {
	ws := workspace(t)
	r := sh(t, runOpts{dir: ws}, `cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_user_namespaces; echo 100000 > /proc/sys/user/max_inotify_instances && echo raised; cat /proc/sys/user/max_inotify_instances; true`)
	mustCode(t, r, 0)
	host, err := os.ReadFile("/proc/sys/user/max_inotify_instances")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(r.stdout)
	if len(lines) < 3 {
		t.Fatalf("unexpected output:\n%s\n%s", r.stdout, r.stderr)
	}
	if lines[0] == strings.TrimSpace(string(host)) || lines[1] == "2147483647" {
		t.Errorf("inside, max_inotify_instances %s (host %s), max_user_namespaces %s: not the sandbox's own bounds", lines[0], strings.TrimSpace(string(host)), lines[1])
	}
	if strings.Contains(r.stdout, "raised") || lines[2] != lines[0] {
		t.Errorf("the agent changed its own bounds:\n%s", r.stdout)
	}
}
