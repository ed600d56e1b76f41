package policy

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
)

// ErrInvalid marks a policy the user must fix; the CLI exits 125 with the message.
var ErrInvalid = errors.New("invalid policy")

// Errors about the user's values name the option by its key ("allow-domain"),
// never as a flag: a value may come from a flag, a config file, a profile or
// a settings file, and only the reader knows which. Readers find the key and
// the value with the OptionValue and Conflict methods and put the source in
// front (the flag as typed, file:line, the profile's name). Other packages
// (fsrules, netproxy) follow the same shape with their own error types.
//
// Where a message suggests another option, it writes the key between
// backquotes ("use `allow-ip` for addresses"); RefPattern finds them, and a
// reader spells them as its user would type them (--allow-ip, or allow-ip in
// a file). Unrendered, as in the audit trail, they still read well.

// RefPattern matches an option reference in error text: `key`. It is
// compiled at first use, not in package init (which every jail process
// pays, the sandbox's init and each jail exec among them).
var RefPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([a-z][a-z0-9-]*)`") })

// FieldError is a problem with one value of one option.
type FieldError struct {
	Key    string // the option: "allow-domain"
	Value  string // the value as given
	Reason string // what is wrong and what would be right
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Key, e.Reason)
	}
	return fmt.Sprintf("%s %q: %s", e.Key, e.Value, e.Reason)
}

// Unwrap makes every FieldError an ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// OptionValue returns the option, the value and the reason, for a reader to
// prefix with the value's source.
func (e *FieldError) OptionValue() (key, value, reason string) { return e.Key, e.Value, e.Reason }

// ConflictError is two values that cannot be used together.
type ConflictError struct {
	Key1, Value1 string
	Key2, Value2 string
	Reason       string
}

func (e *ConflictError) Error() string {
	side := func(k, v string) string {
		if v == "" || v == "true" {
			return k
		}
		return fmt.Sprintf("%s %q", k, v)
	}
	return fmt.Sprintf("%s conflicts with %s: %s", side(e.Key1, e.Value1), side(e.Key2, e.Value2), e.Reason)
}

// Unwrap makes every ConflictError an ErrInvalid.
func (e *ConflictError) Unwrap() error { return ErrInvalid }

// Conflict returns both sides and the reason, for a reader to attach sources.
func (e *ConflictError) Conflict() (key1, value1, key2, value2, reason string) {
	return e.Key1, e.Value1, e.Key2, e.Value2, e.Reason
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}
