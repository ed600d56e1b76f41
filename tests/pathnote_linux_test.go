package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// A tool in ~/.local/bin (uv, ruff, a pipx install) runs as the command,
// but an agent's shell does not find it: the home is empty inside. The
// first start says which PATH directories are hidden and names the fix;
// --runnable shows the tool for what the command runs, read-only.
func TestHiddenPathNamed(t *testing.T) {
	home, env := everydayHome(t)
	bin := filepath.Join(home, ".local/bin")
	writeExec(t, filepath.Join(bin, "mytool"), "#!/bin/sh\necho MYTOOL-RAN\n")
	env = append(env, "PATH="+bin+":/usr/local/bin:/usr/bin:/bin")
	note := "PATH: ~/.local/bin (mytool) is hidden inside with your home"

	r := sh(t, runOpts{env: env}, `mytool`)
	if r.code != 127 || !strings.Contains(r.stderr, note) || !strings.Contains(r.stderr, "--runnable NAME") {
		t.Fatalf("a hidden PATH tool: exit %d, want 127 and the note %q\nstderr: %s", r.code, note, r.stderr)
	}
	r = sh(t, runOpts{env: env}, `mytool`)
	if strings.Contains(r.stderr, "PATH: ") {
		t.Fatalf("the note is said at every start:\n%s", r.stderr)
	}
	r = sh(t, runOpts{env: env}, `mytool; echo x > ~/.local/bin/mytool 2>/dev/null && echo WRITTEN; true`, "--runnable", "mytool")
	if r.code != 0 || !strings.Contains(r.stdout, "MYTOOL-RAN") || strings.Contains(r.stdout, "WRITTEN") {
		t.Fatalf("--runnable mytool: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "runnable mytool: ") {
		t.Errorf("no note says what --runnable showed:\n%s", r.stderr)
	}
	r = run(t, runOpts{env: env}, "--dry-run", "--runnable", "absent-tool", "--", "true")
	if !strings.Contains(r.stdout+r.stderr, "not on PATH: runnable absent-tool") {
		t.Errorf("--dry-run does not say an absent runnable was skipped:\n%s%s", r.stdout, r.stderr)
	}
}

// A command init cannot find is looked up on the host too (session 49,
// trying `jail -- sudo` as a user would on a machine without sudo: jail
// said "command not found inside the sandbox (is it on a hidden path?
// make its directory visible: read DIR)", sending the user looking for a
// directory that does not exist, with the option's bare key): a command
// the host lacks too is said so; one the host has where the sandbox hides
// it (jail exec of a ~/.local/bin tool) is named, with the flags that run
// it.
func TestNotFoundSaysHost(t *testing.T) {
	home, env := everydayHome(t)
	bin := filepath.Join(home, ".local/bin")
	writeExec(t, filepath.Join(bin, "mytool"), "#!/bin/sh\necho MYTOOL-RAN\n")
	env = append(env, "PATH="+bin+":/usr/local/bin:/usr/bin:/bin")
	rt, _ := privateRuntime(t)
	env = append(env, rt...)
	o := runOpts{env: env}

	r := run(t, o, "--", "no-such-command-jailtest")
	if want := "jail: no-such-command-jailtest: command not found, inside the sandbox or on the host (the same PATH)\n"; r.code != 127 || !strings.Contains(r.stderr, want) {
		t.Errorf("a command the host lacks too: exit %d, want 127 and %q\nstderr: %s", r.code, want, r.stderr)
	}
	if strings.Contains(r.stderr, "hidden path") {
		t.Errorf("a command the host lacks is said to be hidden:\n%s", r.stderr)
	}

	name := "nf" + strings.ReplaceAll(marker(), ".", "")
	mustCode(t, run(t, o, "run", "-d", "--name", name), 0)
	t.Cleanup(func() { run(t, o, "kill", "--now", name) })
	r = run(t, o, "exec", name, "--", "mytool")
	want := "mytool: command not found inside the sandbox: the host's is ~/.local/bin/mytool, which the sandbox hides; start the sandbox with --runnable mytool to run it (or --read ~/.local/bin)"
	if r.code != 127 || !strings.Contains(r.stderr, want) {
		t.Errorf("jail exec of a hidden tool: exit %d, want 127 and %q\nstderr: %s", r.code, want, r.stderr)
	}
	r = run(t, o, "exec", name, "--", "no-such-command-jailtest")
	if want := "no-such-command-jailtest: command not found, inside the sandbox or on the host (the same PATH)"; r.code != 127 || !strings.Contains(r.stderr, want) {
		t.Errorf("jail exec of a command the host lacks: exit %d, want 127 and %q\nstderr: %s", r.code, want, r.stderr)
	}
}

// The command's own argument naming a file of the home (seen: `jail --
// cat ~/datasets/a.csv` said only cat's "No such file or directory", a
// path the user typed and jail knew it hides) is named at start with the
// flags that show it; with --read it is shown, and nothing is said.
func TestHiddenArgumentNamed(t *testing.T) {
	home, env := everydayHome(t)
	data := filepath.Join(home, "datasets", "a.csv")
	writeFile(t, data, "1,2\n")
	note := "jail: argument ~/datasets/a.csv is hidden inside (in your home, which the sandbox sees empty): --read ~/datasets/a.csv shows it read-only, --write ~/datasets/a.csv writable\n"
	r := run(t, runOpts{env: env}, "--", "cat", data)
	if r.code == 0 || !strings.Contains(r.stderr, note) {
		t.Errorf("a hidden argument: exit %d, want a failure and %q\nstderr: %s", r.code, note, r.stderr)
	}
	r = run(t, runOpts{env: env}, "--read", filepath.Dir(data), "--", "cat", data)
	if r.code != 0 || r.stdout != "1,2\n" || strings.Contains(r.stderr, "argument ") {
		t.Errorf("--read the argument's directory: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, runOpts{env: env}, "--", "cat", filepath.Join(home, "missing.csv"))
	if strings.Contains(r.stderr, "argument ") {
		t.Errorf("a path the host lacks too was said:\n%s", r.stderr)
	}
}

// A workspace file the protections mask, named as the command's argument
// (`jail -- cat .env`), is said at start with the lift of that file, not
// left to the program's "Permission denied"; the lift shows it, and the
// rest stays hidden.
func TestMaskedArgumentNamed(t *testing.T) {
	ws, env := secretsWorkspace(t, ".env", "SECRET=1\n", "dev.key", "KEY\n")
	note := "jail: argument .env is unreadable inside: the built-in protection .env hides it; --no-default-deny-at .env shows it, and the rest stays protected\n"
	r := run(t, runOpts{dir: ws, env: env}, "--", "cat", ".env")
	if r.code == 0 || !strings.Contains(r.stderr, note) {
		t.Errorf("a masked argument: exit %d, want a failure and %q\nstderr: %s", r.code, note, r.stderr)
	}
	r = run(t, runOpts{dir: ws, env: env}, "--no-default-deny-at", ".env", "--", "sh", "-c", "cat .env; cat dev.key")
	if r.stdout != "SECRET=1\n" || !strings.Contains(r.stderr, "dev.key") || strings.Contains(r.stderr, "argument ") {
		t.Errorf("the lift said: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, runOpts{dir: ws, env: env}, "--deny", "dev.key", "--", "cat", "dev.key")
	if want := "jail: argument dev.key is unreadable inside: your --deny dev.key hides it\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("a --deny'd argument: want %q\nstderr: %s", want, r.stderr)
	}
}

// A project's .env, which a program loading it (python-dotenv's
// load_dotenv) meets as "Permission denied", is named at the first start
// in that workspace with the ways out, and not again.
func TestDotenvNamedOnce(t *testing.T) {
	ws, env := secretsWorkspace(t, ".env", "SECRET=1\n", ".env.local", "SECRET=2\n")
	note := "jail: secrets: .env, .env.local are unreadable inside (built-in protection): a program that loads them (dotenv, docker compose) fails with \"Permission denied\"; if the run needs them, pass the variables it needs (--env NAME) or show .env (--no-default-deny-at .env)\n"
	r := run(t, runOpts{dir: ws, env: env}, "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, note) {
		t.Errorf("first start: exit %d, want %q\nstderr: %s", r.code, note, r.stderr)
	}
	r = run(t, runOpts{dir: ws, env: env}, "--", "true")
	if r.code != 0 || strings.Contains(r.stderr, "secrets: ") {
		t.Errorf("second start: exit %d, said again:\n%s", r.code, r.stderr)
	}
}

// A jail exec'd command's arguments that name a hidden or masked file are
// said to its client, with the flag for the sandbox's next start.
func TestExecArgumentNamed(t *testing.T) {
	home, env := everydayHome(t)
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, ".env"), "SECRET=1\n")
	writeFile(t, filepath.Join(home, "notes", "todo.md"), "x\n")
	o := runOpts{dir: ws, env: env}
	name := "an" + strings.ReplaceAll(marker(), ".", "")
	mustCode(t, run(t, o, "run", "-d", "--name", name), 0)
	t.Cleanup(func() { run(t, o, "kill", "--now", name) })
	r := run(t, o, "exec", name, "--", "cat", ".env", filepath.Join(home, "notes", "todo.md"))
	for _, want := range []string{
		"jail: argument .env is unreadable inside: the built-in protection .env hides it; start the sandbox with --no-default-deny-at .env to see it, the rest staying protected\n",
		"jail: argument ~/notes/todo.md is hidden inside (in your home, which the sandbox sees empty): start the sandbox with --read ~/notes/todo.md to see it read-only, or --write ~/notes/todo.md writable\n",
	} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("jail exec: exit %d, want a failure and %q\nstderr: %s", r.code, want, r.stderr)
		}
	}
	r = run(t, o, "exec", name, "--", "cat", "/dev/null")
	if r.code != 0 || strings.Contains(r.stderr, "argument ") {
		t.Errorf("jail exec of a visible file: exit %d\nstderr: %s", r.code, r.stderr)
	}
}

// secretsWorkspace is a fresh workspace holding the files of nameContent
// (name, content, ...) and the environment of a fresh home.
func secretsWorkspace(t *testing.T, nameContent ...string) (string, []string) {
	t.Helper()
	_, env := everydayHome(t)
	ws := workspace(t)
	for i := 0; i+1 < len(nameContent); i += 2 {
		writeFile(t, filepath.Join(ws, nameContent[i]), nameContent[i+1])
	}
	return ws, env
}
