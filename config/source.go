package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/policy"
)

// SourceKind says what kind of reader produced a value.
type SourceKind int

// Source kinds, from the lowest layer to the highest.
const (
	FromDefault SourceKind = iota
	FromProfile
	FromFile     // a config file: the user's, a project's, --config
	FromSettings // a sandbox-runtime / Claude Code settings file
	FromFlag
)

// Source says where one value came from, precisely enough for an error to
// point at it: the flag, file:line and key, or the profile.
type Source struct {
	Kind    SourceKind
	Flag    string // FromFlag: "--write"
	File    string // the file (FromFile, FromSettings, FromProfile); "" for a built-in profile
	Line    int    // 1-based; 0 when unknown
	Key     string // the key as the file spells it ("network.allowedDomains" in a settings file)
	Profile string // FromProfile: the profile's name
	Raw     string // the value as written there
}

// where is the location for messages: "file:line", "profile claude
// (file:line)", "" for a flag or a default.
func (s Source) where() string {
	loc := s.File
	if s.Line > 0 {
		loc += ":" + strconv.Itoa(s.Line)
	}
	switch s.Kind {
	case FromProfile:
		if s.File == "" {
			return "profile " + s.Profile + " (built in, line " + strconv.Itoa(s.Line) + ")"
		}
		return "profile " + s.Profile + " (" + loc + ")"
	case FromFile, FromSettings:
		return loc
	}
	return ""
}

// subject names the value the way its user wrote it: "--timeout 10",
// "timeout = "10"", "network.allowedDomains "https://x/"".
func (s Source) subject(key, value string) string {
	if s.Raw != "" || s.Kind != FromDefault {
		value = s.Raw
	}
	switch s.Kind {
	case FromFlag:
		if o := policy.Lookup(key); o != nil && o.Kind == policy.Bool {
			if value == "" || value == "true" {
				return s.Flag
			}
			return s.Flag + "=" + value
		}
		if value == "" {
			return s.Flag
		}
		return s.Flag + " " + value
	case FromSettings:
		key = s.Key
	case FromDefault:
		return key + " " + strconv.Quote(value) + " (the default)"
	}
	if value == "" {
		return key
	}
	return key + " " + strconv.Quote(value)
}

// spellRefs renders the `key` references of a library's message for the
// user of this source: --key on the command line, key in a file.
func spellRefs(msg string, flags bool) string {
	return policy.RefPattern().ReplaceAllStringFunc(msg, func(m string) string {
		key := m[1 : len(m)-1]
		if policy.Lookup(key) == nil || !flags {
			return key
		}
		return "--" + key
	})
}

// Origins records where every value of the effective policy came from: per
// option, per value for lists, the last setter for other kinds.
type Origins map[string]map[string]Source

func (o Origins) set(opt *policy.Option, value string, src Source) {
	m := o[opt.Name]
	if m == nil {
		m = map[string]Source{}
		o[opt.Name] = m
	}
	if opt.Kind == policy.List {
		if _, ok := m[value]; !ok {
			m[value] = src
		}
		return
	}
	m[""] = src
}

// Lookup returns the source of value for the option key.
func (o Origins) Lookup(key, value string) (Source, bool) {
	m := o[key]
	if src, ok := m[value]; ok {
		return src, true
	}
	src, ok := m[""]
	return src, ok
}

// Explain renders err as one line for the user, with the source of every
// value it names: "--timeout 10: add a unit, e.g. 10s or 5m",
// "~/.config/jail/config.toml:3: memory "lots": not a size ...",
// "--read-only conflicts with write "." (.jail.toml:2): ...". Errors that
// name no option come back as they are, their `key` references spelled as
// flags.
func (o Origins) Explain(err error) string {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe.Error()
	}
	var cf interface {
		Conflict() (k1, v1, k2, v2, reason string)
	}
	if errors.As(err, &cf) {
		k1, v1, k2, v2, reason := cf.Conflict()
		s1, ok1 := o.Lookup(k1, v1)
		s2, ok2 := o.Lookup(k2, v2)
		flags := (!ok1 || s1.Kind == FromFlag) && (!ok2 || s2.Kind == FromFlag)
		side := func(src Source, ok bool, k, v string) string {
			if !ok && k == "workspace" {
				return "the workspace (" + v + ")"
			}
			if !ok {
				// Set by nobody (a default, or inferred): named the way
				// the user would set it.
				subj := k
				if flags {
					subj = "--" + k
				}
				if v != "" && v != "true" {
					subj += " " + v
				}
				return subj
			}
			subj := src.subject(k, v)
			if w := src.where(); w != "" {
				subj += " (" + w + ")"
			}
			return subj
		}
		return side(s1, ok1, k1, v1) + " conflicts with " + side(s2, ok2, k2, v2) + ": " + spellRefs(reason, flags)
	}
	var ov interface {
		OptionValue() (key, value, reason string)
	}
	if errors.As(err, &ov) {
		key, value, reason := ov.OptionValue()
		more := ""
		if n := countOptionErrors(err); n > 1 {
			more = fmt.Sprintf(" (and %d more)", n-1)
		}
		src, ok := o.Lookup(key, value)
		if !ok {
			return spellRefs(err.Error(), true) + more
		}
		msg := src.subject(key, value) + ": " + spellRefs(reason, src.Kind == FromFlag) + more
		if w := src.where(); w != "" {
			msg = w + ": " + msg
		}
		return msg
	}
	return spellRefs(err.Error(), true)
}

// countOptionErrors counts the option errors in a joined error.
func countOptionErrors(err error) int {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		n := 0
		for _, e := range j.Unwrap() {
			n += countOptionErrors(e)
		}
		return n
	}
	if _, ok := err.(interface {
		OptionValue() (string, string, string)
	}); ok {
		return 1
	}
	if u := errors.Unwrap(err); u != nil {
		return countOptionErrors(u)
	}
	return 0
}

// Note renders a notice about one value with its source, like Explain.
func (o Origins) Note(key, value, msg string) string {
	src, ok := o.Lookup(key, value)
	if !ok {
		return spellRefs(key+" "+strconv.Quote(value)+": "+msg, true)
	}
	s := src.subject(key, value) + ": " + spellRefs(msg, src.Kind == FromFlag)
	if w := src.where(); w != "" {
		s = w + ": " + s
	}
	return s
}

// FileError is a mistake in a file, with its place: "file:line: key: reason".
type FileError struct {
	File   string
	Line   int
	Key    string // "" for a syntax error
	Reason string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap makes every FileError an ErrInvalid.
func (e *FileError) Unwrap() error { return policy.ErrInvalid }

// OriginsOf records the sources of settings (the flags, before Resolve has
// read anything else), so an error from reading the files can still name a
// flag's value.
func OriginsOf(settings []Setting) Origins {
	o := Origins{}
	for _, s := range settings {
		o.set(s.Option, s.Value, s.Source)
	}
	return o
}

// SpellFlags renders the `key` references of a message as flags (--key),
// for a message whose values' sources are not known (the supervisor's).
func SpellFlags(msg string) string { return spellRefs(msg, true) }
