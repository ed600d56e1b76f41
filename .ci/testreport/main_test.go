package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func allowFrom(t *testing.T, text string) []*entry {
	t.Helper()
	p := filepath.Join(t.TempDir(), "allow")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := readAllow(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestReadAllowRefuses(t *testing.T) {
	for _, bad := range []string{
		"any seccomp TestX\n",              // no reason
		"any seccomp TestX #\n",            // empty reason
		"both seccomp TestX # why\n",       // bad scope
		"any seccomp # why\n",              // too few fields
		"any seccomp Test( # bad regexp\n", // bad regexp
	} {
		p := filepath.Join(t.TempDir(), "allow")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := readAllow(p); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// A run with an allowed skip, an unexpected one, and one whose message is
// not the allowed reason: only the first passes.
func TestReport(t *testing.T) {
	allow := allowFrom(t, `# comment
any seccomp TestFilterProbes/i386.* kernel has no i386 entry # ia32 emulation off
user tests TestRootOnly # root-only
`)
	stream := `{"Action":"run","Package":"github.com/jail-sandbox/jail/seccomp","Test":"TestFilterProbes/i386-open"}
{"Action":"output","Package":"github.com/jail-sandbox/jail/seccomp","Test":"TestFilterProbes/i386-open","Output":"    x_test.go:86: kernel has no i386 entry: SIGSEGV\n"}
{"Action":"skip","Package":"github.com/jail-sandbox/jail/seccomp","Test":"TestFilterProbes/i386-open"}
{"Action":"output","Package":"github.com/jail-sandbox/jail/seccomp","Test":"TestFilterProbes/i386-kill","Output":"    x_test.go:90: something else\n"}
{"Action":"skip","Package":"github.com/jail-sandbox/jail/seccomp","Test":"TestFilterProbes/i386-kill"}
{"Action":"skip","Package":"github.com/jail-sandbox/jail/tests","Test":"TestRootOnly"}
{"Action":"pass","Package":"github.com/jail-sandbox/jail/tests","Test":"TestOther"}
{"Action":"pass","Package":"github.com/jail-sandbox/jail/tests"}
`
	var out strings.Builder
	r := &report{scope: "root", allow: allow, out: &out, output: map[string][]string{}}
	if err := r.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	if r.finish() {
		t.Fatalf("a run with unexpected skips passed:\n%s", out.String())
	}
	got := out.String()
	for _, want := range []string{
		"allowed     seccomp TestFilterProbes/i386-open: x_test.go:86: kernel has no i386 entry",
		"NOT ALLOWED seccomp TestFilterProbes/i386-kill",
		"NOT ALLOWED tests TestRootOnly", // the entry is for the user run
		"1 passed, 0 failed, 3 skipped (2 not allowed)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}

	// The same skips, all allowed, pass.
	out.Reset()
	r = &report{scope: "user", allow: allow, out: &out, output: map[string][]string{}}
	r.read(strings.NewReader(strings.Split(stream, "\n")[0] + "\n" + strings.Join(strings.Split(stream, "\n")[1:3], "\n") + "\n" + strings.Join(strings.Split(stream, "\n")[5:], "\n")))
	if !r.finish() {
		t.Fatalf("a run with only allowed skips failed:\n%s", out.String())
	}
}

// A failing test or package fails the run and its output is shown.
func TestReportFailure(t *testing.T) {
	stream := `{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: boom\n"}
{"Action":"fail","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"fail","Package":"p","Elapsed":0.2}
`
	var out strings.Builder
	r := &report{scope: "root", out: &out, output: map[string][]string{}}
	r.read(strings.NewReader(stream))
	if r.finish() || !strings.Contains(out.String(), "boom") || !strings.Contains(out.String(), "FAILED: p TestA, p") {
		t.Fatalf("failure not reported:\n%s", out.String())
	}
}
