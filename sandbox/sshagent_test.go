package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/sshconfig"
)

// --ssh-agent checks the agent and adds ~/.ssh/known_hosts as a copy,
// once however often it is expanded; a start without an agent fails
// naming the option. The socket's bind is the plan's (sshAgentMount).
// agentHome is a home under a fresh directory root and a listening
// socket beside it for SSH_AUTH_SOCK, with the environment naming both.
func agentHome(t *testing.T) (root, home, sock string, env []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(root, "home")
	sock = filepath.Join(root, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return root, home, sock, []string{"HOME=" + home, "SSH_AUTH_SOCK=" + sock}
}

func TestExpandSSHAgent(t *testing.T) {
	root, home, _, env := agentHome(t)
	write(t, filepath.Join(home, ".ssh/known_hosts"), "github.com ssh-ed25519 AAAA\n", 0o644)

	if err := expandSSHAgent(&policy.Policy{}, nil); err != nil {
		t.Fatalf("without the option: %v", err)
	}
	d := policy.Default()
	p := &d
	p.SSHAgent, p.Env, p.Command = true, []string{"GITHUB_TOKEN"}, []string{"true"}
	for range 2 {
		if err := expandSSHAgent(p, env); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(p.Env, []string{"GITHUB_TOKEN"}) || len(p.Read) != 0 {
		t.Errorf("the socket passed as a policy value: env %q, read %q", p.Env, p.Read)
	}
	if len(p.Files) != 1 || p.Files[0].Path != filepath.Join(home, ".ssh/known_hosts") || p.Files[0].Content != "github.com ssh-ed25519 AAAA\n" {
		t.Errorf("files %+v", p.Files)
	}
	if err := p.Check(); err != nil {
		t.Errorf("the expanded policy does not check: %v", err)
	}

	// No known_hosts: nothing placed, nothing said. One that is not a
	// regular file (a FIFO would hang the read): not copied, said.
	os.Remove(filepath.Join(home, ".ssh/known_hosts"))
	p = &policy.Policy{SSHAgent: true}
	if err := expandSSHAgent(p, env); err != nil || len(p.Files) != 0 || len(p.Notices) != 0 {
		t.Errorf("no known_hosts: err %v, files %+v, notices %q", err, p.Files, p.Notices)
	}
	if err := syscall.Mkfifo(filepath.Join(home, ".ssh/known_hosts"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = &policy.Policy{SSHAgent: true}
	expandSSHAgent(p, env) // the check, then the plan: said once
	if err := expandSSHAgent(p, env); err != nil || len(p.Files) != 0 || len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "~/.ssh/known_hosts is not copied") {
		t.Errorf("a FIFO known_hosts: err %v, files %+v, notices %q", err, p.Files, p.Notices)
	}

	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=" + home}, "SSH_AUTH_SOCK is not set"},
		{[]string{"HOME=" + home, "SSH_AUTH_SOCK=agent.sock"}, "not an absolute path"},
		{[]string{"HOME=" + home, "SSH_AUTH_SOCK=" + filepath.Join(root, "gone.sock")}, "names no socket"},
		{[]string{"HOME=" + home, "SSH_AUTH_SOCK=" + home}, "names no socket"},
	} {
		err := expandSSHAgent(&policy.Policy{SSHAgent: true}, c.env)
		var fe *policy.FieldError
		if !errors.As(err, &fe) || fe.Key != "ssh-agent" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a ssh-agent error with %q", c.env, err, c.want)
		}
	}
}

// TestAgentSocketOfIdentityAgent: the IdentityAgent ~/.ssh/config sets
// for every host is the agent relayed, before SSH_AUTH_SOCK's (as ssh
// takes it); one for a single host is not; one that names no socket fails
// the start naming it.
func TestAgentSocketOfIdentityAgent(t *testing.T) {
	root, home, sock, env := agentHome(t)
	ia := filepath.Join(root, "ia.sock")
	l, err := net.Listen("unix", ia)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := filepath.Join(home, ".ssh", "config")
	for _, c := range []struct {
		config string
		env    []string
		want   string
		err    string
	}{
		{"Host *\n  IdentityAgent " + ia + "\n", []string{"HOME=" + home}, ia, ""},
		{"Host *\n  IdentityAgent " + ia + "\n", env, ia, ""},
		{"Host work\n  IdentityAgent " + ia + "\n", env, sock, ""},
		{"Host *\n  IdentityAgent SSH_AUTH_SOCK\n", env, sock, ""},
		{"Host *\n  IdentityAgent " + filepath.Join(root, "gone.sock") + "\n", env, "", "IdentityAgent in ~/.ssh/config names no socket"},
	} {
		write(t, cfg, c.config, 0o644)
		got, err := agentSocketOf(c.env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %q, %v; want an error with %q", c.config, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q with %q: %q, %v; want %q", c.config, c.env, got, err, c.want)
		}
	}
}

