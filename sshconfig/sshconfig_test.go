package sshconfig

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
)

const home = "/home/u"

func TestRead(t *testing.T) {
	in := `# my hosts
Include ~/.orbstack/ssh/config
Include config.d/* %d/.ssh/other.conf /etc/ssh/ssh_config.d/*.conf ~/.ssh/../outside

Host gh-work
    HostName github.com
    User git
    IdentityFile ~/.ssh/id_work
    IdentitiesOnly yes
    IdentityAgent ~/.1password/agent.sock

Host bastion
  identityfile=%d/.ssh/id_bastion.pub
  IdentityFile /home/u/.ssh/../.ssh/id_ed25519
  IdentityFile ~/keys/elsewhere
  IdentityFile ~/.ssh/id_%h
  IdentityFile "~/.ssh/quoted key"
  UserKnownHostsFile ~/.ssh/known_hosts_work /etc/ssh/other ~/.ssh/known_hosts2
  IdentityAgent none

Host *
  ControlMaster auto
  ControlPath ~/.ssh/cm-%r@%h:%p
  ControlPersist=10m
  IdentityAgent "SSH_AUTH_SOCK"`
	c := Read([]byte(in), home)
	if want := []string{"IdentityAgent", "ControlMaster", "ControlPersist", "IdentityAgent"}; !slices.Equal(c.Dropped, want) {
		t.Errorf("Dropped = %q, want %q", c.Dropped, want)
	}
	if want := []string{"/home/u/.ssh/id_work", "/home/u/.ssh/id_bastion.pub", "/home/u/.ssh/id_ed25519", "/home/u/.ssh/quoted key"}; !slices.Equal(c.IdentityFiles, want) {
		t.Errorf("IdentityFiles = %q, want %q", c.IdentityFiles, want)
	}
	if want := []string{"/home/u/.ssh/known_hosts_work", "/home/u/.ssh/known_hosts2"}; !slices.Equal(c.KnownHosts, want) {
		t.Errorf("KnownHosts = %q, want %q", c.KnownHosts, want)
	}
	if want := []string{"/home/u/.ssh/config.d/*", "/home/u/.ssh/other.conf"}; !slices.Equal(c.Includes, want) {
		t.Errorf("Includes = %q, want %q", c.Includes, want)
	}
	out := string(c.Content)
	for _, l := range strings.Split(out, "\n") {
		k, args := split(l)
		switch strings.ToLower(k) {
		case "controlmaster", "controlpersist":
			t.Errorf("the copy keeps %q", l)
		case "identityagent":
			if len(args) != 1 || args[0] != "none" {
				t.Errorf("the copy keeps %q", l)
			}
		}
	}
	for _, keep := range []string{"Include ~/.orbstack/ssh/config\n", "    HostName github.com\n", "  ControlPath ~/.ssh/cm-%r@%h:%p\n", "  IdentityAgent none\n",
		Dropped + "ssh signs through jail's relay (SSH_AUTH_SOCK) inside:     IdentityAgent ~/.1password/agent.sock\n"} {
		if !strings.Contains(out, keep) {
			t.Errorf("the copy lacks %q:\n%s", keep, out)
		}
	}
	// The last line had no newline: its comment ends the file with one.
	if !strings.HasSuffix(out, `IdentityAgent "SSH_AUTH_SOCK"`+"\n") {
		t.Errorf("the copy ends %q", out[len(out)-40:])
	}
	if n, m := strings.Count(in, "\n")+1, strings.Count(out, "\n"); n != m {
		t.Errorf("%d lines in, %d out: each line is kept or replaced by one", n, m)
	}
}

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		line string
		key  string
		args []string
	}{
		{"Host a b", "Host", []string{"a", "b"}},
		{"  identityfile=~/.ssh/x", "identityfile", []string{"~/.ssh/x"}},
		{"IdentityFile = \"a b\"", "IdentityFile", []string{"a b"}},
		{"IdentityFile\t~/.ssh/x # mine", "IdentityFile", []string{"~/.ssh/x"}},
		{"# IdentityAgent x", "", nil},
		{"", "", nil},
		{"IdentityAgent \"unbalanced", "IdentityAgent", nil},
		{"ControlMaster", "ControlMaster", nil},
	} {
		k, a := split(tt.line)
		if k != tt.key || !slices.Equal(a, tt.args) {
			t.Errorf("split(%q) = %q %q, want %q %q", tt.line, k, a, tt.key, tt.args)
		}
	}
}

