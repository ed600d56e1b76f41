//go:build linux

// End-to-end tests of issue 10, class 8 (part one): jail's state directory
// (old trails, the run registry, everything jail keeps) is never reachable
// from inside, whatever visible path contains it.
package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/procstat"
)

// stateDirProbe attacks jail's state directory d from inside: list, read,
// append to and hard-link a known old trail, read and rewrite a registry
// record, plant a file, move the directory (or its parent) away.
func stateDirProbe(d, trail, record, parent string) string {
	return fmt.Sprintf(`d=%q; t=%q; r=%q; p=%q
ls -A "$d" "$d/audit" "$d/run" 2>/dev/null | grep -q . && echo LISTED
grep -q '"prev"' "$t" 2>/dev/null && echo READ-TRAIL
grep -q SENTINEL "$r" 2>/dev/null && echo READ-REGISTRY
(echo '{"forged":1}' >> "$t") 2>/dev/null && echo APPENDED
(echo forged > "$r") 2>/dev/null && echo REWROTE-REGISTRY
(echo planted > "$d/audit/planted.jsonl") 2>/dev/null && echo PLANTED
(echo planted > "$d/trail.key") 2>/dev/null && echo PLANTED-KEY
ln "$t" "$PWD/hardlink" 2>/dev/null && echo HARDLINKED
mv "$d" "$d.moved" 2>/dev/null && echo MOVED-DIR
mv "$p" "$p.moved" 2>/dev/null && echo MOVED-PARENT
rm -rf "$d/audit" 2>/dev/null; [ -e "$d.moved" ] || [ -e "$p.moved" ] || true
echo PROBE-DONE`, d, trail, record, parent)
}

// oldState makes an "earlier run" in the state directory that XDG_STATE_HOME
// xdg implies: a real trail written by jail, and a registry record.
func oldState(t *testing.T, xdg, home string) (dir, trail, record string) {
	t.Helper()
	dir = filepath.Join(xdg, "jail")
	r := run(t, runOpts{env: []string{"XDG_STATE_HOME=" + xdg, "HOME=" + home}}, "--", "/bin/true")
	mustCode(t, r, 0)
	trails, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
	if len(trails) != 1 {
		t.Fatalf("want one old trail in %s, got %v", dir, trails)
	}
	record = filepath.Join(dir, "run", "000000000000.json")
	os.MkdirAll(filepath.Dir(record), 0o700)
	// A record of a live process (this test), so that jail's own cleanup of
	// dead supervisors' records leaves it: only the sandbox could change it.
	rec := fmt.Sprintf(`{"id":"SENTINEL","pid":%d,"start_tick":%d}`, os.Getpid(), selfStartTick(t))
	if err := os.WriteFile(record, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	// The sandbox's user must be able to reach the directory through its
	// own permissions (as root the agent is host nobody): only jail's mask
	// may stop it, not a mode bit.
	for _, p := range []string{xdg, dir, filepath.Join(dir, "audit"), filepath.Join(dir, "run")} {
		os.Chmod(p, 0o777)
	}
	os.Chmod(trails[0], 0o666)
	os.Chmod(record, 0o666)
	return dir, trails[0], record
}

func TestStateDirUnreachable(t *testing.T) {
	type setup struct {
		ws, xdg string
		flags   []string
	}
	cases := []struct {
		name  string
		setup func(t *testing.T) setup
	}{
		{"workspace contains XDG_STATE_HOME", func(t *testing.T) setup {
			ws := workspace(t)
			return setup{ws: ws, xdg: filepath.Join(ws, "state")}
		}},
		{"--write covers the state directory", func(t *testing.T) setup {
			o := auditDir(t)
			os.MkdirAll(filepath.Join(o, "xdg"), 0o777)
			return setup{ws: workspace(t), xdg: filepath.Join(o, "xdg", "state"), flags: []string{"-w", filepath.Join(o, "xdg")}}
		}},
		{"--read covers the state directory", func(t *testing.T) setup {
			o := auditDir(t)
			os.MkdirAll(filepath.Join(o, "ro"), 0o777)
			return setup{ws: workspace(t), xdg: filepath.Join(o, "ro", "state"), flags: []string{"-r", filepath.Join(o, "ro")}}
		}},
	}
	for _, c := range cases {
		for _, defaultTrail := range []bool{false, true} {
			name := c.name + map[bool]string{false: ", --audit elsewhere", true: ", default trail"}[defaultTrail]
			t.Run(name, func(t *testing.T) {
				s := c.setup(t)
				os.Chmod(s.ws, 0o777)
				home := auditDir(t)
				os.MkdirAll(s.xdg, 0o777)
				dir, trail, record := oldState(t, s.xdg, home)
				before, recBefore := mustRead(t, trail), mustRead(t, record)
				args := append([]string{}, s.flags...)
				if !defaultTrail {
					args = append(args, "--audit", filepath.Join(auditDir(t), "now.jsonl"))
				}
				env := []string{"XDG_STATE_HOME=" + s.xdg, "HOME=" + home}
				r := sh(t, runOpts{dir: s.ws, env: env}, stateDirProbe(dir, trail, record, s.xdg), args...)
				mustCode(t, r, 0)
				if !strings.Contains(r.stdout, "PROBE-DONE") {
					t.Fatalf("probe did not run:\n%s\n%s", r.stdout, r.stderr)
				}
				for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
					if l != "PROBE-DONE" {
						t.Errorf("ATTACK WORKED: %s", l)
					}
				}
				if after := mustRead(t, trail); !bytes.Equal(before, after) {
					t.Errorf("ATTACK WORKED: the old trail changed:\n%s", after)
				}
				if after := mustRead(t, record); !bytes.Equal(recBefore, after) {
					t.Errorf("ATTACK WORKED: the registry record changed: %q", after)
				}
				if _, err := os.Stat(filepath.Join(dir, "audit", "planted.jsonl")); err == nil {
					t.Errorf("ATTACK WORKED: a file was planted in the state directory")
				}
				mustCode(t, auditCLI(t, "--verify", trail), 0)
				if defaultTrail {
					// This run's trail sits in the masked state directory, in
					// a path the sandbox could otherwise write: intact.
					trails, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
					if len(trails) != 2 {
						t.Fatalf("want this run's default trail beside the old one, got %v", trails)
					}
					for _, tr := range trails {
						if tr != trail {
							auditLoad(t, tr)
						}
					}
				}
			})
		}
	}
}