// TestExpandSSHAgentConfig: the ssh config is placed as package
// sshconfig copies it, with the files it includes from under ~/.ssh
// (an Include loop read once); each IdentityFile in ~/.ssh gets its public half
// at its path (from NAME.pub, or the file itself when named .pub), never
// a private key, even one named .pub; a known-hosts file the config
// names is copied; past policy.MaxFiles nothing more is placed, said
// once.
func TestExpandSSHAgentConfig(t *testing.T) {
	_, home, _, env := agentHome(t)
	const pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk0d29yaw work\n"
	const private = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
	ssh := filepath.Join(home, ".ssh")
	write(t, filepath.Join(ssh, "id_work"), private, 0o600)
	write(t, filepath.Join(ssh, "id_work.pub"), pub, 0o644)
	write(t, filepath.Join(ssh, "id_pubonly.pub"), pub, 0o644)
	write(t, filepath.Join(ssh, "id_nopub"), private, 0o600)
	write(t, filepath.Join(ssh, "id_mixup.pub"), private, 0o600) // a private key named .pub
	write(t, filepath.Join(ssh, "kh_work"), "[h]:2222 ssh-ed25519 AAAA\n", 0o644)
	// An included file (config.d/*) is copied too, what it names with it;
	// one that includes itself back is read once.
	write(t, filepath.Join(ssh, "config.d/inc"), "Host inc\n  IdentityFile ~/.ssh/id_inc\n  IdentityAgent ~/.other\nInclude config.d/*\n", 0o644)
	write(t, filepath.Join(ssh, "id_inc.pub"), pub, 0o644)
	config := "Include config.d/* /etc/ssh/ssh_config.d/*\nHost w\n  IdentityFile ~/.ssh/id_work\n  IdentityFile ~/.ssh/id_pubonly.pub\n  IdentityFile ~/.ssh/id_nopub\n" +
		"  IdentityFile ~/.ssh/id_mixup.pub\n  IdentityFile ~/elsewhere/id\n  UserKnownHostsFile ~/.ssh/kh_work\n  IdentityAgent ~/.agent.sock\n"
	write(t, filepath.Join(ssh, "config"), config, 0o644)
	d := policy.Default()
	p := &d
	p.SSHAgent, p.Command = true, []string{"true"}
	for range 2 { // the check, then the plan
		if err := expandSSHAgent(p, env); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, f := range p.Files {
		got[strings.TrimPrefix(f.Path, ssh+"/")] = f.Content
	}
	if len(got) != len(p.Files) || len(got) != 6 {
		t.Errorf("files %q, want the config, config.d/inc, kh_work, id_work, id_inc and id_pubonly.pub, once each", slices.Collect(maps.Keys(got)))
	}
	if got["id_work"] != pub || got["id_pubonly.pub"] != pub || got["id_inc"] != pub || got["kh_work"] != "[h]:2222 ssh-ed25519 AAAA\n" {
		t.Errorf("files %q", got)
	}
	if c := got["config.d/inc"]; !strings.Contains(c, "Host inc\n") || strings.Contains(c, "\n  IdentityAgent") {
		t.Errorf("the included file's copy:\n%s", c)
	}
	if c := got["config"]; !strings.Contains(c, "IdentityFile ~/.ssh/id_work\n") || !strings.Contains(c, sshconfig.Dropped) || strings.Contains(c, "\n  IdentityAgent") {
		t.Errorf("the config copy:\n%s", c)
	}
	for path, c := range got {
		if strings.Contains(c, "PRIVATE") {
			t.Errorf("ATTACK WORKED: a private key placed at %s", path)
		}
	}
	if err := p.Check(); err != nil {
		t.Errorf("the expanded policy does not check: %v", err)
	}

	// Past MaxFiles: the rest is not placed, and that is said once.
	var many strings.Builder
	for i := range policy.MaxFiles + 2 {
		n := fmt.Sprintf("id_%d", i)
		write(t, filepath.Join(ssh, n+".pub"), pub, 0o644)
		fmt.Fprintf(&many, "IdentityFile ~/.ssh/%s\n", n)
	}
	write(t, filepath.Join(ssh, "config"), many.String(), 0o644)
	d = policy.Default()
	p = &d
	p.SSHAgent, p.Command = true, []string{"true"}
	expandSSHAgent(p, env)
	if err := expandSSHAgent(p, env); err != nil || len(p.Files) != policy.MaxFiles || len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "not every file ~/.ssh/config names is shown") {
		t.Errorf("past MaxFiles: err %v, %d files, notices %q", err, len(p.Files), p.Notices)
	}
	if err := p.Check(); err != nil {
		t.Errorf("the expanded policy does not check: %v", err)
	}
}

// The socket is bound at the sandbox's own /run, never over the host's
// /run, and not in degraded mode (no mounts: the command could not reach
// it).
func TestSSHAgentMount(t *testing.T) {
	_, _, sock, env := agentHome(t)
	run := []ns.Mount{{Kind: ns.KindTmpfs, Path: "/run"}}
	m, err := sshAgentMount(env, run, false)
	if err != nil || m.Kind != ns.KindROBind || m.Path != agentSocket || m.Source != sock {
		t.Errorf("the bind: %+v, %v", m, err)
	}
	for name, c := range map[string]struct {
		mounts   []ns.Mount
		degraded bool
	}{
		"degraded":          {run, true},
		"the host's /run":   {nil, false},
		"a write path /run": {append(run, ns.Mount{Kind: ns.KindBind, Path: "/run"}), false},
	} {
		if _, err := sshAgentMount(env, c.mounts, c.degraded); err == nil || !strings.Contains(err.Error(), "ssh-agent") {
			t.Errorf("%s: %v, want the option's error", name, err)
		}
	}
	if _, err := sshAgentMount(nil, run, false); err == nil {
		t.Errorf("no agent: no error")
	}
}
