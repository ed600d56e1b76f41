package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// treeDenies are the 15 `**/` --deny globs of issue 16's measurement.
var treeDenies = []string{"*.sqlite", "*.tfstate", "*.kdbx", "*.gpg", "*.asc", "secrets/**", "private/**",
	".vault/", "credentials*.json", "token.txt", "*.bak", "*.dump", ".htpasswd", "terraform.tfvars", "*.sql.gz"}

// tree: `jail -- /bin/true` in a generated workspace of 280,000 files in
// 2,800 directories (a git checkout's shape: 28 top-level directories of
// 99 each, 100 files in every directory, a .git), with the built-in
// protections, then with 15 `**/` --deny globs: on an unchanged tree
// (the directory cache of the last run answers), on a tree where one
// directory changed since, and cold (no cache: every directory read).
// Baselines of the same run: jail in an empty workspace, and bubblewrap.
// Target (issue 16): <= 100 ms on an unchanged tree. -quick makes a tree
// ten times smaller. With JAIL_BIN_B set, a second jail binary runs the
// empty workspace and the unchanged rows in the same rounds (an A/B of a
// change), with a state directory of its own (its cache files are not
// the first binary's).
func (b *bench) tree() error {
	dirs := b.pick(280, 2800)
	ws := filepath.Join(b.scratch, "tree-ws")
	if err := genTree(ws, dirs, 100); err != nil {
		return err
	}
	empty := filepath.Join(b.scratch, "tree-empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	// A state directory of the bench's own (the directory cache is in it).
	state := filepath.Join(b.scratch, "tree-state")
	old, had := os.LookupEnv("XDG_STATE_HOME")
	os.Setenv("XDG_STATE_HOME", state)
	defer func() {
		if had {
			os.Setenv("XDG_STATE_HOME", old)
		} else {
			os.Unsetenv("XDG_STATE_HOME")
		}
	}()
	var deny []string
	for _, g := range treeDenies {
		deny = append(deny, "--deny", "**/"+g)
	}
	// Is a deny in force? A file named by the first glob is unreadable.
	secret := filepath.Join(ws, "d00", "s00", "x.sqlite")
	if err := os.WriteFile(secret, []byte("SECRET\n"), 0o644); err != nil {
		return err
	}
	effective := "deny in force"
	if r, err := run(ws, b.jailArgv(deny, "cat", secret)...); err == nil && strings.Contains(r.out, "SECRET") {
		effective = "DENY NOT IN FORCE"
	}
	sh := func(script string, argv []string) []string {
		return append([]string{"/bin/sh", "-c", script + `; exec "$@"`, "sh"}, argv...)
	}
	// The cold rounds have a state directory of their own, emptied before
	// each: removing the shared one would make the other rows cold too.
	coldState := filepath.Join(b.scratch, "tree-state-cold")
	cold := sh("rm -rf "+filepath.Join(coldState, "jail", "dircache")+"; XDG_STATE_HOME="+coldState+"; export XDG_STATE_HOME",
		b.jailArgv(deny, "/bin/true"))
	// One directory changed since the last run: a file added (then removed
	// by the next round's script, which changes it again).
	changed := sh("f="+filepath.Join(ws, "d07", "s05", "new")+`; if [ -e "$f" ]; then rm "$f"; else : > "$f"; fi`, b.jailArgv(deny, "/bin/true"))
	// A local clone: the tree's pack has a second name outside it (git
	// clone from a path links its source's packs), which makes the start
	// look for the pack's other names in the tree (package sandbox's
	// historyLinks). The link is made before the run and removed after it
	// (the shell stays: the row pays its fork, about 1 ms).
	linked := filepath.Join(b.scratch, "tree-clone-source.pack")
	cloned := func(argv []string) []string {
		return append([]string{"/bin/sh", "-c", "ln -f " + filepath.Join(ws, treePack+".pack") + " " + linked + `; "$@"; rc=$?; rm -f ` + linked + "; exit $rc", "sh"}, argv...)
	}
	clone := cloned(b.jailArgv(deny, "/bin/true"))
	vs := []variant{
		{name: "jail, empty workspace", argv: b.jailArgv(nil, "/bin/true")},
		{name: "tree, built-ins", argv: b.jailArgv(nil, "/bin/true")},
		{name: "tree, 15 globs", argv: b.jailArgv(deny, "/bin/true")},
		{name: "tree, 15 globs, one dir changed", argv: changed},
		{name: "tree, 15 globs, cold", argv: cold},
		{name: "tree, 15 globs, a local clone's pack", argv: clone},
	}
	dirOf := []string{empty, ws, ws, ws, ws, ws}
	jb := os.Getenv("JAIL_BIN_B")
	if jb != "" {
		bb := *b
		bb.jail = jb
		stateB := "XDG_STATE_HOME=" + filepath.Join(b.scratch, "tree-state-b")
		envB := func(argv []string) []string { return append([]string{"/usr/bin/env", stateB}, argv...) }
		vs = append(vs,
			variant{name: "B: jail, empty workspace", argv: envB(bb.jailArgv(nil, "/bin/true"))},
			variant{name: "B: tree, built-ins", argv: envB(bb.jailArgv(nil, "/bin/true"))},
			variant{name: "B: tree, 15 globs", argv: envB(bb.jailArgv(deny, "/bin/true"))},
			variant{name: "B: tree, 15 globs, a local clone's pack", argv: cloned(envB(bb.jailArgv(deny, "/bin/true")))})
		dirOf = append(dirOf, empty, ws, ws, ws)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err == nil {
		if _, err = run(empty, append([]string{bwrap}, bwrapArgs...)...); err != nil {
			bwrap = ""
		}
	}
	if bwrap != "" {
		vs = append(vs, variant{name: "bwrap", argv: append([]string{bwrap}, bwrapArgs...)})
		dirOf = append(dirOf, empty)
	}
	s, cpu, err := alternateIn(dirOf, b.pick(5, 20), vs)
	if err != nil {
		return err
	}
	base := med(s[0])
	bw := math.NaN()
	if bwrap != "" {
		bw = med(s[len(s)-1])
		b.add(row{"tree", "bwrap --unshare-all ... /bin/true", bw, p90(s[len(s)-1]), "ms", ""})
	}
	b.add(row{"tree", "jail -- /bin/true, empty workspace", base, p90(s[0]), "ms", ratio(base, bw, "bwrap")})
	size := fmt.Sprintf("%dk files, %d dirs", dirs*100/1000, dirs)
	for i, name := range treeRows {
		x := med(s[i+1])
		note := ratio(x, base, "empty ws") + "; " + ratio(x, bw, "bwrap")
		if i != 3 {
			note += " (target <= 100 ms)"
		}
		if i == 1 {
			note += "; " + effective
		}
		b.add(row{"tree", size + ", " + name, x, p90(s[i+1]), "ms", note})
	}
	// CPU (user+sys of jail, init and /bin/true): less bent by a loaded
	// machine than wall time.
	b.add(row{"tree", "cpu: jail, empty workspace", med(cpu[0]), p90(cpu[0]), "ms", ""})
	for i, name := range treeRows {
		b.add(row{"tree", "cpu: " + name, med(cpu[i+1]), p90(cpu[i+1]), "ms", ratio(med(cpu[i+1]), med(cpu[0]), "empty ws")})
	}
	if jb != "" {
		k := 1 + len(treeRows) // the B rows follow the A rows
		nb := "B (" + filepath.Base(jb) + "): "
		baseB := med(s[k])
		b.add(row{"tree", nb + "jail -- /bin/true, empty workspace", baseB, p90(s[k]), "ms", ratio(baseB, base, "A's")})
		// B's rows and the A rows they compare with (treeRows' index).
		bRows := []int{0, 1, 4}
		for j, i := range bRows {
			x := med(s[k+1+j])
			b.add(row{"tree", nb + size + ", " + treeRows[i], x, p90(s[k+1+j]), "ms", ratio(x, baseB, "B's empty ws") + "; " + ratio(x, med(s[1+i]), "A's")})
		}
		b.add(row{"tree", nb + "cpu: empty workspace", med(cpu[k]), p90(cpu[k]), "ms", ratio(med(cpu[k]), med(cpu[0]), "A's")})
		for j, i := range bRows {
			x := med(cpu[k+1+j])
			b.add(row{"tree", nb + "cpu: " + treeRows[i], x, p90(cpu[k+1+j]), "ms", ratio(x, med(cpu[k]), "B's empty ws") + "; " + ratio(x, med(cpu[1+i]), "A's")})
		}
	}
	return nil
}

// genTree makes root with dirs directories (28 top-level ones, the rest
// spread below them) of files empty files each, and a minimal .git.
func genTree(root string, dirs, files int) error {
	if _, err := os.Stat(filepath.Join(root, ".git", "HEAD")); err == nil {
		return nil // made by an earlier section of this run
	}
	top := 28
	per := (dirs - top) / top
	mk := func(d string) error {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for f := 0; f < files; f++ {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d.go", f)), nil, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	for t := 0; t < top; t++ {
		td := filepath.Join(root, fmt.Sprintf("d%02d", t))
		if err := mk(td); err != nil {
			return err
		}
		for s := 0; s < per; s++ {
			if err := mk(filepath.Join(td, fmt.Sprintf("s%02d", s))); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{".git/objects/pack", ".git/refs/heads"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	// A pack (its history protected, as a real repository's is): the
	// "local clone" row gives it a second name outside the tree.
	for _, ext := range []string{".idx", ".pack"} {
		if err := os.WriteFile(filepath.Join(root, treePack+ext), []byte("PACK"), 0o444); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
}

// treeRows name the tree's variants after the empty workspace, in order.
var treeRows = []string{"built-ins, unchanged", "15 globs, unchanged", "15 globs, one dir changed", "15 globs, cold (no cache)", "15 globs, unchanged, a pack linked outside (a local clone)"}

// treePack is the generated tree's pack, less its extension.
const treePack = ".git/objects/pack/pack-0000000000000000000000000000000000000000"

// alternateIn is alternate with each variant run in its own directory; it
// returns wall and CPU (user+sys of the process and its children) times.
func alternateIn(dirs []string, rounds int, vs []variant) (wall, cpu [][]float64, err error) {
	samples := make([][]float64, len(vs))
	cpu = make([][]float64, len(vs))
	for round := -1; round < rounds; round++ {
		for k := range vs {
			i := (k + max(round, 0)) % len(vs)
			res, err := run(dirs[i], vs[i].argv...)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", vs[i].name, err)
			}
			if round >= 0 {
				samples[i] = append(samples[i], float64(res.wall)/1e6)
				c := math.NaN()
				if ru := res.rusage; ru != nil {
					c = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
				}
				cpu[i] = append(cpu[i], c)
			}
		}
	}
	return samples, cpu, nil
}
