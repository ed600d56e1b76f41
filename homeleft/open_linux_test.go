package homeleft

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// home builds a home in a temporary directory: dirs end in "/", links are
// "name -> target".
func home(t *testing.T, entries ...string) string {
	t.Helper()
	h := t.TempDir()
	for _, e := range entries {
		p := filepath.Join(h, e)
		if name, target, ok := cutLink(e); ok {
			p = filepath.Join(h, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if e[len(e)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func cutLink(e string) (string, string, bool) {
	for i := 0; i+4 <= len(e); i++ {
		if e[i:i+4] == " -> " {
			return e[:i], e[i+4:], true
		}
	}
	return "", "", false
}

func TestList(t *testing.T) {
	h := home(t,
		// Written by the run.
		".qwen/settings.json", ".config/amp/", ".gitconfig", ".local/share/opencode/", ".local/bin/tool",
		".config/go/env", ".dotlink -> /etc",
		// jail's: mount points and the directories on their way.
		"proj/", ".claude/", ".claude.json", ".local/share/pnpm/", ".cache/yarn/", "work/app/",
		".config/gh/",
		// Ending as a matter of course.
		".npm/_cacache/", ".bash_history", ".python_history", "go/pkg/", ".config/go/telemetry/local/",
		// A container that is a link: not followed.
		".local/state -> /etc",
	)
	d, err := Open(os.Getpid(), h)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got := List(d, []string{"proj", ".claude", ".claude.json", ".local/share/pnpm", ".cache/yarn", "work/app", ".config/gh"})
	want := []Entry{{".config/amp", true}, {".config/go/env", false}, {".dotlink", false}, {".gitconfig", false},
		{".local/bin", true}, {".local/share/opencode", true}, {".qwen", true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List = %v\nwant   %v", got, want)
	}
}

// The home is opened without following a symlink on its way: the
// supervisor's reads stay in the sandbox's tree.
func TestOpenNoSymlink(t *testing.T) {
	h := home(t, "real/.qwen/", "link -> real")
	if _, err := Open(os.Getpid(), filepath.Join(h, "link")); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("Open of a symlink: %v, want ENOTDIR", err)
	}
	if _, err := Open(os.Getpid(), filepath.Join(h, "link", ".qwen")); !errors.Is(err, unix.ELOOP) {
		t.Errorf("Open through a symlink: %v, want ELOOP", err)
	}
	d, err := Open(os.Getpid(), filepath.Join(h, "real"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := List(d, nil); !reflect.DeepEqual(got, []Entry{{".qwen", true}}) {
		t.Errorf("List = %v", got)
	}
}

// The descriptor holds the directory: read after it was renamed away (the
// sandbox gone, its tmpfs held), it still lists what it holds.
func TestListAfterRename(t *testing.T) {
	h := home(t, "h/.qwen/")
	d, err := Open(os.Getpid(), filepath.Join(h, "h"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(filepath.Join(h, "h"), filepath.Join(h, "gone")); err != nil {
		t.Fatal(err)
	}
	if got := List(d, nil); !reflect.DeepEqual(got, []Entry{{".qwen", true}}) {
		t.Errorf("List = %v", got)
	}
}

// The end check's cost for a home holding a workspace's mount point and
// two entries of the run's: Open at start, then List.
func BenchmarkOpenList(b *testing.B) {
	h := b.TempDir()
	for _, d := range []string{"proj", ".qwen", ".config/amp"} {
		if err := os.MkdirAll(filepath.Join(h, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		d, err := Open(os.Getpid(), h)
		if err != nil {
			b.Fatal(err)
		}
		if got := List(d, []string{"proj"}); len(got) != 2 {
			b.Fatal(got)
		}
		d.Close()
	}
}
