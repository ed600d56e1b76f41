package fsrules

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// BenchmarkExpandEmpty: the plan's fixed cost, an empty workspace with
// an empty $HOME and a passwd home laid out as a developer's (dotfiles,
// ~/.config, ~/.local, tool directories): what every start pays in the
// home loops (homeLinks, homeFileLinks, absent) and the watch list.
func BenchmarkExpandEmpty(b *testing.B) {
	in := emptyPlanInput(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Expand(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandEmptyCached is BenchmarkExpandEmpty as a start runs it:
// with the directory cache of earlier starts (opened, used and saved at
// each), the trees settled (older than dircache.Margin).
func BenchmarkExpandEmptyCached(b *testing.B) {
	state := tmp(b)
	in := emptyPlanInput(b)
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	start := func() {
		dc, err := dircache.Open(state)
		if err != nil {
			b.Fatal(err)
		}
		in.Dirs = dc
		if _, err := Expand(in); err != nil {
			b.Fatal(err)
		}
		if err := dc.Save(); err != nil {
			b.Fatal(err)
		}
	}
	start() // the cache of an earlier start
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start()
	}
}

// emptyPlanInput is the empty plan's input: an empty workspace with an
// empty $HOME and a passwd home laid out as a developer's.
func emptyPlanInput(b *testing.B) Input {
	base := tmp(b)
	ws, home, pw := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "pw")
	mk(b, ws, "./")
	mk(b, home, "./")
	mk(b, pw, ".bashrc", ".profile", ".gitconfig", ".npmrc", ".config/go/env", ".config/app/x",
		".local/bin/tool", ".local/share/x", ".cargo/bin/cargo", ".cargo/env", ".claude/settings.json",
		".codex/config.toml", ".gemini/settings.json", ".ssh/known_hosts", ".pyenv/shims/python", "go/bin/gopls")
	return Input{Workspace: ws, Home: home, Homes: []string{home, pw}, Writable: []string{ws}}
}
