package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README's flag tables and docs/jail.1 (make docs)")

const (
	flagsBegin = "<!-- flags: generated from the option table by make docs; do not edit -->\n"
	flagsEnd   = "<!-- end of flags -->\n"
)

// repoFile is a file of the repository, or a skip when the test runs
// outside it (a copied test binary).
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", rel)
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skipf("not in the repository: %v", err)
	}
	return p
}

// README's flag tables are the generated ones: the docs cannot drift from
// the table.
func TestReadmeFlagTable(t *testing.T) {
	path := repoFile(t, "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var gen bytes.Buffer
	readmeFlags(&gen)
	s := string(readme)
	i, j := strings.Index(s, flagsBegin), strings.Index(s, flagsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the flags markers %q ... %q", flagsBegin, flagsEnd)
	}
	got := s[i+len(flagsBegin) : j]
	if got == gen.String() {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i+len(flagsBegin)]+gen.String()+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's flag tables differ from the option table; run make docs")
}

// docs/jail.1 is what jail man prints, and it renders.
func TestManPage(t *testing.T) {
	f, out, _ := testFactory()
	if code := run(f, []string{"man"}); code != 0 {
		t.Fatal(code)
	}
	page := out.Bytes()
	for _, w := range []string{".TH JAIL 1", ".SH OPTIONS", `\fB\-\-allow\-domain\fR \fIPATTERN[:PORT]\fR`, ".SH FILES", "trust.json"} {
		if !bytes.Contains(page, []byte(w)) {
			t.Errorf("man page lacks %q", w)
		}
	}
	if groff, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = bytes.NewReader(page)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff: %v\n%s", err, stderr.String())
		}
	} else if os.Getenv("CI") != "" {
		t.Fatal("groff is not installed: CI must install it to check the man page")
	}
	path := repoFile(t, "docs/jail.1")
	old, _ := os.ReadFile(path)
	if bytes.Equal(old, page) {
		return
	}
	if *update {
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/jail.1 differs from jail man; run make docs")
}

// The completion scripts are valid for their shells (and load in bash).
func TestCompletionScripts(t *testing.T) {
	for _, c := range []struct {
		shell string
		check []string // the syntax check
	}{
		{"bash", []string{"bash", "-n"}},
		{"zsh", []string{"zsh", "-n"}},
		{"fish", []string{"fish", "--no-execute"}},
	} {
		t.Run(c.shell, func(t *testing.T) {
			f, out, _ := testFactory()
			if code := run(f, []string{"completion", c.shell}); code != 0 {
				t.Fatal(code)
			}
			script := out.String()
			for _, w := range []string{"allow-domain", "write", "audit", "none allow host", "profiles --names"} {
				if !strings.Contains(script, w) {
					t.Errorf("%s script lacks %q", c.shell, w)
				}
			}
			bin, err := exec.LookPath(c.check[0])
			if err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s is not installed: CI must install it to check its completion script", c.shell)
				}
				t.Skipf("%s not installed", c.shell)
			}
			file := filepath.Join(t.TempDir(), "jail."+c.shell)
			os.WriteFile(file, []byte(script), 0o644)
			if out, err := exec.Command(bin, append(c.check[1:], file)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", c.shell, err, out)
			}
			if c.shell == "bash" {
				// Loaded and asked: the verbs at the first word, --net's modes, flags.
				probe := `source ` + file + `
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _jail; echo "${COMPREPLY[*]}"; }
comp jail au
comp jail --net a
comp jail --allow-d
comp jail completion z
comp jail audit --ty
`
				got, err := exec.Command(bin, "-c", probe).CombinedOutput()
				want := "audit\nallow\n--allow-domain\nzsh\n--type\n"
				if err != nil || string(got) != want {
					t.Errorf("bash completion answers %q (%v), want %q", got, err, want)
				}
			}
		})
	}
}
