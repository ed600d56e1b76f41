//go:build linux

package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalsDuringInitSetup: a signal jail gets while init builds the
// sandbox (its spec sent, the agent not started yet) reaches the agent,
// and never ends init. Init catches SIGTERM at its main (the supervisor's
// timeout sends it to init at any time) and the other forwarded signals
// before it reports the agent started (the supervisor holds them until
// then); a signal init has not caught would end it with Go's default
// (exit 2), and the run with a setup error instead of the agent's death.
func TestSignalsDuringInitSetup(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(jail(t), "--", "/bin/sleep", "30")
			cmd.Dir = workspace(t)
			cmd.Env = append(cmd.Environ(), "JAIL_TRACE=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// The supervisor's trace line "init started" comes when it has
			// sent init its spec: init's setup (mounts, walls, the go) runs
			// for milliseconds after it, the agent not yet forked.
			var log strings.Builder
			sc := bufio.NewScanner(stderr)
			sent := make(chan struct{})
			go func() {
				signalled := false
				for sc.Scan() {
					log.WriteString(sc.Text() + "\n")
					if !signalled && strings.Contains(sc.Text(), "supervisor init started") {
						_ = cmd.Process.Signal(sig)
						signalled = true
						close(sent)
					}
				}
				if !signalled {
					close(sent)
				}
				_, _ = io.Copy(io.Discard, stderr)
			}()
			done := make(chan error, 1)
			go func() { <-sent; done <- cmd.Wait() }()
			var werr error
			select {
			case werr = <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("jail did not end after the signal")
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(werr, &ee) {
				code = ee.ExitCode()
			}
			// The agent (sleep) killed by the signal: 128+sig.
			if want := 128 + int(sig); code != want {
				t.Fatalf("signal %v during init's setup: exit %d, want %d (the agent killed by it)\n%s", sig, code, want, log.String())
			}
		})
	}
}

// TestSIGTERMToInitDuringSetup: the supervisor's timeout sends init
// SIGTERM whenever it fires, before the agent exists too (it does not hold
// it as it holds relayed signals). Init catches SIGTERM from its main and
// passes it to the agent once forked: sent to init while it builds the
// sandbox (its first trace line seen, the agent not forked yet), the agent
// dies of it (143), not init of Go's default for an uncaught SIGTERM.
// (The timeout itself is no test of this: its timer may fire before init's
// main, where the SIGTERM is dropped or ends init whatever init does.)
func TestSIGTERMToInitDuringSetup(t *testing.T) {
	cmd := exec.Command(jail(t), "--", "/bin/sleep", "30")
	cmd.Dir = workspace(t)
	cmd.Env = append(cmd.Environ(), "JAIL_TRACE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	signalled := make(chan error, 1)
	go func() {
		sent := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			// "init main" is init's first trace line, sent once its spec
			// is decoded: init is past its main, before the mounts.
			if !sent && strings.Contains(sc.Text(), "jail: init main") {
				sent = true
				signalled <- signalInit(cmd.Process.Pid)
			}
		}
		if !sent {
			signalled <- errors.New("no init trace line")
		}
	}()
	done := make(chan error, 1)
	go func() {
		if err := <-signalled; err != nil {
			t.Error(err)
		}
		done <- cmd.Wait()
	}()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("jail did not end after init's SIGTERM")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	}
	if code != 128+int(syscall.SIGTERM) {
		t.Fatalf("SIGTERM to init during its setup: exit %d, want 143 (the agent killed by it)\n%s", code, log.String())
	}
}

// signalInit sends SIGTERM to the supervisor's child named jail-init.
func signalInit(supervisor int) error {
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", supervisor, supervisor))
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(string(kids)) {
		pid, _ := strconv.Atoi(f)
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if strings.TrimSpace(string(comm)) == "jail-init" {
			return syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	// Threads other than the leader may have cloned it.
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", supervisor))
	for _, task := range tasks {
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", supervisor, task.Name()))
		for _, f := range strings.Fields(string(kids)) {
			pid, _ := strconv.Atoi(f)
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if strings.TrimSpace(string(comm)) == "jail-init" {
				return syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	}
	return fmt.Errorf("no jail-init child of the supervisor (%d): %q", supervisor, kids)
}
