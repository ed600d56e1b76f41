package ns

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// joinProbe is a Config.JoinThread that moves nothing (the cgroup side has
// its own tests: cgroup's TestV1JoinThread*) but records where and when it
// was called: the spawner thread, that thread's children when it leaves
// (init, or the entry, cloned between join and leave), and how often.
type joinProbe struct {
	mu       sync.Mutex
	joins    int
	joinTid  int
	leaveTid int
	children []string // the spawner thread's children at leave
	joinErr  error    // returned by join
	leaveErr error    // returned by leave
}

func (p *joinProbe) join() (func() error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.joins++
	p.joinTid = unix.Gettid()
	if p.joinErr != nil {
		return nil, p.joinErr
	}
	return func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.leaveTid = unix.Gettid()
		b, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/children", p.leaveTid))
		p.children = strings.Fields(string(b))
		return p.leaveErr
	}, nil
}

// threadAlive tells whether this process still has thread tid.
func threadAlive(tid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
	return err == nil
}

// pidGone tells whether pid no longer exists (not even as a zombie: an
// unreaped init would still be found).
func pidGone(pid string) bool {
	n, _ := strconv.Atoi(pid)
	return unix.Kill(n, 0) == unix.ESRCH
}

// Init's spawner thread joins before the clone and leaves after it, on
// one thread, which stays (init's parent thread: Pdeathsig); init is that
// thread's child, cloned in between, and gets its spec. Both ways of
// starting init: a fork, and the lean init's entry (this test binary has
// none: the entry exits, and init is then forked; the join is tried for
// each). Seen failing with leave called before cmd.Start: "init ... was not
// cloned between join and leave".
func TestJoinThreadAroundClone(t *testing.T) {
	for _, entry := range []bool{false, true} {
		t.Run(fmt.Sprintf("entry=%v", entry), func(t *testing.T) {
			p := &joinProbe{}
			cfg := Config{JoinThread: p.join}
			var st *Starting
			if entry {
				cfg.Entry = true
				st, _ = exeOfCfg(t, copyOfSelf(t, 0o755), cfg)
			} else {
				st = begin(t, cfg)
				defer st.Abort()
				sb, err := st.Finish(&Spec{Hostname: "/"})
				if err != nil {
					t.Fatal(err)
				}
				if m, _, err := sb.Conn.Recv(); err != nil || m.Text != "true" {
					t.Fatalf("init's answer: %q, %v", m.Text, err)
				}
				sb.Wait()
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.joinTid == 0 || p.joinTid != p.leaveTid {
				t.Fatalf("join on thread %d, leave on %d: want one thread, both called", p.joinTid, p.leaveTid)
			}
			if p.joinTid == os.Getpid() {
				t.Errorf("the spawner thread is the main thread")
			}
			want := strconv.Itoa(st.Pid())
			if entry {
				want = "" // the entry, not init, is the clone: any child
			}
			if len(p.children) == 0 || want != "" && !strings.Contains(" "+strings.Join(p.children, " ")+" ", " "+want+" ") {
				t.Errorf("init %s was not cloned between join and leave (the thread's children at leave: %v)", want, p.children)
			}
		})
	}
}

// failingJoinConfig is the Config of the join-failure tests: p's join, no
// cgroup fd, this process's stdio; with entry, init started through a
// copy of this test binary as its own program (its entry exits, and init
// is then forked). The copy's descriptor is closed at the test's end.
func failingJoinConfig(t *testing.T, p *joinProbe, entry bool) Config {
	t.Helper()
	cfg := Config{JoinThread: p.join, CgroupFD: -1, Rootful: os.Getuid() == 0,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if entry {
		fd, err := unix.Open(copyOfSelf(t, 0o755), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Exe = os.NewFile(uintptr(fd), "init-copy")
		t.Cleanup(func() { cfg.Exe.Close() })
		cfg.Entry = true
	}
	return cfg
}

// A failure to move back out (leave) ends the start cleanly: Begin fails
// with a *JoinError, without trying another way (one join), what was
// cloned is killed and reaped, and the spawner thread, which may be left
// in the sandbox's groups, has ended by the time Begin returns. Seen
// failing: without bornIn's undo, "child ... still exists"; with the
// goroutine unlocking its thread before it returns, "thread ... still
// exists"; without joinFailed's wait, "thread ... still exists" too.
func TestJoinThreadLeaveFails(t *testing.T) {
	for _, entry := range []bool{false, true} {
		t.Run(fmt.Sprintf("entry=%v", entry), func(t *testing.T) {
			p := &joinProbe{leaveErr: errors.New("no way back")}
			cfg := failingJoinConfig(t, p, entry)
			st, err := Begin(cfg)
			if err == nil {
				st.Abort()
				t.Fatal("Begin succeeded although the spawner thread could not leave the cgroup")
			}
			if je := (*JoinError)(nil); !errors.As(err, &je) || !strings.Contains(err.Error(), "no way back") {
				t.Fatalf("Begin: %v (%T), want a *JoinError with leave's error", err, err)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.joins != 1 {
				t.Errorf("join called %d times: a failed leave must not be retried another way", p.joins)
			}
			if threadAlive(p.joinTid) {
				t.Errorf("the spawner thread %d still exists after Begin failed: it may be in the sandbox's groups", p.joinTid)
			}
			if len(p.children) == 0 {
				t.Errorf("nothing was cloned before leave")
			}
			for _, c := range p.children {
				if !pidGone(c) {
					t.Errorf("child %s of the spawner still exists (killed and reaped: want gone)", c)
				}
			}
		})
	}
}

// A failure to join starts nothing, tries no other way, and ends the
// thread (half inside, perhaps). Seen failing with the fallback to a fork
// after the entry kept: "join called 2 times".
func TestJoinThreadJoinFails(t *testing.T) {
	for _, entry := range []bool{false, true} {
		t.Run(fmt.Sprintf("entry=%v", entry), func(t *testing.T) {
			p := &joinProbe{joinErr: errors.New("no way in")}
			cfg := failingJoinConfig(t, p, entry)
			kids := childrenOf(os.Getpid())
			st, err := Begin(cfg)
			if err == nil {
				st.Abort()
				t.Fatal("Begin succeeded although the spawner thread could not join the cgroup")
			}
			if je := (*JoinError)(nil); !errors.As(err, &je) {
				t.Fatalf("Begin: %v (%T), want a *JoinError", err, err)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.joins != 1 {
				t.Errorf("join called %d times, want 1", p.joins)
			}
			if threadAlive(p.joinTid) {
				t.Errorf("the spawner thread %d still exists after Begin failed", p.joinTid)
			}
			if now := childrenOf(os.Getpid()); len(now) > len(kids) {
				t.Errorf("children after a failed join: %v (before: %v)", now, kids)
			}
		})
	}
}

// The spawner never runs on the process's main thread when it joins: Go
// never ends that thread (it parks it), so one left in a group would stay
// there. Here the first thread asked is said to be the main one: the join
// must then run on another. Seen failing with goSpawner's hop removed:
// "join ran on the thread said to be the main one".
func TestJoinThreadNeverMain(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	old := onMainThread
	onMainThread = func() bool {
		mu.Lock()
		defer mu.Unlock()
		if asked == 0 {
			asked = unix.Gettid()
			return true
		}
		return false
	}
	defer func() { onMainThread = old }()
	p := &joinProbe{}
	st := begin(t, Config{JoinThread: p.join})
	defer st.Abort()
	mu.Lock()
	main := asked
	mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if main == 0 {
		t.Fatal("goSpawner never asked whether it ran on the main thread")
	}
	if p.joinTid == main {
		t.Fatalf("join ran on the thread said to be the main one (%d)", main)
	}
	if p.joinTid == 0 || p.leaveTid != p.joinTid {
		t.Fatalf("join on %d, leave on %d", p.joinTid, p.leaveTid)
	}
}
