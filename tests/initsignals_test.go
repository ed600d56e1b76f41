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
			// The supervisor's trace line "init started" comes when it has
			// sent init its spec: init's setup (mounts, walls, the go) runs
			// for milliseconds after it, the agent not yet forked.
			code, log := signalAtTraceLine(t, "supervisor init started", func(jail int) error {
				return syscall.Kill(jail, sig)
			})
			// The agent (sleep) killed by the signal: 128+sig.
			if want := 128 + int(sig); code != want {
				t.Fatalf("signal %v during init's setup: exit %d, want %d (the agent killed by it)\n%s", sig, code, want, log)
			}
		})
	}
}

// TestSIGTERMToInitDuringSetup: SIGTERM may reach init itself before the
// agent exists (from the host, or from a supervisor that did not hold
// it). Init catches SIGTERM from its main and passes it to the agent once
// forked: sent to init while it builds the sandbox (its first trace line
// seen, the agent not forked yet), the agent dies of it (143), not init of
// Go's default for an uncaught SIGTERM. (The supervisor's own timeout
// holds its SIGTERM until the agent exists: TestLimitsTimeout/during-start.)
func TestSIGTERMToInitDuringSetup(t *testing.T) {
	// "init main" is init's first trace line, sent once its spec is
	// decoded: init is past its main, before the mounts.
	code, log := signalAtTraceLine(t, "jail: init main", signalInit)
	if code != 128+int(syscall.SIGTERM) {
		t.Fatalf("SIGTERM to init during its setup: exit %d, want 143 (the agent killed by it)\n%s", code, log)
	}
}

// signalAtTraceLine runs `jail -- /bin/sleep 30` with JAIL_TRACE=1 and
// calls send with jail's pid at the first trace line holding marker. It
// returns jail's exit code and its stderr.
func signalAtTraceLine(t *testing.T, marker string, send func(jail int) error) (int, string) {
	t.Helper()
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
	sent := make(chan error, 1)
	scanned := make(chan struct{}) // stderr read to its end: jail has exited
	go func() {
		defer close(scanned)
		signalled := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), marker) {
				signalled = true
				sent <- send(cmd.Process.Pid)
			}
		}
		if !signalled {
			sent <- fmt.Errorf("no trace line %q", marker)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case <-scanned:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-scanned
		t.Fatalf("jail did not end after the signal at %q\n%s", marker, log.String())
	}
	if err := <-sent; err != nil {
		t.Error(err)
	}
	werr := cmd.Wait() // after every read of the pipe, as os/exec wants
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	}
	return code, log.String()
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
