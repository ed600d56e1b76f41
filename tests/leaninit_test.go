//go:build linux

// End-to-end tests of the lean init (package initbin, session 7): jail built
// by make build execs its embedded init program from a checked copy in its
// state directory; no sandbox can write or plant that copy, whatever it may
// write; and that init behaves exactly as jail's own binary as init.
package tests

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var initProgramLine = regexp.MustCompile(`(?m)^jail: supervisor init program: (.*)$`)

// leanHome is a HOME whose state directory the copy may live in: every
// directory above it must be writable by its owner only, or sticky, and
// /tmp may be neither (it is 0777 on the CI machine): /var/tmp (1777).
func leanHome(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "leaninit-home-")
	if err != nil {
		skipOrFailLean(t, "no /var/tmp for a trusted state directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	// Started by root, the sandbox is host nobody: it must reach $HOME
	// through its own permissions for only jail's masks to stop it.
	os.Chmod(d, 0o755)
	return d
}

func skipOrFailLean(t *testing.T, format string, a ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI=true, cannot skip: "+format, a...)
	}
	t.Skipf(format, a...)
}

// initProgram runs jail with JAIL_TRACE and returns the result and which
// program init was (the trace's "init program" line).
func initProgram(t *testing.T, home string, args ...string) (result, string) {
	t.Helper()
	r := run(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME=", "JAIL_TRACE=1"}}, args...)
	m := initProgramLine.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no init program line in the trace (exit %d):\n%s", r.code, r.stderr)
	}
	return r, m[1]
}

// leanCopy makes the copy in home's state directory (the first run
// extracts it and execs jail itself; the second execs the copy) and
// returns its path.
func leanCopy(t *testing.T, home string) string {
	t.Helper()
	r, how := initProgram(t, home, "--quiet", "--", "/bin/true")
	mustCode(t, r, 0)
	if strings.Contains(how, "built without the lean init") {
		skipOrFailLean(t, "JAIL_BIN has no lean init (build it with make build): %s", how)
	}
	if !strings.Contains(how, "extracted the lean init") {
		t.Fatalf("the first run did not extract the lean init: %s", how)
	}
	r, how = initProgram(t, home, "--quiet", "--", "/bin/echo", "lean-ok")
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "lean-ok") {
		t.Fatalf("the agent did not run under the lean init: %q", r.stdout)
	}
	const pre = "the lean init "
	if !strings.HasPrefix(how, pre) {
		t.Fatalf("the second run did not exec the copy: %s", how)
	}
	p := strings.TrimPrefix(how, pre)
	if filepath.Dir(p) != filepath.Join(home, ".local", "state", "jail") {
		t.Fatalf("the copy %s is not in the state directory", p)
	}
	return p
}

