package config

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A settings file (the settings key of the user's config, --settings) or a
// --config file the agent made a FIFO, a link to a device or a huge
// sparse file (the workspace's .claude/settings.json is its to write) is
// refused at once, naming the file, as a project file is: os.ReadFile
// blocked on the FIFO until a writer came (every later start in the
// project hung) and read /dev/zero or a 64 GiB hole into memory. Seen
// failing on main (2fb6e72): "still running after 5s" for the FIFO and
// the device, and the huge file read into memory.
func TestSettingsFileNotPlain(t *testing.T) {
	for _, kind := range []string{"fifo", "device", "huge", "linkfifo"} {
		for _, via := range []string{"user", "flag", "config"} {
			t.Run(kind+"/"+via, func(t *testing.T) {
				w := newWorld(t)
				file := filepath.Join(w.ws, ".claude", "settings.json")
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				switch kind {
				case "fifo":
					if err := syscall.Mkfifo(file, 0o644); err != nil {
						t.Fatal(err)
					}
				case "linkfifo": // a link the agent made to its FIFO
					if err := syscall.Mkfifo(file+".fifo", 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(file+".fifo", file); err != nil {
						t.Fatal(err)
					}
				case "device":
					if err := os.Symlink("/dev/zero", file); err != nil {
						t.Fatal(err)
					}
				case "huge":
					f, err := os.Create(file)
					if err != nil {
						t.Fatal(err)
					}
					if err := f.Truncate(64 << 30); err != nil {
						t.Fatal(err)
					}
					f.Close()
				}
				var req Request
				switch via {
				case "user": // the user's config names the project's Claude settings
					w.write(filepath.Join(w.cfgDir, "config.toml"), "settings = [\""+file+"\"]\n")
				case "flag":
					req.Flags = []Setting{flag("settings", file)}
				case "config":
					req.ConfigFile = file
				}
				done := make(chan error, 1)
				go func() { _, err := w.resolve(req); done <- err }()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), file) {
						t.Fatalf("Resolve: %v, want a refusal naming %s", err, file)
					}
					t.Logf("Resolve: %v", err)
				case <-time.After(5 * time.Second):
					t.Fatal("Resolve still running after 5s")
				}
			})
		}
	}
}

// What users pass keeps working: --settings <(cmd) (a pipe of jail's own,
// named /dev/fd/N or /proc/self/fd/N) and a settings file that is a
// symlink to a regular file (a dotfiles manager's ~/.claude/settings.json).
// A pipe that never ends is cut at the bound, not read into memory.
func TestSettingsFileFromPipeAndLink(t *testing.T) {
	const doc = `{"network": {"allowedDomains": ["pipe.example"]}}`
	pipe := func(t *testing.T, body string, endless bool) string {
		r, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() {
			defer wr.Close()
			if !endless {
				wr.WriteString(body)
				return
			}
			chunk := []byte(strings.Repeat(" ", 1<<16))
			for {
				if _, err := wr.Write(chunk); err != nil {
					return // the reader closed
				}
			}
		}()
		return strconv.Itoa(int(r.Fd()))
	}
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/"} {
		t.Run(pre, func(t *testing.T) {
			w := newWorld(t)
			r, err := w.resolve(Request{Flags: []Setting{flag("settings", pre+pipe(t, doc, false))}})
			if err != nil || !slices.Contains(r.Policy.AllowDomain, "pipe.example") {
				t.Fatalf("--settings %s: %v %+v", pre, err, r)
			}
			done := make(chan error, 1)
			p := pre + pipe(t, "", true)
			go func() { _, err := w.resolve(Request{Flags: []Setting{flag("settings", p)}}); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "more than") {
					t.Fatalf("endless pipe: %v, want a refusal past the bound", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("endless pipe still read after 20s")
			}
		})
	}
	w := newWorld(t)
	real := w.write(filepath.Join(w.home, "dotfiles", "settings.json"), doc)
	link := filepath.Join(w.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r, err := w.resolve(Request{Flags: []Setting{flag("settings", link)}})
	if err != nil || !slices.Contains(r.Policy.AllowDomain, "pipe.example") {
		t.Fatalf("--settings through a link: %v %+v", err, r)
	}
}
