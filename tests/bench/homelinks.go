package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// homeLinks: `jail -- /bin/true` in an empty workspace with a HOME whose
// ~/.ssh/ holds 20,000 files (a browser profile, Python's user site: the
// home's protected directories are checked for hard links into the
// visible trees at every start), against an empty HOME: unchanged since
// the last start (the record of the last full check answers), with one
// file added or removed there before each start (the full check: a
// getdents per directory and an fstatat per file), and with no state
// (cold). -quick makes it 5,000 files.
func (b *bench) homeLinks() error {
	n := b.pick(5_000, 20_000)
	// Two such homes: one unchanged, one changed before each start (the
	// change must not touch the other's directories).
	home := filepath.Join(b.scratch, "hl-home")
	homeChanged := filepath.Join(b.scratch, "hl-home-changed")
	empty := filepath.Join(b.scratch, "hl-empty-home")
	ws := filepath.Join(b.scratch, "hl-ws")
	for _, d := range []string{empty, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, h := range []string{home, homeChanged} {
		many := filepath.Join(h, ".ssh", "many")
		if err := os.MkdirAll(many, 0o755); err != nil {
			return err
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%05d", i)), nil, 0o600); err != nil {
				return err
			}
		}
	}
	sh := func(script string, argv []string) []string {
		return append([]string{"/bin/sh", "-c", script + `; exec "$@"`, "sh"}, argv...)
	}
	env := func(h, state string) string {
		return "HOME=" + h + " XDG_STATE_HOME=" + filepath.Join(b.scratch, state) + "; export HOME XDG_STATE_HOME"
	}
	flip := filepath.Join(homeChanged, ".ssh", "many", "flip")
	vs := []variant{
		{name: "empty HOME", argv: sh(env(empty, "hl-state-empty"), b.jailArgv(nil, "/bin/true"))},
		{name: "unchanged", argv: sh(env(home, "hl-state"), b.jailArgv(nil, "/bin/true"))},
		{name: "changed", argv: sh(env(homeChanged, "hl-state-changed")+"; f="+flip+`; if [ -e "$f" ]; then rm "$f"; else : > "$f"; fi`, b.jailArgv(nil, "/bin/true"))},
		{name: "cold", argv: sh("rm -rf "+filepath.Join(b.scratch, "hl-state-cold")+"; "+env(home, "hl-state-cold"), b.jailArgv(nil, "/bin/true"))},
	}
	dirs := []string{ws, ws, ws, ws}
	// A record is kept only of directories last changed more than a
	// second before the start that checks them (the warm-up round makes it).
	time.Sleep(1200 * time.Millisecond)
	s, cpu, err := alternateIn(dirs, b.pick(5, 20), vs)
	if err != nil {
		return err
	}
	base := med(s[0])
	label := fmt.Sprintf("HOME with %dk files in ~/.ssh/, ", n/1000)
	b.add(row{"homelinks", "jail -- /bin/true, empty HOME", base, p90(s[0]), "ms", ""})
	for i, name := range []string{"unchanged", "one file added or removed (full check)", "cold (no state)"} {
		x := med(s[i+1])
		b.add(row{"homelinks", label + name, x, p90(s[i+1]), "ms", ratio(x, base, "empty HOME")})
	}
	b.add(row{"homelinks", "cpu: empty HOME", med(cpu[0]), p90(cpu[0]), "ms", ""})
	for i, name := range []string{"unchanged", "one file added or removed", "cold"} {
		b.add(row{"homelinks", "cpu: " + label + name, med(cpu[i+1]), p90(cpu[i+1]), "ms", ratio(med(cpu[i+1]), med(cpu[0]), "empty HOME")})
	}
	return nil
}