// The agent attacks the copy: rewrite, truncate, chmod, replace it, plant
// the next build's name, move the state directory or any parent away
// (to put a directory of its own there), and reach init's program through
// /proc/1/exe. With --write on $HOME or on the state directory's parents.
func TestLeanInitCopyUnreachable(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags func(home string) []string
	}{
		{"--write $HOME", func(h string) []string { return []string{"-w", h, "--allow-writable-home"} }},
		{"--write ~/.local", func(h string) []string { return []string{"-w", filepath.Join(h, ".local")} }},
		{"--write ~/.local/state", func(h string) []string { return []string{"-w", filepath.Join(h, ".local", "state")} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := leanHome(t)
			cp := leanCopy(t, home)
			before := mustRead(t, cp)
			d, name := filepath.Dir(cp), filepath.Base(cp)
			next := "init-ffffffffffffffff"
			probe := fmt.Sprintf(`d=%q; c=%q; n=%q; h=%q
(echo x >> "$d/$c") 2>/dev/null && echo APPENDED
(: > "$d/$c") 2>/dev/null && echo TRUNCATED
chmod 0777 "$d/$c" 2>/dev/null && echo CHMODDED
(echo x > "$d/$n") 2>/dev/null && echo PLANTED
ln -s /bin/sh "$d/$n" 2>/dev/null && echo SYMLINKED
cp /bin/sh "$d/$c.new" 2>/dev/null && mv -f "$d/$c.new" "$d/$c" 2>/dev/null && echo REPLACED
mv "$d" "$d.x" 2>/dev/null
mv "$h/.local/state" "$h/.local/state.x" 2>/dev/null
mv "$h/.local" "$h/.local.x" 2>/dev/null
# Moved in the sandbox's own view at most (checked on the host below); a
# state directory of its own where the moved one was:
mkdir -p "$d" 2>/dev/null && cp /bin/sh "$d/$c" 2>/dev/null && chmod 0755 "$d/$c" 2>/dev/null
(cat /proc/1/exe > /dev/null) 2>/dev/null && echo READ-INIT-EXE
(echo x >> /proc/1/exe) 2>/dev/null && echo WROTE-INIT-EXE
readlink /proc/1/exe 2>/dev/null | grep -q init- && echo SAW-INIT-EXE
echo PROBE-DONE`, d, name, next, home)
			// The trail outside $HOME: only the state directory's mask
			// stands between the agent and the copy.
			trail := filepath.Join(auditDir(t), "trail.jsonl")
			r, how := initProgram(t, home, append(c.flags(home), "--quiet", "--audit", trail, "--", "/bin/sh", "-c", probe)...)
			mustCode(t, r, 0)
			if !strings.HasPrefix(how, "the lean init ") {
				t.Errorf("the attack run did not exec the copy: %s", how)
			}
			if !strings.Contains(r.stdout, "PROBE-DONE") {
				t.Fatalf("probe did not run:\n%s\n%s", r.stdout, r.stderr)
			}
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if l != "PROBE-DONE" {
					t.Errorf("ATTACK WORKED: %s", l)
				}
			}
			if after, err := os.ReadFile(cp); err != nil || !bytes.Equal(before, after) {
				t.Fatalf("ATTACK WORKED: the copy changed (%v)", err)
			}
			if st, err := os.Lstat(cp); err != nil || st.Mode() != 0o755 {
				t.Fatalf("ATTACK WORKED: the copy's mode: %v (%v)", st.Mode(), err)
			}
			if m, _ := filepath.Glob(filepath.Join(d, "init-*")); len(m) != 1 {
				t.Fatalf("ATTACK WORKED: planted beside the copy: %v", m)
			}
			for _, p := range []string{d + ".x", filepath.Join(home, ".local", "state.x"), filepath.Join(home, ".local.x")} {
				if _, err := os.Lstat(p); err == nil {
					t.Fatalf("ATTACK WORKED: %s exists", p)
				}
			}
			r, how = initProgram(t, home, "--quiet", "--", "/bin/true")
			mustCode(t, r, 0)
			if how != "the lean init "+cp {
				t.Errorf("the run after the attack: %s", how)
			}
		})
	}
}

// The copy sits in the page cache in 2 MiB folios where a file written
// 2 MiB at a time does (initbin's writeBig): every start of the lean init
// then maps its code and read-only data by 2 MiB page-table entries where
// a segment holds a whole 2 MiB (package prefault), not 4 KiB ones. Seen
// failing with the copy written by one Write of the embedded program:
// 2048 of 4096 KiB.
func TestLeanInitCopyInLargeFolios(t *testing.T) {
	home := leanHome(t)
	// Controls written 2 MiB at a time beside the copy, before and after it.
	writeBig(t, filepath.Join(home, "control-before"))
	cp := leanCopy(t, home)
	writeBig(t, filepath.Join(home, "control-after"))
	fi, err := os.Stat(cp)
	if err != nil {
		t.Fatal(err)
	}
	size := int(fi.Size()) &^ (2<<20 - 1) // its whole 2 MiB ranges
	if size == 0 {
		t.Fatalf("the copy is %d bytes: no whole 2 MiB to check", fi.Size())
	}
	if filePmdMapped(t, filepath.Join(home, "control-before")) != 4096 || filePmdMapped(t, filepath.Join(home, "control-after")) != 4096 {
		t.Logf("a file written 2 MiB at a time is not in 2 MiB folios here (a kernel or file system without large folios, or memory too fragmented for them): the copy's page cache is not checked")
		return
	}
	if n := filePmdMappedN(t, cp, size); n != size>>10 {
		t.Errorf("the lean init's copy: %d of its %d KiB in whole 2 MiB ranges mapped by 2 MiB entries (written in smaller folios?)", n, size>>10)
	}
}

