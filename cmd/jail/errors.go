package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jail-sandbox/jail/internal/termsafe"
)

// Exit statuses of jail itself (the command's own status passes through).
const (
	exitOK    = 0
	exitSetup = 125 // jail could not do what was asked: a bad flag, file or policy, a failed setup
)

// usageError is a mistake the user can fix: one line, exit 125. msg is
// complete (it names the flag or the file, and the fix).
type usageError struct {
	msg string
	err error // what it words, for errors.As (nil: none)
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.err }

// exitError carries a status to exit with and nothing to print: the verb
// has said what it had to (the sandbox's own status, an audit verdict).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code}
}

// exitCode is the one place errors become exit statuses: nil 0, an
// exitError its code, everything else one line on stderr and 125.
func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// One line, whatever the error: a message spanning lines would be lost
	// in an agent's terminal output.
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
	// Escaped by termsafe's rule, as notices are: an error quotes what
	// files hold (a key of a .jail.toml the agent wrote, which jail trust
	// parses), and an ESC, C1 or bidi control in it would act on the
	// user's terminal (OSC 52 writes the clipboard) (review14b).
	fmt.Fprintf(stderr, "jail: %s\n", termsafe.Escape(msg))
	return exitSetup
}
