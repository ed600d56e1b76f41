package apparmor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileParses compiles the shipped profile, and one rendered for
// another path, with apparmor_parser (Debian's apparmor package), without
// loading it into the kernel (-Q: this kernel may have no AppArmor; -K: no
// cache). What this checks and what it cannot:
//   - apparmor_parser 4.0 and later (Ubuntu 24.04, Debian 13): the whole
//     profile, abi 4.0 and the `userns` rule included.
//   - apparmor_parser 3.x (Debian 12, this CI): it knows neither abi 4.0
//     nor `userns`, so it compiles the profile with those two lines
//     rewritten to their 3.0 equivalents (abi 3.0, the rule removed): the
//     structure, the attachment, the flags and the include are checked; the
//     `userns` rule is checked only as text (exactly one `userns,` inside
//     the profile's block), below.
//
// Whether a kernel then lets jail create user namespaces can only be seen
// on Ubuntu 24.04+ itself (README: Ubuntu).
func TestProfileParses(t *testing.T) {
	body := strings.SplitN(Profile, "profile jail ", 2)
	if len(body) != 2 || strings.Count(body[1], "\n  userns,\n") != 1 || !strings.Contains(body[1], "flags=(unconfined)") {
		t.Fatalf("the profile's block must hold exactly one `userns,` rule and flags=(unconfined):\n%s", Profile)
	}
	parser, err := exec.LookPath("apparmor_parser")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("apparmor_parser not installed (Debian package apparmor): %v", err)
		}
		t.Skipf("apparmor_parser not installed (Debian package apparmor)")
	}
	out, _ := exec.Command(parser, "--version").CombinedOutput()
	old := strings.Contains(string(out), "version 2.") || strings.Contains(string(out), "version 3.")
	rendered, err := For("/opt/jail/bin/jail")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"shipped": Profile, "rendered": rendered} {
		if old {
			text = strings.Replace(text, "abi <abi/4.0>,", "abi <abi/3.0>,", 1)
			text = strings.Replace(text, "\n  userns,\n", "\n", 1)
		}
		f := filepath.Join(t.TempDir(), "jail")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(parser, "-Q", "-K", f)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s profile (parser %s, 3.x rewrite %v): %v\n%s", name, strings.SplitN(string(out), "\n", 2)[0], old, err, b)
		}
	}
	// A broken profile must fail, or the check above proves nothing.
	f := filepath.Join(t.TempDir(), "broken")
	os.WriteFile(f, []byte("profile jail /x flags=(unconfined) {\n  frobnicate,\n}\n"), 0o644)
	if b, err := exec.Command(parser, "-Q", "-K", f).CombinedOutput(); err == nil {
		t.Errorf("apparmor_parser accepted a broken profile:\n%s", b)
	}
}

func TestFor(t *testing.T) {
	p, err := For("/home/u/go/bin/jail")
	if err != nil || !strings.Contains(p, "profile jail /home/u/go/bin/jail flags=(unconfined)") || strings.Contains(p, "profile jail "+DefaultPath) {
		t.Fatalf("For: %v\n%s", err, p)
	}
	for _, bad := range []string{"jail", "/a b/jail", "/x/*/jail", "/x/{a,b}", "/x\"y"} {
		if _, err := For(bad); err == nil {
			t.Errorf("For(%q) accepted", bad)
		}
	}
}
