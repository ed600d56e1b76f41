package agentcfg

import (
	"slices"
	"testing"
)

// Python tells a python script by its name or its #! line, and nothing
// else (a shell script, a node script, a #! line that only mentions python
// in an argument's directory).
func TestPython(t *testing.T) {
	for _, c := range []struct {
		path, head string
		want       bool
	}{
		{"/h/x.py", "", true},
		{"/h/x.pyw", "", true},
		{"/h/x", "#!/usr/bin/env python3\nimport os\n", true},
		{"/h/x", "#!/usr/bin/python3.11 -u\n", true},
		{"/h/x", "#! /opt/pypy3/bin/pypy3", true},
		{"/h/x.sh", "#!/bin/sh\npython3 -c 1\n", false},
		{"/h/x.js", "#!/usr/bin/env node\n", false},
		{"/h/x", "#!/bin/sh /python/x\n", false},
		{"/h/x", "", false},
		{"/h/x", "import os # python\n", false},
	} {
		if got := Python(c.path, []byte(c.head)); got != c.want {
			t.Errorf("Python(%q, %q) = %v, want %v", c.path, c.head, got, c.want)
		}
	}
}

// AgentDirs are the directories of the table's files, under the home and
// each project.
func TestAgentDirs(t *testing.T) {
	got := AgentDirs("/h", []string{"/w"})
	for _, want := range []string{"/h/.claude", "/h/.codex", "/h/.gemini", "/h/.copilot", "/w/.claude", "/w/.codex", "/w/.github/copilot"} {
		if !slices.Contains(got, want) {
			t.Errorf("AgentDirs: no %s in %q", want, got)
		}
	}
	for _, bad := range []string{"/h", "/w", "/w/.github", "/h/.github/copilot"} {
		if slices.Contains(got, bad) {
			t.Errorf("AgentDirs: %s in %q", bad, got)
		}
	}
}

// Python reads the first bytes of a script the agent may have written
// (a named script absent at start, created by an earlier run): any bytes,
// no panic.
func FuzzPython(f *testing.F) {
	f.Add("/h/x", "#!/usr/bin/env python3\n")
	f.Add("/h/x.py", "#!")
	f.Fuzz(func(t *testing.T, path, head string) {
		_ = Python(path, []byte(head))
	})
}

// RuntimeData names what a hook or server writes beside itself (for the
// note on a read-only script directory), not its code or its package's
// files.
func TestRuntimeData(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  bool
		want bool
	}{
		{"hook.log", false, true},
		{"hook.log.1", false, true},
		{"events.jsonl", false, true},
		{"state.json", false, true},
		{"hook-state.json", false, true},
		{".tokens.json", false, true},
		{"memory.db", false, true},
		{"server.pid", false, true},
		{"logs", true, true},
		{".cache", true, true},
		{"data", true, true},
		{"log.sh", false, false},
		{"index.js", false, false},
		{"package.json", false, false},
		{"package-lock.json", false, false},
		{"yarn.lock", false, false},
		{"catalog.json", false, false},
		{"statusline.py", false, false},
		{"node_modules", true, false},
		{"lib", true, false},
		{"state.json", true, false},
	} {
		if got := RuntimeData(c.name, c.dir); got != c.want {
			t.Errorf("RuntimeData(%q, %v) = %v, want %v", c.name, c.dir, got, c.want)
		}
	}
}