// Each start of the lean init maps the whole 2 MiB ranges of its read-only
// data by 2 MiB page-table entries, read from the running init's smaps:
// the copy's page cache is in 2 MiB folios (initbin's writeBig) and make
// build lays the segment out to hold such a range (pad.go); an aligned
// 2 MiB folio is then mapped whole, with or without package prefault's
// huge-page advice. Seen failing with main's binary (its copy written by
// one Write): 0 of 2048 KiB.
func TestLeanInitReadOnlyDataIn2MiBEntries(t *testing.T) {
	home := leanHome(t)
	writeBig(t, filepath.Join(home, "control-before"))
	cp := leanCopy(t, home)
	writeBig(t, filepath.Join(home, "control-after"))
	if filePmdMapped(t, filepath.Join(home, "control-before")) != 4096 || filePmdMapped(t, filepath.Join(home, "control-after")) != 4096 {
		t.Logf("a file written 2 MiB at a time is not in 2 MiB folios here: init's mappings are not checked")
		return
	}
	f, err := elf.Open(cp)
	if err != nil {
		t.Fatal(err)
	}
	want := 0 // KiB of the read-only segment in whole 2 MiB ranges
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags == elf.PF_R {
			start := (p.Vaddr + 2<<20 - 1) &^ (2<<20 - 1)
			end := (p.Vaddr + p.Memsz + 4<<10 - 1) &^ (4<<10 - 1) &^ (2<<20 - 1)
			if end > start {
				want = int(end-start) >> 10
			}
		}
	}
	f.Close()
	if want == 0 {
		t.Logf("the copy's read-only segment holds no whole 2 MiB range (initbin's TestEmbeddedProgramReadOnlyHolds2MiB says why)")
		return
	}
	if got := initReadOnlyPmd(t, home, cp, want); got != want {
		t.Errorf("init's read-only data: %d KiB mapped by 2 MiB entries, want %d (its whole 2 MiB ranges)", got, want)
	}
}

// initReadOnlyPmd starts a sandbox that sleeps and returns how many KiB of
// its init's read-only mappings of cp 2 MiB entries map (polled until it
// is want, for up to 2 s).
func initReadOnlyPmd(t *testing.T, home, cp string, want int) int {
	t.Helper()
	cmd := exec.Command(jail(t), "--quiet", "--", "/bin/sleep", "3")
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	got, seen := -1, false
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && got != want; time.Sleep(20 * time.Millisecond) {
		for _, pid := range children(cmd.Process.Pid) {
			if argv0, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !bytes.HasPrefix(argv0, []byte("jail:init\x00")) {
				continue
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
			if err != nil {
				t.Fatalf("init's smaps: %v", err)
			}
			seen, got = true, readOnlyPmd(string(b), cp)
		}
	}
	if !seen {
		t.Fatal("no running init (argv[0] jail:init) among jail's children")
	}
	return got
}

// readOnlyPmd sums FilePmdMapped over smaps' read-only, not executable
// mappings of path.
func readOnlyPmd(smaps, path string) int {
	n, in := 0, false
	for _, l := range strings.Split(smaps, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4:
			in = len(f) == 6 && f[5] == path && f[1] == "r--p"
		case in && len(f) >= 2 && f[0] == "FilePmdMapped:":
			k, _ := strconv.Atoi(f[1])
			n += k
		}
	}
	return n
}

// A copy tampered with on the host (here: made group-writable, then
// truncated) is refused and replaced, never exec'd; the runs meanwhile
// exec jail itself and work.
func TestLeanInitTamperedCopyReplaced(t *testing.T) {
	home := leanHome(t)
	cp := leanCopy(t, home)
	good := mustRead(t, cp)
	for _, tamper := range []func(){
		func() { os.Chmod(cp, 0o775) },
		func() { os.Truncate(cp, int64(len(good)-1)) },
	} {
		tamper()
		r, how := initProgram(t, home, "--quiet", "--", "/bin/echo", "ran")
		mustCode(t, r, 0)
		if !strings.Contains(how, "refused the lean init") || strings.HasPrefix(how, "the lean init") {
			t.Fatalf("ATTACK WORKED? a tampered copy: %s", how)
		}
		if !strings.Contains(r.stdout, "ran") {
			t.Fatalf("the run with jail itself as init: %q", r.stdout)
		}
		if after := mustRead(t, cp); !bytes.Equal(after, good) {
			t.Fatal("the tampered copy was not replaced")
		}
		if _, how := initProgram(t, home, "--quiet", "--", "/bin/true"); how != "the lean init "+cp {
			t.Fatalf("after the replacement: %s", how)
		}
	}
}