func TestPublicKey(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk0 work\n", true},
		{"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY=", true},
		{"sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t x", true},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n", false},
		{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk0 PRIVATE", false},
		{"ssh-ed25519 AAAA", false},
		{"ssh-ed25519 not*base64*at*all*here", false},
		{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk0\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAB", false},
		{"", false},
	} {
		if got := PublicKey([]byte(tt.in)); got != tt.want {
			t.Errorf("PublicKey(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// FuzzRead: any configuration is read without a panic; each line is kept
// whole or replaced by one comment line holding it; no line of the copy
// is an IdentityAgent (other than none), ControlMaster or ControlPersist;
// every path named lies in home/.ssh.
func FuzzRead(f *testing.F) {
	f.Add([]byte("Host x\n IdentityAgent ~/a\n IdentityFile ~/.ssh/id\n"))
	f.Add([]byte("ControlMaster=auto\r\nUserKnownHostsFile \"~/.ssh/k h\" %d/.ssh/k2"))
	f.Add([]byte("Include config.d/* ../x ~/.ssh/../../etc/passwd\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c := Read(in, home)
		if n, m := bytes.Count(in, []byte("\n")), bytes.Count(c.Content, []byte("\n")); m < n || m > n+1 {
			t.Fatalf("%d newlines in, %d out", n, m)
		}
		for _, l := range strings.Split(string(c.Content), "\n") {
			k, args := split(l)
			switch strings.ToLower(k) {
			case "controlmaster", "controlpersist":
				t.Fatalf("the copy keeps %q", l)
			case "identityagent":
				if len(args) != 1 || !strings.EqualFold(args[0], "none") {
					t.Fatalf("the copy keeps %q", l)
				}
			}
		}
		for _, p := range append(append([]string(nil), c.IdentityFiles...), c.KnownHosts...) {
			if !strings.HasPrefix(p, home+"/.ssh/") || strings.Contains(p[len(home)+6:], "/") {
				t.Fatalf("a path outside %s/.ssh: %q", home, p)
			}
		}
		for _, p := range c.Includes {
			if !strings.HasPrefix(p, home+"/.ssh/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
				t.Fatalf("an Include outside %s/.ssh: %q", home, p)
			}
		}
	})
}

func TestHostNames(t *testing.T) {
	in := `Host gh-work gh-alt *.corp !bad
  User git
  HostName GitHub.com
  HostName ignored.example
Host gh-work
  HostName second.example
Host bastion
  Port 2222
Match host x
  HostName matched.example
Host tok
  HostName %h.example
Host plain
  hostname=plain.example`
	got := HostNames([]byte(in))
	want := map[string]string{"gh-work": "github.com", "gh-alt": "github.com", "plain": "plain.example"}
	if !maps.Equal(got, want) {
		t.Errorf("HostNames = %v, want %v", got, want)
	}
}

func TestGlobalIdentityAgent(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Host *\n  IdentityAgent \"~/.1password/agent.sock\"\n", "/home/u/.1password/agent.sock"},
		{"IdentityAgent=%d/.agent\nHost *\n  IdentityAgent /other\n", "/home/u/.agent"},
		{"Host work\n  IdentityAgent /work.sock\nHost *\n  IdentityAgent /all.sock\n", "/all.sock"},
		{"Host work\n  IdentityAgent /work.sock\n", ""},
		{"Match all\n  IdentityAgent /m.sock\n", "/m.sock"},
		{"Host *\n  IdentityAgent SSH_AUTH_SOCK\n", ""},
		{"Host *\n  IdentityAgent ${SSH_AUTH_SOCK}\n", ""},
		{"Host *\n  IdentityAgent none\n", ""},
		{"Host *\n  IdentityAgent /run/user/%i/agent\n", ""},
		{"Host *\n  IdentityAgent relative.sock\n", ""},
		{"", ""},
	} {
		if got := GlobalIdentityAgent([]byte(tt.in), home); got != tt.want {
			t.Errorf("GlobalIdentityAgent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
