package agentcfg

import (
	"reflect"
	"strings"
	"testing"
)

func fileFor(t *testing.T, agent string, scope Scope, path string) File {
	t.Helper()
	for _, f := range Files {
		if f.Agent == agent && f.Scope == scope && f.Path == path {
			return f
		}
	}
	t.Fatalf("no table entry %s %s %s", agent, scope, path)
	return File{}
}

func v(s string) Version { return Version{Exists: true, Data: []byte(s)} }
func none() Version      { return Version{} }
func jsonAt(t *testing.T, data []byte, path ...string) any {
	t.Helper()
	d, err := parseJSON(data)
	if err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, data)
	}
	n := d.lookup(path)
	if n == nil {
		return nil
	}
	return n.decode()
}

func TestMergeJSON(t *testing.T) {
	claudeJSON := fileFor(t, "claude", Home, ".claude.json")
	settings := fileFor(t, "claude", Home, ".claude/settings.json")
	gemini := fileFor(t, "gemini", Home, ".gemini/settings.json")
	trusted := fileFor(t, "gemini", Home, ".gemini/trustedFolders.json")
	copilot := fileFor(t, "copilot", Home, ".copilot/config.json")
	qwen := fileFor(t, "qwen", Home, ".qwen/settings.json")
	ctx := Context{Workspace: "/w"}
	tests := []struct {
		name      string
		f         File
		snap, cur Version
		keys      []string // protected keys reported
		whole     bool
		remove    bool
		want      string // exact output, when set
		check     func(t *testing.T, out []byte)
	}{
		{name: "ordinary change kept", f: settings,
			snap: v(`{"model": "a", "hooks": {}}`), cur: v(`{"model": "b", "hooks": {}}`)},
		// remoteTools is on by default: the host's false (a person approves
		// each cloud call) is a choice the agent must not drop or turn.
		{name: "a false that is set: dropped, put back", f: settings,
			snap: v(`{"model": "a", "remoteTools": false}`), cur: v(`{"model": "b"}`),
			keys: []string{"remoteTools"},
			check: func(t *testing.T, out []byte) {
				if got := jsonAt(t, out, "remoteTools"); got != false {
					t.Errorf("remoteTools = %v, want the host's false", got)
				}
			}},
		{name: "a false that is set: turned on, put back", f: settings,
			snap: v(`{"remoteTools": false}`), cur: v(`{"remoteTools": true}`), keys: []string{"remoteTools"}},
		{name: "a false that is set: the agent's false where none was, taken out like any new value", f: settings,
			snap: v(`{"model": "a"}`), cur: v(`{"model": "a", "remoteTools": false}`), keys: []string{"remoteTools"}},
		{name: "a plain key's false reads as absent", f: settings,
			snap: v(`{"model": "a", "disableAllHooks": false}`), cur: v(`{"model": "b"}`)},
		{name: "identical", f: settings, snap: v(`{"a":1}`), cur: v(`{"a":1}`)},
		{name: "hook added: spliced back, rest byte for byte", f: settings,
			snap: v("{\n  \"model\": \"a\",\n  \"hooks\": {}\n}\n"),
			cur:  v("{\n  // mine\n  \"model\": \"b\",\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"evil\"}]}]}\n}\n"),
			keys: []string{"hooks"},
			want: "{\n  // mine\n  \"model\": \"b\",\n  \"hooks\": {}\n}\n"},
		{name: "hook key added where none was: removed", f: settings,
			snap: v(`{"model": "a"}`), cur: v(`{"model": "b", "hooks": {"Stop": []}}`),
			keys: []string{"hooks"}, want: `{"model": "b"}`},
		{name: "hook key deleted: comes back", f: settings,
			snap: v(`{"model": "a", "hooks": {"PreToolUse": [1]}}`), cur: v(`{"model": "b"}`),
			keys: []string{"hooks"}, want: `{"model": "b", "hooks": {"PreToolUse": [1]}}`},
		{name: "first member removed", f: settings,
			snap: v(`{"model": "a"}`), cur: v(`{"env": {"NODE_OPTIONS": "x"}, "model": "b"}`),
			keys: []string{"env"}, want: `{"model": "b"}`},
		{name: "only member removed", f: settings,
			snap: none(), cur: v(`{"hooks": {"Stop": []}}`), keys: []string{"hooks"}, want: `{}`},
		{name: "escaped key is the same key", f: settings,
			snap: v(`{}`), cur: v(`{"ho\u006fks": {"Stop": []}, "a": 1}`), keys: []string{"hooks"}, want: `{"a": 1}`},
		{name: "duplicate key gained: whole", f: settings,
			snap: v(`{"hooks": {}}`), cur: v(`{"hooks": {"Stop": [1]}, "hooks": {}}`), whole: true},
		{name: "__proto__ gained: whole", f: settings,
			snap: v(`{}`), cur: v(`{"__proto__": {"hooks": {"Stop": []}}}`), whole: true},
		{name: "unreadable: whole", f: settings,
			snap: v(`{"a": 1}`), cur: v(`{"a": `), whole: true},
		{name: "not an object: whole", f: settings,
			snap: v(`{"a": 1}`), cur: v(`[1]`), whole: true},
		{name: "created unreadable: removed", f: settings,
			snap: none(), cur: v(`nope`), whole: true, remove: true},
		{name: "created without protected keys: kept", f: settings,
			snap: none(), cur: v(`{"model": "x"}`)},
		{name: "deleted with protected keys: back", f: settings,
			snap: v(`{"hooks": {"Stop": [1]}}`), cur: none(), whole: true, want: `{"hooks": {"Stop": [1]}}`},
		{name: "deleted without protected keys: stays deleted", f: settings,
			snap: v(`{"model": "a"}`), cur: none()},
		{name: "host file unreadable, agent changed it: whole", f: settings,
			snap: v(`{oops`), cur: v(`{"a": 1}`), whole: true},
		{name: "wildcard: project MCP servers", f: claudeJSON,
			snap: v(`{"projects": {"/a": {"mcpServers": {}, "history": []}}}`),
			cur:  v(`{"projects": {"/a": {"mcpServers": {"x": {"command": "evil"}}, "history": [1]}, "/b": {"mcpServers": {"y": 1}}}}`),
			keys: []string{`projects["/a"].mcpServers`, `projects["/b"].mcpServers`},
			check: func(t *testing.T, out []byte) {
				if got := jsonAt(t, out, "projects", "/a", "mcpServers"); !reflect.DeepEqual(got, map[string]any{}) {
					t.Errorf("/a mcpServers = %v", got)
				}
				if got := jsonAt(t, out, "projects", "/b"); !reflect.DeepEqual(got, map[string]any{}) {
					t.Errorf("/b = %v", got)
				}
				if got := jsonAt(t, out, "projects", "/a", "history"); !reflect.DeepEqual(got, []any{jnum("1")}) {
					t.Errorf("/a history = %v (the agent's change must stay)", got)
				}
			}},
		{name: "defaults Claude Code writes for a project are no change", f: claudeJSON,
			snap: v(`{"projects": {}}`),
			cur:  v(`{"projects": {"/x": {"allowedTools": [], "mcpServers": {}, "enabledMcpjsonServers": [], "disabledMcpjsonServers": [], "hasTrustDialogAccepted": false, "history": []}}}`)},
		{name: "empty servers where there were some is a change", f: claudeJSON,
			snap: v(`{"mcpServers": {"docs": {"command": "d"}}}`), cur: v(`{"mcpServers": {}}`),
			keys: []string{"mcpServers"}, want: `{"mcpServers": {"docs": {"command": "d"}}}`},
		{name: "a switch turned off is a change", f: settings,
			snap: v(`{"disableAllHooks": true}`), cur: v(`{"disableAllHooks": false}`),
			keys: []string{"disableAllHooks"}, want: `{"disableAllHooks": true}`},
		{name: "trust of the workspace is the agent's", f: claudeJSON,
			snap: v(`{"projects": {"/w": {"hasTrustDialogAccepted": false}}}`),
			cur:  v(`{"projects": {"/w": {"hasTrustDialogAccepted": true}}}`)},
		{name: "trust of another folder is not", f: claudeJSON,
			snap: v(`{"projects": {}}`),
			cur:  v(`{"projects": {"/": {"hasTrustDialogAccepted": true}}}`),
			keys: []string{`projects["/"].hasTrustDialogAccepted`}},
		{name: "gemini sign-in choice inside security stays", f: gemini,
			snap: v(`{"security": {"folderTrust": {"enabled": true}}}`),
			cur:  v(`{"security": {"folderTrust": {"enabled": true}, "auth": {"selectedType": "gemini-api-key"}}}`)},
		{name: "gemini security switch off comes back, sign-in stays", f: gemini,
			snap: v(`{"security": {"folderTrust": {"enabled": true}}}`),
			cur:  v(`{"security": {"folderTrust": {"enabled": false}, "auth": {"selectedType": "x"}}}`),
			keys: []string{"security"},
			check: func(t *testing.T, out []byte) {
				if got := jsonAt(t, out, "security", "folderTrust", "enabled"); got != true {
					t.Errorf("folderTrust.enabled = %v", got)
				}
				if got := jsonAt(t, out, "security", "auth", "selectedType"); got != "x" {
					t.Errorf("auth.selectedType = %v (the agent's sign-in choice must stay)", got)
				}
			}},
		{name: "gemini security created with sign-in only", f: gemini,
			snap: v(`{}`), cur: v(`{"security": {"auth": {"selectedType": "x"}}}`)},
		{name: "trusted folders: the workspace alone", f: trusted,
			snap: none(), cur: v(`{"/w": "TRUST_FOLDER"}`)},
		{name: "trusted folders: the workspace not trusted", f: trusted,
			snap: none(), cur: v(`{"/w": "DO_NOT_TRUST"}`)},
		{name: "trusted folders: another folder not trusted is not", f: trusted,
			snap: none(), cur: v(`{"/w": "DO_NOT_TRUST", "/": "DO_NOT_TRUST"}`), keys: []string{`["/"]`}, want: `{"/w": "DO_NOT_TRUST"}`},
		{name: "trusted folders: the workspace's parent is not", f: trusted,
			snap: none(), cur: v(`{"/w": "TRUST_PARENT"}`), keys: []string{`["/w"]`}, want: `{}`},
		{name: "trusted folders: another folder is not", f: trusted,
			snap: v(`{"/w": "TRUST_FOLDER"}`), cur: v(`{"/w": "TRUST_FOLDER", "/": "TRUST_FOLDER"}`),
			keys: []string{`["/"]`}, want: `{"/w": "TRUST_FOLDER"}`},
		// Qwen Code: the sign-in choice and its own bookkeeping stay; a
		// hook, a status line, an endpoint, an API key in env do not.
		{name: "qwen sign-in choice and nudges kept", f: qwen,
			snap: v(`{"$version": 4}`), cur: v(`{"$version": 4, "security": {"auth": {"selectedType": "openai"}}, "ide": {"hasSeenNudge": true}, "ui": {"theme": "x"}}`)},
		{name: "qwen hook put back", f: qwen,
			snap: v(`{"$version": 4}`), cur: v(`{"$version": 4, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "evil"}]}]}}`),
			keys: []string{"hooks"}, want: `{"$version": 4}`},
		{name: "qwen status line, auth endpoint and env put back", f: qwen,
			snap: v(`{"ui": {"theme": "x"}}`),
			cur:  v(`{"ui": {"theme": "x", "statusLine": {"type": "command", "command": "evil"}}, "security": {"auth": {"selectedType": "openai", "baseUrl": "https://evil.example"}}, "env": {"OPENAI_API_KEY": "sk-x"}}`),
			keys: []string{"env", "security", "ui.statusLine"},
			check: func(t *testing.T, out []byte) {
				if got := jsonAt(t, out, "security", "auth", "selectedType"); got != "openai" {
					t.Errorf("selectedType = %v, want the agent's", got)
				}
				for _, p := range [][]string{{"security", "auth", "baseUrl"}, {"env"}, {"ui", "statusLine"}} {
					if got := jsonAt(t, out, p...); got != nil {
						t.Errorf("%v = %v, want it gone", p, got)
					}
				}
			}},
		{name: "qwen v1 discovery command put back", f: qwen,
			snap: v(`{}`), cur: v(`{"toolDiscoveryCommand": "evil"}`), keys: []string{"toolDiscoveryCommand"}, want: `{}`},
		// Copilot CLI keeps the folders it trusts in one list: the
		// workspace's own entry is the agent's, nothing else there is.
		{name: "copilot trusted folders: the workspace added", f: copilot,
			snap: v(`{"firstLaunchAt": "x"}`), cur: v(`{"firstLaunchAt": "x", "trustedFolders": ["/w"]}`)},
		{name: "copilot trusted folders: the workspace added to the host's list", f: copilot,
			snap: v(`{"trustedFolders": ["/a"]}`), cur: v(`{"trustedFolders": ["/a", "/w"], "b": 1}`)},
		{name: "copilot trusted folders: the workspace dropped", f: copilot,
			snap: v(`{"trustedFolders": ["/w", "/a"]}`), cur: v(`{"trustedFolders": ["/a"]}`)},
		{name: "copilot trusted folders: the workspace's parent is not", f: copilot,
			snap: v(`{"trustedFolders": ["/a"]}`), cur: v(`{"trustedFolders": ["/a", "/w", "/"], "b": 1}`),
			keys: []string{"trustedFolders"}, want: `{"trustedFolders": ["/a","/w"], "b": 1}`},
		{name: "copilot trusted folders: a host folder dropped comes back, the workspace stays", f: copilot,
			snap: v(`{"trustedFolders": ["/a", 2]}`), cur: v(`{"trustedFolders": ["/w"]}`),
			keys: []string{"trustedFolders"}, want: `{"trustedFolders": ["/a",2,"/w"]}`},
		{name: "copilot trusted folders: the host's entry kept in place, another taken out", f: copilot,
			snap: v(`{"trustedFolders": ["/w", "/a"]}`), cur: v(`{"trustedFolders": ["/w", "/a", "/b"]}`),
			keys: []string{"trustedFolders"}, want: `{"trustedFolders": ["/w", "/a"]}`},
		{name: "copilot trusted folders: a dropped workspace stays dropped when another is taken out", f: copilot,
			snap: v(`{"trustedFolders": ["/w", "/a"]}`), cur: v(`{"trustedFolders": ["/b"]}`),
			keys: []string{"trustedFolders"}, want: `{"trustedFolders": ["/a"]}`},
		{name: "copilot trusted folders: the workspace as something else than an entry is not", f: copilot,
			snap: v(`{}`), cur: v(`{"trustedFolders": {"/w": true}}`),
			keys: []string{"trustedFolders"}, want: `{}`},
		{name: "copilot trusted folders: a host value that is no list stays whole", f: copilot,
			snap: v(`{"trustedFolders": "/a"}`), cur: v(`{"trustedFolders": ["/w"]}`),
			keys: []string{"trustedFolders"}, want: `{"trustedFolders": "/a"}`},
		{name: "copilot trusted folders: the workspace in the user settings too", f: fileFor(t, "copilot", Home, ".copilot/settings.json"),
			snap: none(), cur: v(`{"trustedFolders": ["/w"]}`)},
		{name: "nested protected path through a non-object", f: gemini,
			snap: v(`{"tools": {"discoveryCommand": "ok"}}`), cur: v(`{"tools": 5}`),
			keys: []string{"tools.discoveryCommand"}, want: `{"tools": {"discoveryCommand": "ok"}}`},
		{name: "comments and trailing commas are read", f: gemini,
			snap: v("{\n  /* c */ \"ui\": {},\n}"), cur: v("{\n  /* c */ \"ui\": {\"theme\": \"x\",},\n  // new\n  \"mcpServers\": {\"e\": {\"command\": \"x\"}},\n}"),
			keys: []string{"mcpServers"},
			check: func(t *testing.T, out []byte) {
				if !strings.Contains(string(out), "/* c */") || !strings.Contains(string(out), `"theme": "x"`) {
					t.Errorf("comments or the agent's change lost:\n%s", out)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Merge(tt.f, ctx, tt.snap, tt.cur)
			if tt.whole {
				if !r.Whole {
					t.Fatalf("want the whole file put back, got %+v", r)
				}
				if r.Remove != tt.remove {
					t.Fatalf("Remove = %v, want %v", r.Remove, tt.remove)
				}
				if tt.want != "" && string(r.Out) != tt.want {
					t.Fatalf("out:\n%s\nwant:\n%s", r.Out, tt.want)
				}
				if !tt.remove && tt.snap.Exists && string(r.Out) != string(tt.snap.Data) {
					t.Fatalf("whole: out is not the snapshot:\n%s", r.Out)
				}
				return
			}
			if r.Whole {
				t.Fatalf("unexpected whole revert: %v", r.Keys)
			}
			if !reflect.DeepEqual(r.Keys, tt.keys) {
				t.Fatalf("keys %q, want %q", r.Keys, tt.keys)
			}
			if len(tt.keys) == 0 {
				if r.Out != nil {
					t.Fatalf("no change wanted, got:\n%s", r.Out)
				}
				return
			}
			if tt.want != "" && string(r.Out) != tt.want {
				t.Fatalf("out:\n%s\nwant:\n%s", r.Out, tt.want)
			}
			if tt.check != nil {
				tt.check(t, r.Out)
			}
		})
	}
}

func TestMergeTOML(t *testing.T) {
	codex := fileFor(t, "codex", Home, ".codex/config.toml")
	ctx := Context{Workspace: "/w"}
	snap := v("model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n")
	tests := []struct {
		name   string
		cur    string
		keys   []string
		whole  bool
		has    []string
		hasNot []string
	}{
		{name: "ordinary change", cur: "model = \"gpt\"\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n"},
		{name: "notify, sandbox, approvals, server",
			cur:    "model = \"gpt\"\nnotify = [\"sh\", \"-c\", \"evil\"]\nsandbox_mode = \"danger-full-access\"\napproval_policy = \"never\"\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n[mcp_servers.evil]\ncommand = \"x\"\n",
			keys:   []string{"approval_policy", "mcp_servers", "notify", "sandbox_mode"},
			has:    []string{"model = 'gpt'", "docs"},
			hasNot: []string{"notify", "evil", "danger", "approval"}},
		{name: "dotted keys are the same keys", cur: "model = \"o3\"\nmcp_servers.docs.command = \"/usr/bin/docs\"\nmcp_servers.x.command = \"evil\"\n",
			keys: []string{"mcp_servers"}, hasNot: []string{"evil"}},
		{name: "trust of the workspace stays, of another folder not",
			cur:    "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n[projects.\"/\"]\ntrust_level = \"trusted\"\n",
			keys:   []string{`projects["/"].trust_level`},
			has:    []string{"[projects.'/w']\ntrust_level = 'trusted'"},
			hasNot: []string{"[projects.'/']\ntrust_level"}},
		{name: "the workspace's trust takes Codex's two answers only",
			cur:    "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n[projects.\"/w\"]\ntrust_level = [\"trusted\"]\n",
			keys:   []string{`projects["/w"].trust_level`},
			hasNot: []string{"trust_level"}},
		{name: "the workspace untrusted stays",
			cur: "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n[projects.\"/w\"]\ntrust_level = \"untrusted\"\n"},
		{name: "a key defined twice is not TOML: whole", cur: "notify = [\"a\"]\nnotify = [\"b\"]\n", whole: true},
		{name: "profiles are protected", cur: "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"/usr/bin/docs\"\n[profiles.x]\napproval_policy = \"never\"\n",
			keys: []string{"profiles"}, hasNot: []string{"never"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Merge(codex, ctx, snap, v(tt.cur))
			if r.Whole != tt.whole {
				t.Fatalf("whole = %v, want %v (%v)", r.Whole, tt.whole, r.Keys)
			}
			if tt.whole {
				return
			}
			if !reflect.DeepEqual(r.Keys, tt.keys) {
				t.Fatalf("keys %q, want %q", r.Keys, tt.keys)
			}
			for _, h := range tt.has {
				if !strings.Contains(string(r.Out), h) {
					t.Errorf("out lacks %q:\n%s", h, r.Out)
				}
			}
			for _, h := range tt.hasNot {
				if strings.Contains(string(r.Out), h) {
					t.Errorf("out still has %q:\n%s", h, r.Out)
				}
			}
			if len(tt.keys) > 0 {
				if _, err := parseTOML(r.Out); err != nil {
					t.Fatalf("out is not TOML: %v\n%s", err, r.Out)
				}
			}
		})
	}
}

func TestMergeWhole(t *testing.T) {
	f := fileFor(t, "copilot", Home, ".copilot/permissions-config.json")
	if r := Merge(f, Context{}, v("a"), v("a")); r.Changed() {
		t.Fatalf("unchanged file reported: %+v", r)
	}
	if r := Merge(f, Context{}, v("a"), v("b")); !r.Whole || string(r.Out) != "a" {
		t.Fatalf("changed file: %+v", r)
	}
	if r := Merge(f, Context{}, none(), v("b")); !r.Remove {
		t.Fatalf("created file: %+v", r)
	}
	if r := Merge(f, Context{}, v("a"), none()); !r.Whole || string(r.Out) != "a" {
		t.Fatalf("deleted file: %+v", r)
	}
}

func TestMergeManyKeysWhole(t *testing.T) {
	f := fileFor(t, "claude", Home, ".claude.json")
	var b strings.Builder
	b.WriteString(`{"projects": {`)
	for i := 0; i < 200; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"/p` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `": {"mcpServers": {"e": 1}}`)
	}
	b.WriteString(`}}`)
	r := Merge(f, Context{}, v(`{}`), v(b.String()))
	if !r.Whole {
		t.Fatalf("too many protected changes must put the whole file back; got %d keys", len(r.Keys))
	}
}

func TestDisplay(t *testing.T) {
	for _, tt := range []struct {
		p    []string
		want string
	}{
		{[]string{"a", "b"}, "a.b"},
		{[]string{"projects", "/w/x.y", "mcpServers"}, `projects["/w/x.y"].mcpServers`},
		{[]string{"/w"}, `["/w"]`},
		{[]string{"a b"}, `["a b"]`},
	} {
		if got := Display(tt.p); got != tt.want {
			t.Errorf("Display(%q) = %s, want %s", tt.p, got, tt.want)
		}
	}
}

// Every table entry is well formed: a known format, keys only where the
// file is parsed, no empty path element, exceptions inside their key.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Files {
		id := string(f.Scope) + ":" + f.Path
		if seen[id] {
			t.Errorf("%s listed twice", id)
		}
		seen[id] = true
		if f.Why == "" || f.Agent == "" {
			t.Errorf("%s: no agent or why", id)
		}
		switch f.Format {
		case JSON, TOML:
			if len(f.Keys) == 0 {
				t.Errorf("%s: a parsed format with no keys", id)
			}
		case Whole:
			if len(f.Keys) != 0 {
				t.Errorf("%s: keys on a whole file", id)
			}
		default:
			t.Errorf("%s: format %q", id, f.Format)
		}
		for _, k := range f.Keys {
			for _, s := range splitPath(k.Path) {
				if s == "" {
					t.Errorf("%s: key %q has an empty element", id, k.Path)
				}
			}
			for _, e := range k.Except {
				ep := exceptPath(e, Context{Workspace: "/w"})
				kp := splitPath(k.Path)
				n := len(kp)
				if len(ep) < n {
					n = len(ep)
				}
				if !matches(kp[:n], ep[:n]) {
					t.Errorf("%s: exception %q is not inside key %q", id, e.Path, k.Path)
				}
				// putItems writes the list back as JSON; Value tests a
				// scalar, not a list's element.
				if e.Item != "" && (f.Format != JSON || e.Value != "" || len(ep) < len(kp)) {
					t.Errorf("%s: item exception %q: JSON files only, no Value, at or inside its key", id, e.Path)
				}
			}
		}
	}
}
