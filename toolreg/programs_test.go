package toolreg

import (
	"strings"
	"testing"
)

func TestToolOf(t *testing.T) {
	for _, c := range []struct {
		path string
		argv string // split on spaces
		want string
	}{
		{"/usr/bin/npm", "npm install", NPM},
		{"/usr/lib/node_modules/npm/bin/npm-cli.js", "npm install", NPM},
		{"/usr/bin/node", "npm install", NPM}, // a script run under its name
		{"/home/u/.local/bin/pnpm", "pnpm add x", NPM},
		{"/usr/bin/yarn", "yarn", NPM},
		{"/usr/bin/npx", "npx tsc", NPM},
		{"/usr/local/go/bin/go", "go test ./...", Go},
		{"/home/u/.cargo/bin/cargo", "cargo build", Cargo},
		{"/usr/bin/pip", "pip install x", Pip},
		{"/usr/bin/pip3.12", "pip3.12 install x", Pip},
		{"/usr/bin/uv", "uv pip install x", Pip},
		{"/usr/bin/python3", "python3 -m pip install x", Pip},
		{"/usr/bin/python3.11", "python3.11 -I -m pip install x", Pip},
		{"/usr/bin/python3", "python3 -mpip install x", Pip},
		{"/ws/.venv/bin/python", "python -m pip install x", Pip},
		{"/usr/share/maven/bin/mvn", "mvn package", Maven},
		{"/bin/sh", "./mvnw -B verify", Maven}, // the wrapper script under its name
		{"/usr/bin/java", "java -jar app.jar", ""},
		// Not a download of the tool's packages.
		{"/usr/bin/python3", "python3 -m venv .venv", ""},
		{"/usr/bin/python3", "python3 script.py -m pip", ""},
		{"/usr/bin/python3", "python3 -c import pip -m pip", ""},
		{"/usr/bin/python3", "python3 -m", ""},
		{"/usr/bin/python3", "python3", ""},
		{"/usr/bin/python3.x", "python3.x -m pip", ""},
		{"/usr/bin/pip3.", "pip3.", ""},
		{"/usr/bin/node", "node server.js", ""},
		{"/usr/bin/gofmt", "gofmt -l .", ""},
		{"/usr/bin/git", "git clone x", ""},
		{"/bin/sh", "sh -c npm install", ""},
		{"", "", ""},
	} {
		var argv []string
		if c.argv != "" {
			argv = strings.Split(c.argv, " ")
		}
		if got := ToolOf(c.path, argv); got != c.want {
			t.Errorf("ToolOf(%q, %q) = %q, want %q", c.path, argv, got, c.want)
		}
	}
}

func FuzzToolOf(f *testing.F) {
	f.Add("/usr/bin/python3", "python3\x00-m\x00pip")
	f.Add("/usr/bin/npm", "npm")
	f.Fuzz(func(t *testing.T, path, args string) {
		got := ToolOf(path, strings.Split(args, "\x00"))
		if got != "" && !Known(got) {
			t.Fatalf("ToolOf(%q, %q) = %q, not a tool Resolve knows", path, args, got)
		}
	})
}
