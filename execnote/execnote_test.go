package execnote

import (
	"strings"
	"testing"
)

func TestFor(t *testing.T) {
	for _, c := range []struct {
		path, argv string // argv split on spaces
		key        string // "" for no note
		setID      bool
	}{
		{"/usr/bin/sudo", "sudo apt-get install -y jq", "sudo", true},
		{"/usr/bin/sudo", "sudo", "sudo", true},
		{"/bin/su", "su -c true", "su", true},
		{"/usr/bin/doas", "doas true", "doas", true},
		{"/usr/bin/pkexec", "pkexec true", "pkexec", true},
		{"/usr/bin/apt-get", "apt-get install -y jq", "apt-get", false},
		{"/usr/bin/apt-get", "apt-get -y -q update", "apt-get", false},
		{"/usr/bin/apt", "apt full-upgrade", "apt", false},
		{"/usr/bin/dpkg", "dpkg -i x.deb", "dpkg", false},
		{"/usr/bin/dpkg", "dpkg --configure -a", "dpkg", false},
		{"/usr/bin/dnf", "dnf -y install gcc", "dnf", false},
		{"/usr/bin/yum", "yum update", "yum", false},
		{"/sbin/apk", "apk add --no-cache curl", "apk", false},
		{"/usr/bin/pacman", "pacman -Syu", "pacman", false},
		{"/usr/bin/pacman", "pacman --sync git", "pacman", false},
		{"/usr/bin/pacman", "pacman -R git", "pacman", false},
		{"/usr/bin/rpm", "rpm -ivh x.rpm", "rpm", false},
		{"/usr/bin/rpm", "rpm -e x", "rpm", false},
		{"/usr/bin/zypper", "zypper --non-interactive in git", "zypper", false},
		{"/usr/bin/strace", "strace -f -o /tmp/x true", "strace", false},
		{"/usr/bin/strace", "strace -c ls", "strace", false},
		{"/usr/bin/strace", "strace -p 42", "strace", false},
		{"/usr/bin/strace", "strace -V", "", false},
		{"/usr/bin/strace", "strace --help", "", false},
		{"/usr/bin/strace", "strace", "", false}, // its usage
		{"/usr/bin/ltrace", "ltrace ls", "ltrace", false},
		{"/usr/bin/gdb", "gdb -batch -ex run ./hello", "gdb", false},
		{"/usr/bin/gdb", "gdb ./hello", "gdb", false},
		{"/usr/bin/gdb", "gdb -p 42", "gdb", false},
		{"/usr/bin/gdb", "gdb --pid=42", "gdb", false},
		{"/usr/bin/gdb", "gdb ./hello 42", "gdb", false},
		{"/usr/bin/gdb", "gdb -q --args ./hello -x", "gdb", false},
		{"/usr/bin/gdb", "gdb ./hello core.42", "", false},
		{"/usr/bin/gdb", "gdb -c core ./hello", "", false},
		{"/usr/bin/gdb", "gdb --core=core ./hello", "", false},
		{"/usr/bin/gdb", "gdb -batch -ex help", "", false}, // -ex's value is no program
		{"/usr/bin/gdb", "gdb --version", "", false},
		{"/usr/bin/gdb", "gdb", "", false}, // an interactive gdb with nothing to run yet
		{"/usr/bin/lldb", "lldb ./hello", "lldb", false},
		{"/usr/bin/lldb", "lldb -v", "", false},
		{"/usr/bin/gcore", "gcore 42", "gcore", false},
		{"/home/u/.local/bin/py-spy", "py-spy dump --pid 42", "py-spy", false},
		{"/home/u/.local/bin/py-spy", "py-spy record -o p.svg -- python3 x.py", "py-spy", false},
		{"/home/u/.local/bin/py-spy", "py-spy --version", "", false},
		{"/usr/bin/perf", "perf record -g ./hello", "perf", false},
		{"/usr/bin/perf", "perf stat ls", "perf", false},
		{"/usr/bin/perf", "perf report", "", false},
		{"/usr/bin/perf", "perf list", "", false},
		{"/usr/bin/rr", "rr record ./hello", "rr", false},
		{"/usr/bin/rr", "rr replay", "", false},
		{"/usr/bin/docker", "docker ps", "docker", false},
		{"/usr/bin/docker", "docker run -h box -v /x:/y --rm alpine true", "docker", false},
		{"/usr/bin/docker", "docker --context x compose up", "docker", false}, // an option's value taken as the verb: said
		{"/usr/bin/docker", "docker --version", "", false},
		{"/usr/bin/docker", "docker -v", "", false},
		{"/usr/bin/docker", "docker run --help", "", false},
		{"/usr/bin/docker", "docker help run", "", false},
		{"/usr/bin/docker", "docker context ls", "", false},
		{"/usr/bin/docker", "docker", "", false},
		{"/usr/bin/ping", "ping -c1 example.com", "ping", false},
		{"/usr/sbin/traceroute", "traceroute example.com", "traceroute", false},
		// Queries and other programs: no note.
		{"/usr/bin/apt", "apt list --installed", "", false},
		{"/usr/bin/apt-get", "apt-get --help", "", false},
		{"/usr/bin/apt-get", "apt-get -o Dir=/x install jq", "apt-get", false},
		{"/usr/bin/apt-get", "apt-get -oDir=/x install jq", "apt-get", false},
		{"/usr/bin/apt-get", "apt-get --option=Dir=/x -t bookworm-backports install jq", "apt-get", false},
		{"/usr/bin/apt-get", "apt-get -o APT::Get::Assume-Yes=true update", "apt-get", false},
		{"/usr/bin/apt-get", "apt-get -c /etc/x.conf source jq", "", false}, // the config file's name is not the verb
		{"/usr/bin/apt", "apt -o Dir=/x list --installed", "", false},
		{"/usr/bin/dnf", "dnf --setopt install_weak_deps=False --repo fedora install gcc", "dnf", false},
		{"/usr/bin/dnf", "dnf --repo install search gcc", "", false}, // a repository named install
		{"/usr/bin/zypper", "zypper --root /srv/x in git", "zypper", false},
		{"/sbin/apk", "apk -X https://mirror.example/alpine add curl", "apk", false},
		{"/sbin/apk", "apk --root /x info", "", false},
		{"/usr/bin/apt-cache", "apt-cache search jq", "", false},
		{"/usr/bin/dpkg", "dpkg -l", "", false},
		{"/usr/bin/dpkg", "dpkg -L bash -- -i", "", false},
		{"/usr/bin/rpm", "rpm -qa", "", false},
		{"/usr/bin/rpm", "rpm -qi bash", "", false},
		{"/usr/bin/pacman", "pacman -Qi git", "", false},
		{"/usr/bin/dnf", "dnf search gcc", "", false},
		{"/usr/bin/apk", "apk info", "", false},
		{"/usr/bin/npm", "npm install", "", false},
		{"/usr/bin/sudoku", "sudoku", "", false},
		{"", "", "", false},
	} {
		var argv []string
		if c.argv != "" {
			argv = strings.Split(c.argv, " ")
		}
		n, ok := For(c.path, argv)
		if ok != (c.key != "") || n.Key != c.key {
			t.Errorf("For(%q, %q) = %+v, %v; want key %q", c.path, c.argv, n, ok, c.key)
			continue
		}
		if !ok {
			continue
		}
		if n.NeedsSetID != c.setID {
			t.Errorf("%s: needs set-id %v", c.argv, n.NeedsSetID)
		}
		if conds := btoi(n.NeedsSetID) + btoi(n.NeedsReadOnly != "") + btoi(len(n.NeedsHostSocket) > 0) + btoi(n.NeedsOwnNet) + btoi(n.NeedsPtraceDenied) + btoi(n.NeedsBuiltinSeccomp); conds != 1 {
			t.Errorf("%s: %d conditions, want one: %+v", c.argv, conds, n)
		}
		if !strings.HasPrefix(n.Text, c.key+" cannot ") || !strings.Contains(n.Text, "whatever it says next") {
			t.Errorf("%s: %q", c.argv, n.Text)
		}
	}
}

func FuzzFor(f *testing.F) {
	f.Add("/usr/bin/pacman", "pacman\x00-S")
	f.Add("/usr/bin/rpm", "rpm\x00-")
	f.Fuzz(func(t *testing.T, path, args string) {
		n, ok := For(path, strings.Split(args, "\x00"))
		if ok && (n.Key == "" || n.Text == "" || btoi(n.NeedsSetID)+btoi(n.NeedsReadOnly != "")+btoi(len(n.NeedsHostSocket) > 0)+btoi(n.NeedsOwnNet)+btoi(n.NeedsPtraceDenied)+btoi(n.NeedsBuiltinSeccomp) != 1) {
			t.Fatalf("For(%q, %q) = %+v", path, args, n)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
