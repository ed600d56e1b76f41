package agenthome

import (
	"slices"
	"strings"
	"testing"
)

func TestMoved(t *testing.T) {
	const home, cwd = "/home/u", "/home/u/ws"
	for _, c := range []struct {
		name string
		env  []string
		want []string // Var=Path
	}{
		{"none", []string{"HOME=/home/u", "PATH=/bin"}, nil},
		{"codex elsewhere", []string{"CODEX_HOME=/home/u/ws/.cx"}, []string{"CODEX_HOME=/home/u/ws/.cx"}},
		{"qwen elsewhere", []string{"QWEN_HOME=/home/u/ws/.q", "QWEN_RUNTIME_DIR=/home/u/.qwen"}, []string{"QWEN_HOME=/home/u/ws/.q"}},
		{"codex usual place", []string{"CODEX_HOME=/home/u/.codex/"}, nil},
		{"codex usual place, unclean", []string{"CODEX_HOME=/home/u/x/../.codex"}, nil},
		{"empty value", []string{"CODEX_HOME="}, nil},
		{"relative", []string{"CODEX_HOME=.cx"}, []string{"CODEX_HOME=/home/u/ws/.cx"}},
		{"tilde", []string{"CODEX_HOME=~/cfg/codex"}, []string{"CODEX_HOME=/home/u/cfg/codex", "CODEX_HOME=/home/u/ws/~/cfg/codex"}},
		{"claude", []string{"CLAUDE_CONFIG_DIR=/srv/claude"}, []string{"CLAUDE_CONFIG_DIR=/srv/claude"}},
		{"claude usual place", []string{"CLAUDE_CONFIG_DIR=/home/u/.claude"}, nil},
		{"gemini home", []string{"GEMINI_CLI_HOME=/home/u/ws"}, []string{"GEMINI_CLI_HOME=/home/u/ws/.gemini"}},
		{"gemini home is home", []string{"GEMINI_CLI_HOME=/home/u"}, nil},
		{"set twice", []string{"CODEX_HOME=/a", "CODEX_HOME=/b"}, []string{"CODEX_HOME=/a", "CODEX_HOME=/b"}},
		{"set twice, same", []string{"CODEX_HOME=/a", "CODEX_HOME=/a/"}, []string{"CODEX_HOME=/a"}},
		{"prefix of another name", []string{"CODEX_HOMEX=/a", "XCODEX_HOME=/b"}, nil},
		{"plugin cache", []string{"CLAUDE_CODE_PLUGIN_CACHE_DIR=/home/u/ws/plugins"}, []string{"CLAUDE_CODE_PLUGIN_CACHE_DIR=/home/u/ws/plugins"}},
		{"plugin cache usual place", []string{"CLAUDE_CODE_PLUGIN_CACHE_DIR=/home/u/.claude/plugins"}, nil},
		{"plugin seeds", []string{"CLAUDE_CODE_PLUGIN_SEED_DIR=/opt/seed::rel:/home/u/.claude"}, []string{"CLAUDE_CODE_PLUGIN_SEED_DIR=/opt/seed", "CLAUDE_CODE_PLUGIN_SEED_DIR=/home/u/ws/rel", "CLAUDE_CODE_PLUGIN_SEED_DIR=/home/u/.claude"}},
		{"plugin seeds, only separators", []string{"CLAUDE_CODE_PLUGIN_SEED_DIR=::"}, nil},
		{"plugin dirs, spaced", []string{"CLAUDE_CODE_PLUGIN_DIRS= /home/u/ws/p1 : ~/p2 "}, []string{"CLAUDE_CODE_PLUGIN_DIRS=/home/u/ws/p1", "CLAUDE_CODE_PLUGIN_DIRS=/home/u/p2", "CLAUDE_CODE_PLUGIN_DIRS=/home/u/ws/~/p2"}},
		{"mcpb", []string{"CLAUDE_CODE_PLUGIN_MCPB_DIR=/srv/mcpb"}, []string{"CLAUDE_CODE_PLUGIN_MCPB_DIR=/srv/mcpb"}},
		{"env file", []string{"CLAUDE_ENV_FILE=env.sh"}, []string{"CLAUDE_ENV_FILE=/home/u/ws/env.sh"}},
		{"settings paths", []string{"CLAUDE_CODE_MANAGED_SETTINGS_PATH=/etc/x.json", "CLAUDE_CODE_REMOTE_SETTINGS_PATH=~/r.json"}, []string{"CLAUDE_CODE_MANAGED_SETTINGS_PATH=/etc/x.json", "CLAUDE_CODE_REMOTE_SETTINGS_PATH=/home/u/r.json", "CLAUDE_CODE_REMOTE_SETTINGS_PATH=/home/u/ws/~/r.json"}},
		{"shell", []string{"CLAUDE_CODE_SHELL=/bin/zsh"}, []string{"CLAUDE_CODE_SHELL=/bin/zsh"}},
		{"shell prefix", []string{`CLAUDE_CODE_SHELL_PREFIX='/home/u/ws/log.sh' --to ~/audit.log rel.sh`}, []string{"CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/log.sh", "CLAUDE_CODE_SHELL_PREFIX=/home/u/audit.log", "CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/~/audit.log", "CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/rel.sh?"}},
		{"shell prefix, relative program", []string{"CLAUDE_CODE_SHELL_PREFIX=./wrap.sh -v"}, []string{"CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/wrap.sh"}},
		{"shell prefix, interpreter and script", []string{"CLAUDE_CODE_SHELL_PREFIX=python3 -u tools/wrap.py X=1 --log=y"}, []string{"CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/tools/wrap.py"}},
		{"shell prefix, bare script", []string{"CLAUDE_CODE_SHELL_PREFIX=nice -n 5 sh wrap.sh"}, []string{"CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/5?", "CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/sh?", "CLAUDE_CODE_SHELL_PREFIX=/home/u/ws/wrap.sh?"}},
		{"wrapper and teammates", []string{"CLAUDE_CODE_PROCESS_WRAPPER=/opt/w", "CLAUDE_CODE_TEAMMATE_COMMAND=claude --x"}, []string{"CLAUDE_CODE_PROCESS_WRAPPER=/opt/w"}},
		{"mcpb usual place", []string{"CLAUDE_CODE_PLUGIN_MCPB_DIR=/home/u/.claude/plugins/mcpb"}, nil},
		{"remote memory", []string{"CLAUDE_CODE_REMOTE_MEMORY_DIR=/home/u/ws/mem"}, []string{"CLAUDE_CODE_REMOTE_MEMORY_DIR=/home/u/ws/mem"}},
		{"remote memory usual place", []string{"CLAUDE_CODE_REMOTE_MEMORY_DIR=/home/u/.claude"}, nil},
		{"a list only where the CLI splits", []string{"CLAUDE_CONFIG_DIR=/a:/b"}, []string{"CLAUDE_CONFIG_DIR=/a:/b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, d := range Moved(c.env, home, cwd) {
				mark := ""
				if d.IfExists {
					mark = "?" // kept only where it exists at start
				}
				got = append(got, d.Var+"="+d.Path+mark)
				cmdLine := strings.HasSuffix(d.Var, "_PREFIX") || strings.HasSuffix(d.Var, "_WRAPPER") || strings.HasSuffix(d.Var, "_COMMAND")
				if d.Word != cmdLine {
					t.Errorf("%+v: Word is for command lines only", d)
				}
				if d.Agent == "" || d.What == "" || d.Value == "" {
					t.Errorf("%+v: fields missing", d)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Moved(%q) = %q, want %q", c.env, got, c.want)
			}
		})
	}
}

func FuzzMoved(f *testing.F) {
	f.Add("CODEX_HOME", "~/x/../y")
	f.Add("GEMINI_CLI_HOME", "rel")
	f.Add("CLAUDE_CODE_PLUGIN_SEED_DIR", "a:~/b::/c")
	f.Fuzz(func(t *testing.T, name, value string) {
		for _, d := range Moved([]string{name + "=" + value}, "/home/u", "/ws") {
			if d.Path == "" || d.Path[0] != '/' || d.Path == "/home/u/.codex" {
				t.Fatalf("Moved gave %+v", d)
			}
		}
	})
}
