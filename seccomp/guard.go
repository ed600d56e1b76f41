package seccomp

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Guard decides whether an exec is refused. It is a GUARD RAIL AGAINST
// MISTAKES (an agent running `rm -rf ~`), NOT A SECURITY BOUNDARY: argv is
// read from memory the process can change after the check (TOCTOU), and a
// script, an interpreter (`python -c 'shutil.rmtree("/")'`), a copy of the
// binary under another name or a plain syscall never exec a matching
// command line. A nil *Guard allows everything.
type Guard struct {
	rules []guardRule
}

type guardRule struct {
	name  string
	match func(argv []string, cwd string) bool
}

// ErrBadPattern is wrapped by NewGuard when a block-command pattern does
// not compile.
var ErrBadPattern = errors.New("invalid block-command pattern")

// PatternError is a refused block-command pattern. It names the option, not
// a flag: the reader that knows where the pattern came from says so (its
// OptionValue method is what readers look for).
type PatternError struct {
	Pattern string
	Reason  string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("block-command %q: %s", e.Pattern, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBadPattern) true.
func (e *PatternError) Unwrap() error { return ErrBadPattern }

// OptionValue returns the option, the pattern and the reason.
func (e *PatternError) OptionValue() (key, value, reason string) {
	return "block-command", e.Pattern, e.Reason
}

// NewGuard builds a Guard from block-command regular expressions (RE2
// syntax, matched anywhere in the argv joined with single spaces) and, if
// defaults, the built-in rules: recursive rm of /, the home directory or
// the workspace root (also as `.` or `..` from the cwd, `~`, `/*`, or any
// --no-preserve-root), mkfs/mke2fs/mkswap, dd to a block device, recursive
// chmod/chown of / (and chmod -R 777 of home or workspace), and fork-bomb
// shapes in `sh -c`/`perl -e` text. workspace and home may be empty.
func NewGuard(patterns []string, defaults bool, workspace, home string) (*Guard, error) {
	g := &Guard{}
	if defaults {
		g.rules = append(g.rules, defaultRules(cleanRoot(workspace), cleanRoot(home))...)
	}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, &PatternError{p, fmt.Sprintf("not a regular expression (%v); write RE2, e.g. '^git push'", strings.TrimPrefix(err.Error(), "error parsing regexp: "))}
		}
		if re.MatchString("") {
			return nil, &PatternError{p, "it matches every command; anchor it, e.g. '^git push'"}
		}
		g.rules = append(g.rules, guardRule{
			name:  "block-command:" + p,
			match: func(argv []string, _ string) bool { return re.MatchString(strings.Join(argv, " ")) },
		})
	}
	return g, nil
}

// Check returns the name of the first rule that refuses argv run in cwd,
// or "" when the exec may go on.
func (g *Guard) Check(argv []string, cwd string) string {
	if g == nil {
		return ""
	}
	for _, r := range g.rules {
		if r.match(argv, cwd) {
			return r.name
		}
	}
	return ""
}

