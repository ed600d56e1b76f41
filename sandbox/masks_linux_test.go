package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/maskwatch"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// The watched mounts: masks, read-only binds and pins in a writable tree,
// and host sockets' masks anywhere; not binds, not masks in the read-only
// view or over a cache of jail's own.
func TestWatchedMasks(t *testing.T) {
	pl := &Plan{Writable: []string{"/ws"}, Mounts: []ns.Mount{
		{Kind: ns.KindBind, Path: "/ws", Dir: true},
		{Kind: ns.KindPin, Path: "/ws/.git", Dir: true, Why: "pinned"},
		{Kind: ns.KindReadOnly, Path: "/ws/.git/config", Why: "git: config"},
		{Kind: ns.KindMask, Path: "/ws/.env", Why: "secret"},
		{Kind: ns.KindMask, Path: "/etc/shadow", Why: "host secret"},
		{Kind: ns.KindMask, Path: "/var/run/x.sock", Why: whyHostSocket},
		{Kind: ns.KindMask, Path: "/ws/cache", Source: "/state/cache", Why: "cache"},
		{Kind: ns.KindMask, Path: "/wsx/.env", Why: "secret"},
	}}
	got := watchedMasks(pl)
	want := []string{"/ws/.git", "/ws/.git/config", "/ws/.env", "/var/run/x.sock"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i, p := range got {
		if p.Path != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// --end-if-unmasked fails closed: a mask watch that cannot start (the
// user's inotify instances ran out: other programs, other runs) refuses
// the run instead of running it with nothing to end it. Without the flag
// it is said and the run goes on. On main's code the run went on with the
// flag (seen as jailtest with its 128 inotify instances held by another
// process: "second run ran", exit 0).
func TestEndIfUnmaskedWatchFails(t *testing.T) {
	saved := startMasks
	defer func() { startMasks = saved }()
	startMasks = func(maskwatch.Config) (*maskwatch.Watch, error) {
		return nil, errors.New("inotify_init1: too many open files")
	}
	pl := &Plan{Writable: []string{"/ws"}, Mounts: []ns.Mount{{Kind: ns.KindMask, Path: "/ws/.env", Why: "secret"}}}
	for _, end := range []bool{false, true} {
		var buf bytes.Buffer
		r := &runner{pol: &policy.Policy{EndIfUnmasked: end}, plan: pl}
		r.notes = notice.New(&buf, notice.Options{})
		err := r.startMaskWatch()
		if end && (err == nil || !strings.Contains(err.Error(), "--end-if-unmasked")) {
			t.Errorf("--end-if-unmasked: the run starts unwatched (err %v)", err)
		}
		if !end && (err != nil || !strings.Contains(buf.String(), "not watched")) {
			t.Errorf("without the flag: err %v, said %q", err, buf.String())
		}
	}
}

// --end-if-unmasked kills before it says: the notice may wait for the
// user's terminal (the urgent line on a relayed screen takes the screen's
// lock, which a write to a stalled terminal holds), and the kill must not.
// Seen failing with the notice said first: the sandbox lived until the
// terminal's write returned.
func TestEndIfUnmaskedKillsBeforeItSays(t *testing.T) {
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	exited := make(chan struct{})
	go func() { sleep.Wait(); close(exited) }()
	r := &runner{pol: &policy.Policy{EndIfUnmasked: true}, sb: &ns.Sandbox{Pid: sleep.Process.Pid}}
	r.notes = notice.New(io.Discard, notice.Options{})
	r.notes.Hold()
	release := make(chan struct{})
	r.notes.SetUrgent(func(string) { <-release }) // a stalled terminal
	said := make(chan struct{})
	go func() {
		r.unmasked(maskwatch.Fall{Path: maskwatch.Path{Path: "/ws/.env", Kind: ns.KindMask, Rule: "secret", Hides: true}, How: "renamed over"})
		close(said)
	}()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("the sandbox was not killed while the notice waited for the terminal")
	}
	close(release)
	<-said
}

// Host sockets are masked wherever any local user binds them, and that
// user can bind them again (hundreds, in a loop): each fall was an urgent
// line with a bell on the user's screen, --quiet or not (review14c: 300
// sockets of another user bound again gave 300 lines). One owner's socket
// falls are one urgent notice, counted in the summary; another mask's fall
// (the workspace's .env) still has its own. Seen failing on main: 51
// urgent lines.
func TestUnmaskedSocketsOneLinePerOwner(t *testing.T) {
	dir := t.TempDir()
	r := &runner{pol: &policy.Policy{}}
	var summary strings.Builder
	r.notes = notice.New(&summary, notice.Options{Quiet: true})
	r.notes.Hold()
	var lines []string
	r.notes.SetUrgent(func(l string) { lines = append(lines, l) })
	for i := range 50 {
		p := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		r.unmasked(maskwatch.Fall{Path: maskwatch.Path{Path: p, Kind: ns.KindMask, Rule: whyHostSocket, Hides: true}, How: "created after its removal"})
	}
	r.unmasked(maskwatch.Fall{Path: maskwatch.Path{Path: "/ws/.env", Kind: ns.KindMask, Rule: "secret", Hides: true}, How: "renamed over"})
	if len(lines) != 2 || !strings.Contains(lines[0], "/s0 ") || !strings.Contains(lines[1], "/ws/.env") {
		t.Errorf("%d urgent lines, want 2 (one for the owner's sockets, one for .env):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	// A socket holds no secret (review14c: "if that file holds a
	// secret" said of a socket); its line says what fell: a way to the
	// process listening there. Seen failing on main's wording.
	if len(lines) == 2 && (strings.Contains(lines[0], "secret") || !strings.Contains(lines[0], "connect to the socket")) {
		t.Errorf("a socket's fall worded for a file: %s", lines[0])
	}
	r.notes.Release("")
	if !strings.Contains(summary.String(), "(50 times)") || !strings.Contains(summary.String(), "/ws/.env") {
		t.Errorf("the summary does not count the sockets' falls or lost .env's:\n%s", summary.String())
	}
}

// TestEndIfUnmaskedOtherUsersSocket (socks15): host sockets are masked
// wherever any local user binds them, and any local user can bind theirs
// again (a daemon's restart, or on purpose): with --end-if-unmasked that
// fall ended the run, so every local user could end the user's run at
// will. Another user's socket now is said, not acted on (what the sandbox
// reaches there is that user's own process); root's and the user's own,
// a link to root's, and, started by root, nobody's (the agent's host uid)
// still end it, and so does a masked secret's fall. Seen failing on main's
// code: uid 4242's socket killed the run. Owners are stubbed (socketUID,
// hostUID), so it runs the same as root and as a user.
func TestEndIfUnmaskedOtherUsersSocket(t *testing.T) {
	dir := t.TempDir()
	oldUID, oldHost := socketUID, hostUID
	t.Cleanup(func() { socketUID, hostUID = oldUID, oldHost })
	socketUID = func(fi os.FileInfo) uint32 {
		switch {
		case strings.HasPrefix(fi.Name(), "other"):
			return 4242
		case strings.HasPrefix(fi.Name(), "nobody"):
			return ns.NobodyID
		case strings.HasPrefix(fi.Name(), "root"):
			return 0
		}
		return uint32(hostUID()) // own.sock: the starter's
	}
	for _, name := range []string{"other.sock", "nobody.sock", "root.sock", "own.sock"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "root.sock"), filepath.Join(dir, "link.sock")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		starter    int
		theirs     bool // the masked socket was another user's at the start
		ends       bool
	}{
		{"another user's socket", "other.sock", 1000, true, false},
		{"another user's socket, started by root", "other.sock", 0, true, false},
		{"gone again", "gone.sock", 1000, true, false},
		{"nobody's, started by a user", "nobody.sock", 1000, true, false},
		{"nobody's, started by root (the agent's uid)", "nobody.sock", 0, false, true},
		{"root's", "root.sock", 1000, false, true},
		{"a link to root's", "link.sock", 1000, true, true},
		{"the user's own", "own.sock", 1000, false, true},
		{"a masked secret", ".env", 1000, false, true},
		// review15d: maskwatch says a path once, so what is there when
		// it is said is not the last word: root's or the user's daemon
		// binds there next, unsaid. Where root's or the user's socket
		// was masked, the run ends whatever is there by then. Seen
		// failing on main's code (0c3548a): neither ended the run.
		{"root's, gone again", "gone.sock", 1000, false, true},
		{"root's, another user's file there now", "other.sock", 1000, false, true},
		{"the agent's (started by root), gone again", "gone.sock", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostUID = func() int { return tc.starter }
			sleep := exec.Command("sleep", "60")
			if err := sleep.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { sleep.Process.Kill(); sleep.Wait() }()
			r := &runner{pol: &policy.Policy{EndIfUnmasked: true}, sb: &ns.Sandbox{Pid: sleep.Process.Pid}, plan: &Plan{}}
			if tc.theirs {
				r.plan.otherSockets = map[string]bool{filepath.Join(dir, tc.path): true}
			}
			r.notes = notice.New(io.Discard, notice.Options{})
			r.notes.Hold()
			var lines []string
			r.notes.SetUrgent(func(l string) { lines = append(lines, l) })
			rule := whyHostSocket
			if tc.path == ".env" {
				rule = "secret"
			}
			r.unmasked(maskwatch.Fall{Path: maskwatch.Path{Path: filepath.Join(dir, tc.path), Kind: ns.KindMask, Rule: rule, Hides: true}, How: "created after its removal"})
			if ended := r.killedBy != ""; ended != tc.ends {
				t.Errorf("run ended: %v, want %v; said: %q", ended, tc.ends, lines)
			}
			if !tc.ends && (len(lines) != 1 || !strings.Contains(lines[0], "not ending the run")) {
				t.Errorf("the fall left acted on is not said as such: %q", lines)
			}
		})
	}
}
