package toolreg

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A tool's configuration file in the workspace (a project .npmrc, a
// .cargo/config.toml, a venv's pip.conf: the agent's to write) that the
// agent made a FIFO or a link to /dev/zero is skipped at once, as an
// unreadable file is: os.ReadFile blocked on the FIFO before the
// Writable check (every later start with registries = [...] hung) and
// read /dev/zero into memory; so did a FIFO as the pip found on the PATH
// (a venv's bin), whose #! line is read. Seen failing on main (2fb6e72): "still
// running after 5s" for each tool and kind.
func TestResolveConfigNotPlain(t *testing.T) {
	for _, tool := range []string{NPM, Cargo, Pip} {
		for _, kind := range []string{"fifo", "device", "binfifo"} {
			if kind == "binfifo" && tool != Pip {
				continue
			}
			t.Run(tool+"/"+kind, func(t *testing.T) {
				f := newFake(t, "npm", "pip3")
				f.answers["npm"] = "registry=https://default.test/\nglobalconfig=/nonexistent\n"
				f.answers["python3"] = "https://index.test/simple\nfiles.test\n"
				f.write(filepath.Join(f.cwd, "package.json"), "{}")
				venv := filepath.Join(f.cwd, ".venv")
				file := map[string]string{NPM: filepath.Join(f.cwd, ".npmrc"), Cargo: filepath.Join(f.cwd, ".cargo", "config.toml"), Pip: filepath.Join(venv, "pip.conf")}[tool]
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if kind == "binfifo" { // the pip found on the PATH, whose #! line is read
					p := filepath.Join(f.bin, "pip3")
					os.Remove(p)
					if err := syscall.Mkfifo(p, 0o755); err != nil {
						t.Fatal(err)
					}
					file = filepath.Join(venv, "none")
				}
				if kind == "fifo" {
					if err := syscall.Mkfifo(file, 0o644); err != nil {
						t.Fatal(err)
					}
				} else if kind == "device" {
					if err := os.Symlink("/dev/zero", file); err != nil {
						t.Fatal(err)
					}
				}
				e := f.env("VIRTUAL_ENV=" + venv)
				e.Writable = func(p string) bool { return strings.HasPrefix(p, f.cwd+"/") }
				done := make(chan Result, 1)
				go func() { done <- Resolve([]string{tool}, e) }()
				select {
				case r := <-done:
					t.Logf("%q %q", patterns(r), r.Notes)
				case <-time.After(5 * time.Second):
					t.Fatal("Resolve still running after 5s")
				}
			})
		}
	}
}
