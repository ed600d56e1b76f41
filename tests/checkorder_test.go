//go:build linux

package tests

// The check of the user's values (sandbox.Check: the options, the paths
// and their conflicts with the built-in protections, the network rules,
// the patterns) is made by `jail -- CMD`'s supervisor after init's clone,
// while init starts, instead of before it (issue 16). A mistake must still
// fail the start before anything of the sandbox runs: one line, the same
// words, exit 125, the command never started, and init gone with the
// supervisor.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCheckAfterCloneRefuses(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".local", "state")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(state, "jail")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws := workspace(t)
	marker := filepath.Join(ws, "ran")
	cases := []struct {
		name  string
		flags []string
		want  string // the whole line jail prints
	}{
		{"built-in protection", []string{"--write", filepath.Join(home, ".ssh")},
			"jail: --write " + filepath.Join(home, ".ssh") + ": conflicts with a deny rule: inside default: .ssh/ (deny wins): a built-in protection: choose another path, or --no-default-deny-at " + filepath.Join(home, ".ssh") + " lifts the built-ins there (--no-default-deny all of them)"},
		{"state directory", []string{"--write", filepath.Join(state, "jail")},
			"jail: --write " + filepath.Join(state, "jail") + ": it is, or lies in, jail's state directory (old audit trails, the run registry) " + filepath.Join(state, "jail") + ": the sandbox never sees it; choose another path"},
		{"deny glob", []string{"--deny", "["},
			"jail: --deny [: malformed glob: check the brackets and backslashes of the glob"},
		{"read and deny", []string{"--deny", home, "--read", home},
			"jail: --read " + home + " conflicts with --deny " + home + ": it lies inside the denied path and deny wins: remove one of the two"},
		{"domain", []string{"--net", "allow", "--allow-domain", "bad..x"},
			"jail: --allow-domain bad..x: empty label (two dots in a row, or a leading dot)"},
		// Without a cgroup (an ordinary user), the limits that cannot be
		// enforced are said only once the values passed: the refusal is
		// the one line it was.
		{"with limits", []string{"--memory", "1G", "--cpus", "1", "--write", filepath.Join(home, ".ssh")},
			"jail: --write " + filepath.Join(home, ".ssh") + ": conflicts with a deny rule: inside default: .ssh/ (deny wins): a built-in protection: choose another path, or --no-default-deny-at " + filepath.Join(home, ".ssh") + " lifts the built-ins there (--no-default-deny all of them)"},
	}
	// Anything left of the sandbox when jail has returned (an init it did
	// not kill and reap) becomes this process's child.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Not --quiet: nothing but the mistake may be said.
			r := sh(t, runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state, "JAIL_TRACE=1"}},
				"echo RAN; touch "+marker, c.flags...)
			mustCode(t, r, 125)
			if strings.Contains(r.stdout, "RAN") {
				t.Errorf("the command ran:\n%s", r.stdout)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran: %s exists", marker)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
				if !strings.HasPrefix(l, "jail: supervisor ") && !strings.HasPrefix(l, "jail: init ") && !strings.HasPrefix(l, "jail: directory cache") {
					lines = append(lines, l) // not a trace line
				}
			}
			if len(lines) != 1 || lines[0] != c.want {
				t.Errorf("jail said\n%q\nwant the one line\n%q\nstderr:\n%s", lines, c.want, r.stderr)
			}
			var ws unix.WaitStatus
			if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); err != syscall.ECHILD {
				t.Errorf("a process of the refused start outlived jail (wait4: pid %d, %v)", pid, err)
			}
		})
	}
}

// The check is made after init's clone begins (right after the cgroup's
// step) and before the killed runs' repair and the plan: the trace of a
// start that passes it shows its step between those.
func TestCheckAfterCloneOrder(t *testing.T) {
	home := t.TempDir()
	r := run(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "JAIL_TRACE=1"}}, "--quiet", "--", "/bin/true")
	mustCode(t, r, 0)
	cg, ok1 := traceAt(r.stderr, "supervisor", "cgroup")
	check, ok2 := traceAt(r.stderr, "supervisor", "check")
	killed, ok3 := traceAt(r.stderr, "supervisor", "killed runs")
	plan, ok4 := traceAt(r.stderr, "supervisor", "plan")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("no trace line of the cgroup, the check, the killed runs or the plan (%v %v %v %v):\n%s", ok1, ok2, ok3, ok4, r.stderr)
	}
	if !(cg <= check && check <= killed && killed <= plan) {
		t.Errorf("cgroup at %.2f ms, check at %.2f, killed runs at %.2f, plan at %.2f: the check is not between init's clone and the killed runs:\n%s", cg, check, killed, plan, r.stderr)
	}
}
