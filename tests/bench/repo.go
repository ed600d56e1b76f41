package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// repo: jail in a real git repository, where every user's agent runs:
// what the start and the end pay for git's protections (the sentinel's
// look at the repository, the kept history, the end's sweep and its check
// of the packs and loose objects the run could have written). Two
// repositories made by git itself, of the same tree (10,000 files in 100
// directories, committed): one packed (git gc), one with 1,000 loose
// objects more (a commit not yet packed: git's gc.auto leaves up to
// 6,700). Each runs `/bin/true` (start and end back to back) and `sleep
// 0.1` (an agent that runs a while, as every real one does: what the end
// prepares while it runs is ready when it exits), each against the same
// command in an empty workspace, the baseline. The first starts fill the
// history store (budgeted per start): they run before the timed rounds,
// which measure the steady state of a user's repository. -quick makes the
// trees ten times smaller. With JAIL_BIN_B set, a second binary runs the
// same variants in the same rounds, with a state directory of its own.
func (b *bench) repo() error {
	files, loose := b.pick(1000, 10000), b.pick(100, 1000)
	packed := filepath.Join(b.scratch, "repo-packed")
	withLoose := filepath.Join(b.scratch, "repo-loose")
	for _, r := range []struct {
		dir   string
		loose int
	}{{packed, 0}, {withLoose, loose}} {
		if err := genRepo(r.dir, files, r.loose); err != nil {
			return err
		}
	}
	empty := filepath.Join(b.scratch, "repo-empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	tree := fmt.Sprintf("%dk files in %d dirs", files/1000, files/100)
	places := []struct{ dir, name string }{
		{empty, "empty workspace"},
		{packed, "git repository (" + tree + "), packed"},
		{withLoose, fmt.Sprintf("git repository (%s), %d loose objects", tree, loose)},
	}
	cmds := [][]string{{"/bin/true"}, {"/bin/sleep", "0.1"}}
	jb := os.Getenv("JAIL_BIN_B")
	bins := []string{b.jail}
	if jb != "" {
		bins = append(bins, jb)
	}
	// vs[((bin*len(cmds))+cmd)*len(places)+place]
	var vs []variant
	var dirOf []string
	for bi, bin := range bins {
		bb := *b
		bb.jail = bin
		for _, c := range cmds {
			for _, pl := range places {
				argv := bb.jailArgv(nil, c...)
				if bi == 1 {
					argv = append([]string{"/usr/bin/env", "XDG_STATE_HOME=" + filepath.Join(b.scratch, "repo-state-b")}, argv...)
				}
				vs = append(vs, variant{name: fmt.Sprintf("%d %s %s", bi, c[0], pl.name), argv: argv})
				dirOf = append(dirOf, pl.dir)
			}
		}
	}
	// The first starts keep the history (copies, budgeted per start).
	for i, v := range vs {
		for k := 0; k < 8 && strings.HasSuffix(v.argv[len(v.argv)-1], "true"); k++ {
			if _, err := run(dirOf[i], v.argv...); err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
		}
	}
	s, cpu, err := alternateIn(dirOf, b.pick(5, 20), vs)
	if err != nil {
		return err
	}
	at := func(bi, ci, pi int) int { return (bi*len(cmds)+ci)*len(places) + pi }
	for bi, bin := range bins {
		prefix := ""
		if bi == 1 {
			prefix = "B (" + filepath.Base(bin) + "): "
		}
		for ci, c := range cmds {
			cmd := strings.Join(c, " ")
			base, cbase := med(s[at(bi, ci, 0)]), med(cpu[at(bi, ci, 0)])
			for pi, pl := range places {
				k := at(bi, ci, pi)
				x, cx := med(s[k]), med(cpu[k])
				note, cnote := "", ""
				if pi > 0 {
					note = fmt.Sprintf("+%.1f ms; ", x-base) + ratio(x, base, "empty ws")
					cnote = fmt.Sprintf("+%.1f ms; ", cx-cbase) + ratio(cx, cbase, "empty ws")
				}
				if bi == 1 {
					note += "; " + ratio(x, med(s[at(0, ci, pi)]), "A's")
				}
				b.add(row{"repo", prefix + "jail -- " + cmd + ", " + pl.name, x, p90(s[k]), "ms", note})
				b.add(row{"repo", prefix + "cpu: " + cmd + ", " + pl.name, cx, p90(cpu[k]), "ms", cnote})
			}
		}
	}
	return nil
}

// genRepo makes a git repository at root with git itself: files files in
// files/100 directories of 100 (Go-like sources), committed and packed
// (git gc); then, when loose > 0, a second commit of loose new files in
// one directory, left loose (gc.auto off). Kept when made by an earlier
// run of the section.
func genRepo(root string, files, loose int) error {
	if _, err := os.Stat(filepath.Join(root, ".git", "HEAD")); err == nil {
		return nil
	}
	for d := 0; d < files/100; d++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", d/10), fmt.Sprintf("sub%d", d%10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for f := 0; f < 100; f++ {
			src := fmt.Sprintf("package sub%d\n\n// F%d_%d is generated.\nfunc F%d_%d() int { return %d }\n", d%10, d, f, d, f, d*100+f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte(src), 0o644); err != nil {
				return err
			}
		}
	}
	git := func(args ...string) error {
		argv := append([]string{"git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "gc.auto=0", "-c", "init.defaultBranch=main"}, args...)
		if _, err := run(root, argv...); err != nil {
			return fmt.Errorf("git %s in %s: %w", args[0], root, err)
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "tree"}, {"gc", "-q"}} {
		if err := git(args...); err != nil {
			return err
		}
	}
	if loose == 0 {
		return nil
	}
	dir := filepath.Join(root, "new")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for f := 0; f < loose; f++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%04d.txt", f)), []byte(fmt.Sprintf("new %d\n", f)), 0o644); err != nil {
			return err
		}
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "-m", "new")
}
