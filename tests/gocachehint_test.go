//go:build linux

package tests

// `jail -- go test ./...` without a cache that lasts compiles, at every
// run, every package it needs, the standard library's included (45 s of
// CPU here for a package with one test), and nothing said why each run was slow
// (session 39, trying it as a user would). The end of such a run says so
// once for each workspace, with the profile that keeps a cache; a run whose
// build cache lasts (a cache of jail's own, the workspace) or that has none
// (GOCACHE=off) says nothing. The Go compiler is recognised by its place
// in a toolchain (pkg/tool/GOOS_GOARCH/compile), so a stand-in script there
// is what the supervisor sees a real build exec.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoBuildCacheHint(t *testing.T) {
	home, state := workspace(t), workspace(t)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
	// A workspace with a stand-in compiler and go command.
	newWS := func() string {
		ws := workspace(t)
		for _, p := range []string{"tc/pkg/tool/linux_amd64/compile", "tc/bin/go"} {
			f := filepath.Join(ws, p)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	const compileTwice = "tc/pkg/tool/linux_amd64/compile; tc/pkg/tool/linux_amd64/compile"
	cache := filepath.Join(home, ".cache", "go-build")
	said := func(stderr string) int { return strings.Count(stderr, "that ends with this run (") }

	ws := newWS()
	o := runOpts{dir: ws, env: env}
	first := run(t, o, "--", "sh", "-c", compileTwice)
	mustCode(t, first, 0)
	want := "jail: go compiled 2 packages into a build cache that ends with this run (" + cache + "): the next run compiles them again; --profile go (-P go) keeps a build cache of jail's own from run to run"
	if !strings.Contains(first.stderr, want) || said(first.stderr) != 1 {
		t.Errorf("first run: want once\n  %s\nstderr:\n%s", want, first.stderr)
	}
	second := run(t, o, "--", "sh", "-c", compileTwice)
	mustCode(t, second, 0)
	if said(second.stderr) != 0 {
		t.Errorf("second run in the same workspace: said again\nstderr:\n%s", second.stderr)
	}

	for _, c := range []struct {
		name  string
		flags []string
		argv  string
		want  string // "" for nothing said
	}{
		{"dry run", []string{"--dry-run"}, compileTwice, ""},
		// --quiet says nothing and records nothing: the next run says it.
		{"quiet, then not", []string{"--quiet"}, compileTwice, "QUIET"},
		{"no compile", nil, "tc/bin/go build", ""},
		{"a cache of jail's own", []string{"--cache", "go-build:" + cache}, compileTwice, ""},
		{"GOCACHE=off", []string{"--setenv", "GOCACHE=off"}, compileTwice, ""},
		{"GOCACHE in the workspace", []string{"--setenv", "GOCACHE=WS/.gocache"}, compileTwice, ""},
		{"GOCACHE in /tmp", []string{"--setenv", "GOCACHE=/tmp/gc"}, "tc/pkg/tool/linux_amd64/compile",
			"go compiled 1 package into a build cache that ends with this run (/tmp/gc): the next run compiles it again; --cache go-build:/tmp/gc keeps"},
		// Execs unseen: the command line is all there is.
		{"no exec audit", []string{"--no-exec-audit"}, "GO build", "go builds into a cache that ends with this run (" + cache + "): each run compiles again; --profile go"},
		{"no exec audit, no build", []string{"--no-exec-audit"}, "GO version", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := newWS()
			flags := make([]string, len(c.flags))
			for i, f := range c.flags {
				flags[i] = strings.ReplaceAll(f, "WS", ws)
			}
			argv := []string{"sh", "-c", c.argv}
			if rest, ok := strings.CutPrefix(c.argv, "GO "); ok {
				argv = []string{filepath.Join(ws, "tc/bin/go"), rest}
			}
			r := run(t, runOpts{dir: ws, env: env}, append(append(flags, "--"), argv...)...)
			mustCode(t, r, 0)
			if c.want == "QUIET" {
				if said(r.stderr) != 0 {
					t.Errorf("--quiet: said\nstderr:\n%s", r.stderr)
				}
				r = run(t, runOpts{dir: ws, env: env}, append([]string{"--"}, argv...)...)
				mustCode(t, r, 0)
				if said(r.stderr) != 1 {
					t.Errorf("the run after --quiet: want the line once\nstderr:\n%s", r.stderr)
				}
				return
			}
			switch {
			case c.want == "" && said(r.stderr) != 0:
				t.Errorf("said, want nothing\nstderr:\n%s", r.stderr)
			case c.want != "" && (!strings.Contains(r.stderr, c.want) || said(r.stderr) != 1):
				t.Errorf("want once\n  %s\nstderr:\n%s", c.want, r.stderr)
			}
		})
	}
}
