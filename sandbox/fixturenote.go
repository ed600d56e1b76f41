package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
)

// This file: the note that names a project's test data the built-in
// protections hide. A Go package's testdata/server.key, a Java project's
// src/test/resources/keystore.jks, a fixture named credentials.json: the
// tests that read them failed inside with "permission denied", and
// nothing said why or what to do short of --no-default-deny.

// fixtureNotePrefix starts the note (shownNote says it at start).
const fixtureNotePrefix = "test data: "

// testDirs are the names of directories that hold a project's tests or
// their data, by the usual layouts (Go, Maven and Gradle, Rails, Jest).
var testDirs = map[string]bool{
	"testdata": true, "test": true, "tests": true, "fixtures": true,
	"__fixtures__": true, "__tests__": true, "spec": true,
}

// depDirs are the names of directories that hold other projects' code: a
// dependency's own test keys (node_modules/*/test/fixtures/*.key, a
// vendored module's testdata) are not what the project's tests read, and
// naming them would be noise in every npm project.
var depDirs = map[string]bool{
	"node_modules": true, "bower_components": true, "vendor": true, "third_party": true,
	"site-packages": true, "dist-packages": true, ".venv": true, "venv": true, ".tox": true, ".nox": true,
}

// fixtureNote says which built-in protections hide files under a test
// directory of the workspace, and the lift that would show that tree (the
// one with the most of them), or "". Masks are the walk's (package
// fsrules); only what the lift would show counts (fsrules.Liftable: not
// what a symlink or another hard link of a protected name elsewhere
// hides, not git's, not an unreadable directory, not the user's --deny),
// and nothing in a dependency's tree (depDirs).
func fixtureNote(masks []fsrules.Mask, ws string) string {
	trees := map[string][]fsrules.Mask{}
	for _, m := range masks {
		if m.Kind != fsrules.Hide || !strings.HasPrefix(m.Path, ws+"/") {
			continue
		}
		rel := m.Path[len(ws)+1:]
		parts := strings.Split(rel, "/")
		if slices.ContainsFunc(parts, func(p string) bool { return depDirs[p] }) {
			continue
		}
		for i, p := range parts[:len(parts)-1] {
			if testDirs[p] {
				// Only what the lift named would show: a built-in's own
				// hit (fsrules.Liftable), asked only of masks in test data.
				if fsrules.Liftable(m.Rule) {
					tree := strings.Join(parts[:i+1], "/")
					trees[tree] = append(trees[tree], m)
				}
				break
			}
		}
	}
	if len(trees) == 0 {
		return ""
	}
	names := make([]string, 0, len(trees))
	for t := range trees {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := len(trees[names[i]]), len(trees[names[j]]); a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	tree := names[0]
	ms := trees[tree]
	first := ms[0]
	rel, _ := filepath.Rel(ws, first.Path)
	what := fmt.Sprintf("%s (built-in %s)", rel, strings.TrimPrefix(first.Rule, "default: "))
	if n := len(ms) - 1; n > 0 {
		what += fmt.Sprintf(" and %d more", n)
	}
	more := ""
	if n := len(names) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more such tree", n)
		if n > 1 {
			more += "s"
		}
		more += ")"
	}
	// The workspace named: the note is said once for these words, and
	// another project's tests hit the same wall.
	return fmt.Sprintf("%shidden in %s: %s under %s%s; if your tests read them, `no-default-deny-at` %s shows that tree, and the rest stays protected",
		fixtureNotePrefix, ws, what, tree, more, tree)
}
