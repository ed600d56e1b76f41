// Command testreport reads a `go test -json` (test2json) stream on stdin,
// prints a readable log as it goes (one line per package, the full output of
// every failing test or package), and at the end the list of skipped tests,
// each checked against the allowlist (.ci/skips.allow). It exits 1 when a test
// or package failed, when a test skipped that the allowlist does not name for
// this run, or when no test ran at all: a CI that stays green with tests
// silently skipped proves nothing.
//
// Usage: go run ./.ci/testreport -scope root|user -allow .ci/skips.allow < events.json
//
// The allowlist has one entry a line:
//
//	SCOPE PACKAGE TEST-REGEXP [MESSAGE-SUBSTRING] # why it may skip on this kind of machine
//
// SCOPE is root, user or any (which run it applies to); PACKAGE the package
// path inside the module ("." for the root, * for any); TEST-REGEXP must
// match the whole test name (subtests included, e.g. TestX/i386); the
// optional MESSAGE-SUBSTRING (the rest of the line before #) must occur in
// the skip message, so an entry allows one reason, not every skip of a test.
// The "# why" is required.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of test2json output.
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type entry struct {
	line    int
	scope   string
	pkg     string
	test    *regexp.Regexp
	message string
	why     string
	used    int
}

type skip struct {
	pkg, test, message string
	allowed            *entry
}

const module = "github.com/jail-sandbox/jail"

func main() {
	scope := flag.String("scope", "", "root or user: which run this is")
	allowFile := flag.String("allow", ".ci/skips.allow", "the skip allowlist")
	flag.Parse()
	if *scope != "root" && *scope != "user" {
		fmt.Fprintln(os.Stderr, "testreport: -scope must be root or user")
		os.Exit(2)
	}
	allow, err := readAllow(*allowFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
		os.Exit(2)
	}
	r := &report{scope: *scope, allow: allow, out: os.Stdout, output: map[string][]string{}}
	if err := r.read(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
		os.Exit(2)
	}
	if !r.finish() {
		os.Exit(1)
	}
}

func relPkg(p string) string {
	if p == module {
		return "."
	}
	return strings.TrimPrefix(p, module+"/")
}

func readAllow(path string) ([]*entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*entry
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		body, why, ok := strings.Cut(line, "#")
		why = strings.TrimSpace(why)
		if !ok || why == "" {
			return nil, fmt.Errorf("%s:%d: an entry needs a reason after #", path, i+1)
		}
		f := strings.Fields(body)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want SCOPE PACKAGE TEST-REGEXP [MESSAGE] # why", path, i+1)
		}
		if f[0] != "root" && f[0] != "user" && f[0] != "any" {
			return nil, fmt.Errorf("%s:%d: scope %q is not root, user or any", path, i+1, f[0])
		}
		re, err := regexp.Compile("^(?:" + f[2] + ")$")
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		msg := strings.TrimSpace(strings.Join(f[3:], " "))
		out = append(out, &entry{line: i + 1, scope: f[0], pkg: f[1], test: re, message: msg, why: why})
	}
	return out, nil
}

type report struct {
	scope  string
	allow  []*entry
	out    io.Writer
	output map[string][]string // "pkg\x00test" -> output lines
	skips  []skip
	failed []string
	counts struct{ pass, fail, skip int }
	notes  []string // non-JSON lines (build errors before test2json starts)
}

func key(pkg, test string) string { return pkg + "\x00" + test }

func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			// go test prints build failures as plain text.
			fmt.Fprintf(r.out, "%s\n", line)
			r.notes = append(r.notes, string(line))
			continue
		}
		r.handle(ev)
	}
	return sc.Err()
}