// The lean init is init: what the agent sees and the errors a failing
// step gives are those of jail's own binary as init (a state directory
// that is group-writable makes jail exec itself).
func TestLeanInitSameAsJail(t *testing.T) {
	lean := leanHome(t)
	leanCopy(t, lean)
	own := leanHome(t)
	os.MkdirAll(filepath.Join(own, ".local", "state", "jail"), 0o700)
	os.Chmod(filepath.Join(own, ".local", "state", "jail"), 0o770)
	probe := `echo "proxy=$HTTP_PROXY no=$NO_PROXY uid=$(id -u) host=$(hostname)"
grep -E '^(NoNewPrivs|Seccomp|Seccomp_filters|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status
cat /etc/resolv.conf; ls /proc/self/fd | wc -l; ulimit -c`
	for _, args := range [][]string{
		{"--quiet", "--", "/bin/sh", "-c", probe},
		{"--quiet", "--net", "allow", "--", "/bin/sh", "-c", probe},
		{"--quiet", "--x-notify-ebusy", "--require-exec-audit", "--", "/bin/true"},
		{"--quiet", "--", "/nonexistent/cmd"},
	} {
		rl, howL := initProgram(t, lean, args...)
		ro, howO := initProgram(t, own, args...)
		if !strings.HasPrefix(howL, "the lean init ") || !strings.HasPrefix(howO, "jail's own binary (") {
			t.Fatalf("the runs did not take the two paths: %q, %q", howL, howO)
		}
		if rl.code != ro.code || rl.stdout != ro.stdout || traceless(rl.stderr) != traceless(ro.stderr) {
			t.Errorf("%v: the lean init differs from jail's own:\nlean: %d %q %q\nown:  %d %q %q", args,
				rl.code, rl.stdout, traceless(rl.stderr), ro.code, ro.stdout, traceless(ro.stderr))
		}
	}
}

// traceless is stderr without JAIL_TRACE's lines.
func traceless(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "jail: supervisor ") || strings.HasPrefix(l, "jail: init ") ||
			strings.HasPrefix(l, "jail: directory cache") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

var initTraceLine = regexp.MustCompile(`(?m)^jail: init (\S+)\s+(-?[\d.]+) ms \(at (-?[\d.]+) ms\)$`)

// The lean init's trace splits its start: "init runtime" is when its Go
// runtime had started (its first package initialized), before its main,
// and is sent after "init main" (which stays init's first line: the
// signal tests wait for it). jail's own binary as init has no such line.
func TestLeanInitTraceRuntime(t *testing.T) {
	lean := leanHome(t)
	leanCopy(t, lean)
	r, how := initProgram(t, lean, "--quiet", "--", "/bin/true")
	mustCode(t, r, 0)
	if !strings.HasPrefix(how, "the lean init ") {
		t.Fatalf("init was not the lean init: %s", how)
	}
	var steps []string
	var runtimeOff, runtimeAt, mainAt float64 = 1, -1, -1
	for _, m := range initTraceLine.FindAllStringSubmatch(r.stderr, -1) {
		steps = append(steps, m[1])
		var off, at float64
		fmt.Sscan(m[2], &off)
		fmt.Sscan(m[3], &at)
		switch m[1] {
		case "runtime":
			runtimeOff, runtimeAt = off, at
		case "main":
			mainAt = at
		}
	}
	if len(steps) < 2 || steps[0] != "main" || steps[1] != "runtime" {
		t.Fatalf("init's first trace lines are %q, want main then runtime:\n%s", steps, r.stderr)
	}
	// Before main, after the supervisor's own start (its trace's zero).
	if runtimeOff > 0 || runtimeAt < 0 || runtimeAt > mainAt {
		t.Fatalf("init runtime %.2f ms (at %.2f), init main at %.2f: want the runtime before main:\n%s",
			runtimeOff, runtimeAt, mainAt, r.stderr)
	}

	own := leanHome(t)
	os.MkdirAll(filepath.Join(own, ".local", "state", "jail"), 0o700)
	os.Chmod(filepath.Join(own, ".local", "state", "jail"), 0o770)
	r, how = initProgram(t, own, "--quiet", "--", "/bin/true")
	mustCode(t, r, 0)
	if !strings.HasPrefix(how, "jail's own binary (") {
		t.Fatalf("init was not jail's own binary: %s", how)
	}
	if strings.Contains(r.stderr, "jail: init runtime") {
		t.Fatalf("jail's own binary as init has a runtime line:\n%s", r.stderr)
	}
}
