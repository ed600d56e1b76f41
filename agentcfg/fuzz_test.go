package agentcfg

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// toStd converts a decoded tree to what encoding/json (UseNumber) yields.
func toStd(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = toStd(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = toStd(e)
		}
		return a
	case jnum:
		return json.Number(x)
	}
	return v
}

// FuzzParseJSON: the parser never panics; on strict JSON it reads what
// encoding/json reads; every edit leaves a document it reads again.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a": 1, "b": [true, null, "x"]}`, "{\n // c\n \"a\": {\"b\": 2,},\n}",
		`{"a": 1, "a": 2}`, `{"__proto__": {"x": 1}}`, `{"k\u0041": "\ud83d\ude00"}`, `[1]`, `{"a": /* x */ 1}`,
		"\xef\xbb\xbf{}", `{"a": -0.5e+10}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseJSON(data)
		if err != nil {
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if json.Valid(data) && dec.Decode(&m) == nil && m != nil && !bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
				t.Fatalf("valid JSON object refused: %v", err)
			}
			return
		}
		got := d.root.decode()
		if json.Valid(data) && len(d.oddities()) == 0 {
			var want any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if dec.Decode(&want) == nil && !reflect.DeepEqual(toStd(got), want) {
				t.Fatalf("reads\n%v\nencoding/json reads\n%v", toStd(got), want)
			}
		}
		// Delete, then set, each top-level key and one nested path.
		for _, m := range d.root.members {
			paths := [][]string{{m.key}}
			if m.val.kind == jObject && len(m.val.members) > 0 {
				paths = append(paths, []string{m.key, m.val.members[0].key}, []string{m.key, "new", "deep"})
			}
			for _, p := range paths {
				b, err := jsonSet(d, p, nil)
				if err != nil {
					t.Fatalf("delete %q: %v", p, err)
				}
				d2, err := parseJSON(b)
				if err != nil {
					t.Fatalf("delete %q broke the document: %v\n%s", p, err, b)
				}
				if d2.lookup(p) != nil {
					t.Fatalf("delete %q: still there:\n%s", p, b)
				}
				raw := `{"x": [1, "y"]}`
				b, err = jsonSet(d, p, &raw)
				if err != nil {
					t.Fatalf("set %q: %v", p, err)
				}
				d3, err := parseJSON(b)
				if err != nil {
					t.Fatalf("set %q broke the document: %v\n%s", p, err, b)
				}
				n := d3.lookup(p)
				if n == nil || !reflect.DeepEqual(n.decode(), map[string]any{"x": []any{jnum("1"), "y"}}) {
					t.Fatalf("set %q: not set:\n%s", p, b)
				}
			}
		}
	})
}

// FuzzMergeJSON: whatever the agent writes, the result (when not the whole
// snapshot) reads back with every protected key as in the snapshot.
func FuzzMergeJSON(f *testing.F) {
	var settings, claudeJSON File
	for _, x := range Files {
		switch {
		case x.Agent == "claude" && x.Scope == Home && x.Path == ".claude/settings.json":
			settings = x
		case x.Agent == "claude" && x.Path == ".claude.json":
			claudeJSON = x
		}
	}
	snap := []byte("{\n  \"model\": \"a\",\n  \"hooks\": {\"Stop\": [1]},\n  \"projects\": {\"/w\": {\"mcpServers\": {}, \"hasTrustDialogAccepted\": false}}\n}\n")
	for _, s := range []string{
		`{"model": "b"}`, `{"hooks": {}, "env": {"A": "b"}}`, `{"projects": {"/x": {"mcpServers": {"e": 1}}}}`,
		`{"hooks": 1, "hooks": 2}`, "{\n// c\n\"hooks\": {\"Stop\": [2]},\n}", `{"projects": {"/w": {"hasTrustDialogAccepted": true}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, cur []byte) {
		for _, file := range []File{settings, claudeJSON} {
			ctx := Context{Workspace: "/w"}
			r := Merge(file, ctx, v(string(snap)), v(string(cur)))
			if r.Whole {
				if !bytes.Equal(r.Out, snap) {
					t.Fatalf("whole revert is not the snapshot")
				}
				continue
			}
			out := cur
			if r.Changed() {
				out = r.Out
			}
			d, err := parseJSON(out)
			if err != nil {
				t.Fatalf("result does not parse: %v\n%s", err, out)
			}
			sd, _ := parseJSON(snap)
			s, c := &jsonDoc{sd}, &jsonDoc{d}
			for _, pk := range protectedPaths(file, ctx, s, c) {
				if !equalMasked(s, c, pk) {
					t.Fatalf("%s differs from the snapshot after merge:\n%s", Display(pk.path), out)
				}
			}
		}
	})
}

// FuzzMergeTOML: the same for Codex's TOML.
func FuzzMergeTOML(f *testing.F) {
	var codex File
	for _, x := range Files {
		if x.Agent == "codex" && x.Scope == Home {
			codex = x
		}
	}
	snap := []byte("model = \"o3\"\n[mcp_servers.docs]\ncommand = \"d\"\n")
	for _, s := range []string{"model = \"x\"\n", "notify = [\"a\"]\n", "[mcp_servers.e]\ncommand = 1\n", "a.b.c = 1\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, cur []byte) {
		ctx := Context{Workspace: "/w"}
		r := Merge(codex, ctx, v(string(snap)), v(string(cur)))
		if r.Whole {
			return
		}
		out := cur
		if r.Changed() {
			out = r.Out
		}
		c, err := parseTOML(out)
		if err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, out)
		}
		s, _ := parseTOML(snap)
		for _, pk := range protectedPaths(codex, ctx, s, c) {
			if !equalMasked(s, c, pk) {
				t.Fatalf("%s differs from the snapshot after merge:\n%s", Display(pk.path), out)
			}
		}
	})
}
