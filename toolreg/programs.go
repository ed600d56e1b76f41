package toolreg

import (
	"path/filepath"
	"strings"
)

// ToolOf names the tool whose registry configuration a program follows
// when it downloads packages, "" for any other program: npm for npm, npx,
// pnpm and yarn (which read npm's settings), pip for pip and for python
// -m pip, and for uv, pipx, poetry and pdm (whose default index is pip's),
// go for go, cargo for cargo, maven for mvn and its wrapper (mvnw). path
// is the file the program was executed as and argv its arguments; either's
// base name counts (a script's interpreter is executed under the script's
// name).
//
// It is a cheap test for each exec a sandbox makes: the supervisor notes
// which tools ran, and a refusal of one of their registries can then name
// the toolchain profile that allows it. What the profile allows is still
// what Resolve finds; this only says which tools to ask.
func ToolOf(path string, argv []string) string {
	if t := programTool(filepath.Base(path), argv); t != "" {
		return t
	}
	if len(argv) > 0 {
		return programTool(filepath.Base(argv[0]), argv)
	}
	return ""
}

func programTool(name string, argv []string) string {
	switch name {
	case "npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg", "npm-cli.js", "npx-cli.js":
		return NPM
	case "go":
		return Go
	case "cargo":
		return Cargo
	case "mvn", "mvnw", "mvnDebug", "mvnd":
		return Maven
	case "pip", "pip2", "pip3", "uv", "uvx", "pipx", "poetry", "pdm":
		return Pip
	}
	switch {
	case strings.HasPrefix(name, "pip3.") && isVersion(name[len("pip3."):]):
		return Pip
	case (name == "python" || name == "python3" || strings.HasPrefix(name, "python3.") && isVersion(name[len("python3."):])) && runsPip(argv):
		return Pip
	}
	return ""
}

// runsPip reports whether a python command line runs the pip module
// (python -m pip, python3 -mpip), looking at its options before the first
// argument that is not one.
func runsPip(argv []string) bool {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-m":
			return i+1 < len(argv) && argv[i+1] == "pip"
		case strings.HasPrefix(a, "-m"):
			return a == "-mpip"
		case a == "-c", a == "-" || !strings.HasPrefix(a, "-"):
			return false // a command, stdin or a script
		}
	}
	return false
}

// isVersion reports whether s is a minor version: digits, at least one.
func isVersion(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