// A --write or --read that names the state directory or a path in it, or a
// workspace inside it, is refused before anything runs.
func TestStateDirRefused(t *testing.T) {
	home := auditDir(t)
	xdg := filepath.Join(auditDir(t), "state")
	dir, trail, _ := oldState(t, xdg, home)
	env := []string{"XDG_STATE_HOME=" + xdg, "HOME=" + home}
	for _, c := range []struct {
		name, flag string
		args       []string
		dir        string
	}{
		{"--write the state directory", "--write", []string{"-w", dir}, ""},
		{"--write a directory in it", "--write", []string{"--write", filepath.Join(dir, "audit")}, ""},
		{"--read an old trail", "--read", []string{"-r", trail}, ""},
		{"--read the registry", "--read", []string{"--read", filepath.Join(dir, "run")}, ""},
		{"workspace inside it", "workspace", nil, filepath.Join(dir, "audit")},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{}, c.args...), "--audit", filepath.Join(auditDir(t), "x.jsonl"), "--", "/bin/cat", trail)
			r := run(t, runOpts{dir: c.dir, env: env}, args...)
			if r.code != 125 {
				t.Fatalf("ATTACK WORKED? exit %d, want 125\nstdout:\n%.300s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, c.flag) || !strings.Contains(r.stderr, "state directory") {
				t.Errorf("the refusal does not name %s and the state directory: %s", c.flag, r.stderr)
			}
		})
	}
}

// selfStartTick is this process's start time in clock ticks (/proc/self/stat
// field 22), as jail's registry records it to tell a live supervisor.
func selfStartTick(t *testing.T) uint64 {
	t.Helper()
	s, err := procstat.Read("", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return s.StartTime
}
