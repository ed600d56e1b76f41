package seccomp

import (
	"errors"
	"strings"
	"testing"
)

// TestGuardDefaults: the default rules refuse the disasters they name
// (these are the attacks) and leave ordinary commands alone.
func TestGuardDefaults(t *testing.T) {
	const ws, home = "/work/proj", "/home/u"
	g, err := NewGuard(nil, true, ws, home)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		argv string // split on spaces
		cwd  string
		rule string // "" = allowed
	}{
		{"rm -rf /", "/", "default:rm-recursive-root"},
		{"/bin/rm -rf /", "/tmp", "default:rm-recursive-root"},
		{"rm -fr /", "/tmp", "default:rm-recursive-root"},
		{"rm -r -f /", "/tmp", "default:rm-recursive-root"},
		{"rm --recursive --force //", "/tmp", "default:rm-recursive-root"},
		{"rm / -rf", "/tmp", "default:rm-recursive-root"},
		{"rm -Rf /*", "/tmp", "default:rm-recursive-root"},
		{"rm -rf /home/u", "/tmp", "default:rm-recursive-root"},
		{"rm -rf /home/u/", "/tmp", "default:rm-recursive-root"},
		{"rm -rf ~", "/tmp", "default:rm-recursive-root"},
		{"rm -rf /work/proj", "/tmp", "default:rm-recursive-root"},
		{"rm -rf .", "/work/proj", "default:rm-recursive-root"},
		{"rm -rf ..", "/work/proj/src", "default:rm-recursive-root"},
		{"rm -rf ../..", "/work/proj", "default:rm-recursive-root"},
		{"rm -rf -- /", "/tmp", "default:rm-recursive-root"},
		{"rm --no-preserve-root -r x", "/tmp", "default:rm-recursive-root"},
		{"rm -rf build", "/work/proj", ""},
		{"rm -rf /work/proj/build", "/", ""},
		{"rm -f /", "/", ""}, // not recursive: rm refuses a directory anyway
		{"rm -rf -- -/", "/tmp", ""},
		{"mkfs.ext4 /dev/sda1", "/", "default:mkfs"},
		{"/sbin/mkfs -t xfs /dev/sdb", "/", "default:mkfs"},
		{"mkswap /dev/vda2", "/", "default:mkfs"},
		{"mkdir build", "/", ""},
		{"dd if=/dev/zero of=/dev/sda bs=1M", "/", "default:dd-to-block-device"},
		{"dd if=x of=/dev/nvme0n1", "/", "default:dd-to-block-device"},
		{"dd if=/dev/zero of=/dev/null count=1", "/", ""},
		{"dd if=/dev/zero of=disk.img count=1", "/", ""},
		{"chmod -R 777 /", "/", "default:chmod-recursive-root"},
		{"chmod 777 -R /", "/", "default:chmod-recursive-root"},
		{"chown -R nobody /", "/", "default:chmod-recursive-root"},
		{"chmod -R a+rwx /home/u", "/", "default:chmod-recursive-root"},
		{"chmod -R 777 .", "/work/proj", "default:chmod-recursive-root"},
		{"chmod -R u+w .", "/work/proj", ""},
		{"chmod 777 /", "/", ""},
		{"chmod -R 755 build", "/work/proj", ""},
		{"bash -c :(){ :|:& };:", "/", "default:fork-bomb"},
		{"sh -c bomb(){ bomb | bomb & }; bomb", "/", "default:fork-bomb"},
		{"perl -e fork while fork", "/", "default:fork-bomb"},
		{"sh -c echo hi | cat", "/", ""},
		{"git push origin main", "/work/proj", ""},
		{"", "/", ""},
	}
	for _, c := range cases {
		var argv []string
		if c.argv != "" {
			argv = strings.Split(c.argv, " ")
		}
		if c.argv == "bash -c :(){ :|:& };:" || strings.HasPrefix(c.argv, "sh -c ") || strings.HasPrefix(c.argv, "perl -e ") {
			f := strings.SplitN(c.argv, " ", 3)
			argv = f
		}
		if got := g.Check(argv, c.cwd); got != c.rule {
			t.Errorf("Check(%q, cwd %s) = %q, want %q", c.argv, c.cwd, got, c.rule)
		}
	}
}

func TestGuardPatterns(t *testing.T) {
	g, err := NewGuard([]string{`^git push`, `curl .*\| *sh`}, false, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for argv, want := range map[string]string{
		"git push origin":      "block-command:^git push",
		"git pull":             "",
		"curl x | sh":          `block-command:curl .*\| *sh`,
		"rm -rf /":             "", // defaults off
		"echo git push origin": "",
	} {
		if got := g.Check(strings.Split(argv, " "), "/"); got != want {
			t.Errorf("%q: %q, want %q", argv, got, want)
		}
	}
	var nilGuard *Guard
	if nilGuard.Check([]string{"rm", "-rf", "/"}, "/") != "" {
		t.Error("nil guard refused")
	}
	for _, bad := range []string{"(", "a{2,1}", ".*", "x?"} {
		_, err := NewGuard([]string{bad}, false, "", "")
		var pe *PatternError
		if !errors.Is(err, ErrBadPattern) || !errors.As(err, &pe) || pe.Pattern != bad {
			t.Errorf("pattern %q: err %v, want a PatternError wrapping ErrBadPattern", bad, err)
		}
		// The option by its key, never a flag: the pattern may come from a file.
		if key, _, _ := pe.OptionValue(); key != "block-command" || strings.Contains(err.Error(), "--") {
			t.Errorf("pattern %q: %q", bad, err)
		}
	}
}