func (r *report) handle(ev event) {
	k := key(ev.Package, ev.Test)
	switch ev.Action {
	case "output", "build-output":
		r.output[k] = append(r.output[k], ev.Output)
		return
	case "build-fail":
		r.failed = append(r.failed, relPkg(ev.Package)+" (build)")
		fmt.Fprintf(r.out, "FAIL build %s\n%s", relPkg(ev.Package), strings.Join(r.output[k], ""))
		return
	}
	if ev.Test == "" {
		// A package result.
		switch ev.Action {
		case "pass":
			fmt.Fprintf(r.out, "ok   %-28s %6.1fs\n", relPkg(ev.Package), ev.Elapsed)
		case "skip":
			fmt.Fprintf(r.out, "-    %-28s (no tests)\n", relPkg(ev.Package))
		case "fail":
			if n := len(r.failed); n == 0 || r.failed[n-1] != relPkg(ev.Package) {
				r.failed = append(r.failed, relPkg(ev.Package))
			}
			fmt.Fprintf(r.out, "FAIL %-28s %6.1fs\n%s", relPkg(ev.Package), ev.Elapsed, indent(r.output[k]))
		}
		delete(r.output, k)
		return
	}
	switch ev.Action {
	case "pass":
		r.counts.pass++
	case "fail":
		r.counts.fail++
		r.failed = append(r.failed, relPkg(ev.Package)+" "+ev.Test)
		fmt.Fprintf(r.out, "--- FAIL %s %s (%.1fs)\n%s", relPkg(ev.Package), ev.Test, ev.Elapsed, indent(r.output[k]))
	case "skip":
		r.counts.skip++
		s := skip{pkg: relPkg(ev.Package), test: ev.Test, message: skipMessage(r.output[k])}
		s.allowed = r.match(s)
		r.skips = append(r.skips, s)
	default:
		return
	}
	delete(r.output, k)
}

// skipMessage is what the test said when it skipped: its output without the
// framework's own lines.
func skipMessage(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		msg = append(msg, t)
	}
	return strings.Join(msg, " | ")
}

func (r *report) match(s skip) *entry {
	for _, e := range r.allow {
		if e.scope != "any" && e.scope != r.scope {
			continue
		}
		if e.pkg != "*" && e.pkg != s.pkg {
			continue
		}
		if !e.test.MatchString(s.test) || !strings.Contains(s.message, e.message) {
			continue
		}
		e.used++
		return e
	}
	return nil
}

func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, "=== ") {
			continue
		}
		b.WriteString("    " + l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// finish prints the summary and the skip list; false means the run failed.
func (r *report) finish() bool {
	ok := true
	sort.Slice(r.skips, func(i, j int) bool {
		if r.skips[i].pkg != r.skips[j].pkg {
			return r.skips[i].pkg < r.skips[j].pkg
		}
		return r.skips[i].test < r.skips[j].test
	})
	fmt.Fprintf(r.out, "\n== skipped tests (%s run): %d\n", r.scope, len(r.skips))
	unexpected := 0
	for _, s := range r.skips {
		tag := "allowed"
		if s.allowed == nil {
			tag = "NOT ALLOWED"
			unexpected++
		}
		fmt.Fprintf(r.out, "%-11s %s %s: %s\n", tag, s.pkg, s.test, s.message)
		if s.allowed != nil {
			fmt.Fprintf(r.out, "            (allowlist line %d: %s)\n", s.allowed.line, s.allowed.why)
		}
	}
	for _, e := range r.allow {
		if e.used == 0 && (e.scope == "any" || e.scope == r.scope) {
			fmt.Fprintf(r.out, "note: allowlist line %d (%s %s %s) matched no skip in this run\n", e.line, e.scope, e.pkg, e.test)
		}
	}
	fmt.Fprintf(r.out, "== %s run: %d passed, %d failed, %d skipped (%d not allowed)\n", r.scope, r.counts.pass, r.counts.fail, r.counts.skip, unexpected)
	if len(r.failed) > 0 {
		fmt.Fprintf(r.out, "FAILED: %s\n", strings.Join(r.failed, ", "))
		ok = false
	}
	if unexpected > 0 {
		fmt.Fprintf(r.out, "FAILED: %d skipped tests are not on the allowlist (%s): a security test must not skip in CI\n", unexpected, "add a commented entry only if the skip is right for this kind of machine")
		ok = false
	}
	if r.counts.pass == 0 {
		fmt.Fprintln(r.out, "FAILED: no test passed (nothing ran?)")
		ok = false
	}
	return ok
}