func cleanRoot(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

func base(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return filepath.Base(argv[0])
}

// splitArgs separates flags from operands the way GNU getopt does (flags
// may follow operands; "--" ends flags).
func splitArgs(args []string) (flags, operands []string) {
	end := false
	for _, a := range args {
		switch {
		case end:
			operands = append(operands, a)
		case a == "--":
			end = true
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
		default:
			operands = append(operands, a)
		}
	}
	return
}

// hasShort reports whether a short-option cluster ("-rf") or a long option
// in flags contains one of the letters or equals one of the long names.
func hasFlag(flags []string, letters string, long ...string) bool {
	for _, f := range flags {
		if strings.HasPrefix(f, "--") {
			for _, l := range long {
				if f == l {
					return true
				}
			}
			continue
		}
		if strings.ContainsAny(f[1:], letters) {
			return true
		}
	}
	return false
}

// The default rules' regular expressions, compiled at the first guard's
// first use. Not package-level sync.OnceValue variables: those are made
// at package init, which links regexp (and its unicode tables and package
// inits) into every program that imports seccomp, the sandbox's init
// among them, which never runs a guard.
var guardREs struct {
	once                        sync.Once
	blockDev, mode777, forkBomb *regexp.Regexp
}

func compileGuardREs() {
	guardREs.once.Do(func() {
		guardREs.blockDev = regexp.MustCompile(`^of=/dev/(sd|hd|vd|xvd|nvme|mmcblk|loop|dm-|md|nbd|mapper/|disk/|root$)`)
		guardREs.mode777 = regexp.MustCompile(`^(0?777|[ugoa]*[+=]rwx[st]*)$`)
		guardREs.forkBomb = regexp.MustCompile(`(\w+|:)\s*\(\)\s*\{\s*(\w+|:)\s*\|\s*(\w+|:)\s*&\s*\}\s*;?\s*(\w+|:)|fork\s+while\s+fork|while\s*\(\s*1\s*\)\s*\{?\s*fork`)
	})
}

// mkfsName is the mkfs rule's test of a program's name, the regular
// expression ^(mkfs(\..+)?|mke2fs|mkswap|mkdosfs|mkntfs|wipefs)$ (mkfs, or
// mkfs. and at least one more character, none a newline) written out: it
// judges every command, the supervisor's own before the sandbox starts
// among them, which then needs no regular expression at all (the first
// compile costs 0.35-0.55 ms here, most of it the regexp package's own
// first use). FuzzMkfsName holds it to the expression.
func mkfsName(name string) bool {
	switch name {
	case "mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "wipefs":
		return true
	}
	rest, ok := strings.CutPrefix(name, "mkfs.")
	return ok && rest != "" && !strings.Contains(rest, "\n")
}

func blockDev() *regexp.Regexp { compileGuardREs(); return guardREs.blockDev }
func mode777() *regexp.Regexp  { compileGuardREs(); return guardREs.mode777 }
func forkBomb() *regexp.Regexp { compileGuardREs(); return guardREs.forkBomb }

var (
	shellNames = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "busybox": true, "perl": true, "python": true, "python3": true}
)

func defaultRules(workspace, home string) []guardRule {
	// protected says whether operand op (as typed, relative to cwd) names
	// /, the home directory or the workspace root.
	protected := func(op, cwd string, alsoSpaces bool) bool {
		switch op {
		case "/", "/*", "~", "~/", "~/*":
			return true
		}
		p := strings.TrimSuffix(op, "/*")
		if !filepath.IsAbs(p) {
			if cwd == "" {
				return false
			}
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		return p == "/" || (alsoSpaces && ((home != "" && p == home) || (workspace != "" && p == workspace)))
	}
	return []guardRule{
		{name: "default:rm-recursive-root", match: func(argv []string, cwd string) bool {
			if base(argv) != "rm" {
				return false
			}
			flags, ops := splitArgs(argv[1:])
			if hasFlag(flags, "", "--no-preserve-root") {
				return true
			}
			if !hasFlag(flags, "rR", "--recursive") {
				return false
			}
			for _, op := range ops {
				if protected(op, cwd, true) {
					return true
				}
			}
			return false
		}},
		{name: "default:mkfs", match: func(argv []string, _ string) bool {
			return mkfsName(base(argv))
		}},
		{name: "default:dd-to-block-device", match: func(argv []string, _ string) bool {
			if base(argv) != "dd" {
				return false
			}
			for _, a := range argv[1:] {
				if blockDev().MatchString(a) {
					return true
				}
			}
			return false
		}},
		{name: "default:chmod-recursive-root", match: func(argv []string, cwd string) bool {
			b := base(argv)
			if b != "chmod" && b != "chown" && b != "chgrp" {
				return false
			}
			flags, ops := splitArgs(argv[1:])
			if !hasFlag(flags, "R", "--recursive") {
				return false
			}
			is777 := false
			if b == "chmod" {
				for _, op := range ops {
					is777 = is777 || mode777().MatchString(op)
				}
			}
			for _, op := range ops {
				if protected(op, cwd, is777) {
					return true
				}
			}
			return false
		}},
		{name: "default:fork-bomb", match: func(argv []string, _ string) bool {
			if !shellNames[base(argv)] {
				return false
			}
			return forkBomb().MatchString(strings.Join(argv[1:], " "))
		}},
	}
}
