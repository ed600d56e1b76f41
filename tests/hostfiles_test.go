//go:build linux

package tests

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// The agent-file tests' shared steps: the host's files written before a
// run, what the run changed of them after it, and the agent's own state
// that must stay writable.

// writeHostFiles writes files (absolute paths: the host's contents).
func writeHostFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, c := range files {
		fsWrite(t, "/", p, c, 0o644)
	}
}

// changedFiles lists, as "path = content", the files of want (absolute
// paths: the host's contents) whose content the run changed, but those
// whose path ends in one of skip (the agent's own state, which it may
// change).
func changedFiles(t *testing.T, want map[string]string, skip ...string) []string {
	t.Helper()
	var bad []string
	for p, w := range want {
		if slices.ContainsFunc(skip, func(s string) bool { return strings.HasSuffix(p, s) }) {
			continue
		}
		if got := fsReadFile(t, p); got != w {
			bad = append(bad, p+" = "+got)
		}
	}
	return bad
}

// leftFiles lists, as "path: left on the host", those of paths that exist
// (files the agent made that must not outlive the run).
func leftFiles(paths ...string) []string {
	var bad []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			bad = append(bad, p+": left on the host")
		}
	}
	return bad
}

// stateWritable fails t unless p holds want: the agent's own state, which
// its script wrote, stays writable (the control of a protection test).
func stateWritable(t *testing.T, c result, p, want string) {
	t.Helper()
	if got := fsReadFile(t, p); got != want {
		t.Errorf("%s = %q: the agent's own state must stay writable\n%s", p, got, c.stderr)
	}
}

// readJSONFile returns the JSON object in file p and its bytes, failing t
// when p cannot be read or is not a JSON object.
func readJSONFile(t *testing.T, p string) (map[string]any, []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v: %s", p, err, b)
	}
	return m, b
}
