// Package execnote names the programs that cannot do their job inside a
// jail sandbox, by design, and says why and what to do instead: sudo and
// its kin, which cannot raise privileges there (no_new_privs, nosuid
// mounts, no capabilities), a system package manager asked to change the
// system, which is the host's, read-only, the Docker CLI, whose daemon's
// socket jail hides (it is root on the host), and ping and traceroute,
// whose ICMP jail's network does not carry (an agent that pings to test
// the network concludes there is none), debuggers and tracers (strace,
// gdb), whose ptrace jail refuses unless --allow-ptrace, and profilers on
// performance counters (perf, rr), which it refuses always. Agents reach
// for sudo and the package manager when a tool is missing (`sudo apt-get install jq`, or
// `apt-get install jq` when they see uid 0, as under a jail root started),
// and the programs' own messages send the user the wrong way: sudo blames the container's
// configuration or the owner of /etc/sudo.conf, apt-get asks "are you
// root?" of a process whose uid is 0, docker asks whether the daemon is
// running.
//
// The package only reads the command line it is given; whether a sudo is
// set-user-ID (a shim of that name runs the command itself, and works) is
// the caller's to tell.
package execnote

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Note is what to tell the user about one program run inside.
type Note struct {
	// Key is what makes two runs the same thing to say once: the
	// program's name.
	Key string
	// Text is the line, without "jail: ".
	Text string
	// NeedsSetID: the note holds only when the program's file is
	// set-user-ID as the sandbox sees it (the caller checks).
	NeedsSetID bool
	// NeedsReadOnly: the note holds only when this directory is on a
	// read-only mount as the sandbox sees it (the caller checks: a user
	// may have made the system writable).
	NeedsReadOnly string
	// NeedsHostSocket: the note holds only when one of these paths is a
	// socket on the host ($XDG_RUNTIME_DIR as the host has it) and the
	// sandbox's environment does not set UnlessEnv (the caller checks).
	NeedsHostSocket []string
	UnlessEnv       string
	// NeedsOwnNet: the note holds only when the sandbox has a network
	// namespace of its own (not --net host; the caller checks).
	NeedsOwnNet bool
	// NeedsPtraceDenied: the note holds only when the sandbox refuses
	// ptrace (no --allow-ptrace; the caller checks).
	NeedsPtraceDenied bool
	// NeedsBuiltinSeccomp: the note holds only when jail's built-in
	// seccomp deny-list applies (not --seccomp-replace; the caller
	// checks).
	NeedsBuiltinSeccomp bool
}

// dockerSockets are where the Docker CLI finds its daemon by default
// (rootful, then rootless).
var dockerSockets = []string{"/run/docker.sock", "/var/run/docker.sock", "$XDG_RUNTIME_DIR/docker.sock"}

// SystemDir is the directory whose mount says whether the sandbox's
// system can be changed.
const SystemDir = "/usr"

// privilege are the set-id programs whose job is to run a command as
// another user, root above all.
var privilege = map[string]bool{
	"sudo": true, "sudoedit": true, "sudo-rs": true, "su": true, "su-rs": true,
	"doas": true, "pkexec": true,
}

// icmp are the programs that probe the network with ICMP (or raw
// sockets).
var icmp = map[string]bool{"ping": true, "ping4": true, "ping6": true, "traceroute": true, "traceroute6": true, "tracepath": true, "mtr": true, "arping": true}

// tracer reports whether name is a debugger or tracer that works through
// ptrace (or process_vm_readv, which the same rule refuses): attaching to
// a process or starting one under its control. Their own messages blame
// the kernel's ptrace_scope or the user's permissions.
func tracer(name string) bool {
	switch name {
	case "strace", "ltrace", "gdb", "gdbserver", "lldb", "lldb-server", "gcore", "pstack", "eu-stack", "py-spy", "rbspy":
		return true
	}
	return false
}

// counter reports whether name is a profiler that needs perf_event_open,
// which jail's seccomp filter refuses whatever the options: their
// messages talk of perf_event_paranoid.
func counter(name string) bool { return name == "perf" || name == "rr" }

// For reports the note for a program executed as path with argv, and
// whether there is one.
func For(path string, argv []string) (Note, bool) {
	name := filepath.Base(path)
	if privilege[name] {
		return Note{Key: name, NeedsSetID: true, Text: name + " cannot work inside the sandbox, whatever it says next: nothing there can raise privileges (no_new_privs, no capabilities); do what it was for on the host, or without root (a tool installed into the workspace)"}, true
	}
	if name == "docker" && usesDaemon(argv) {
		return Note{Key: name, NeedsHostSocket: dockerSockets, UnlessEnv: "DOCKER_HOST", Text: name + " cannot reach the host's Docker daemon, whatever it says next: jail hides its socket, and whoever can connect to it is root on the host; run docker outside jail"}, true
	}
	if icmp[name] {
		return Note{Key: name, NeedsOwnNet: true, Text: name + " cannot work inside the sandbox, whatever it says next: jail's network carries TCP flows to the names it allows (and DNS), no ICMP; try the name with curl or the tool you meant to run"}, true
	}
	if tracer(name) && traces(name, argv) {
		return Note{Key: name, NeedsPtraceDenied: true, Text: name + " cannot trace inside the sandbox, whatever it says next: jail refuses ptrace there (one process reading and writing another's memory); --allow-ptrace allows it between the sandbox's own processes"}, true
	}
	if counter(name) && countsEvents(name, argv) {
		return Note{Key: name, NeedsBuiltinSeccomp: true, Text: name + " cannot work inside the sandbox, whatever it says next: jail refuses perf_event_open there (kernel performance counters: privilege escalations and side channels); profile on the host"}, true
	}
	if changesSystem(name, argv) {
		return Note{Key: name, NeedsReadOnly: SystemDir, Text: name + " cannot change the sandbox's system, whatever it says next: it is the host's, read-only inside; install system packages on the host (the sandbox sees them at once), or a tool without root into the workspace"}, true
	}
	return Note{}, false
}

// traces reports whether a tracer's command line traces: every one but
// its help and version, and for a debugger not one given nothing to run
// or attach to, nor one given a core file to read (gdb PROGRAM CORE,
// --core).
func traces(name string, argv []string) bool {
	var args []string
	if len(argv) > 1 {
		args = argv[1:]
	}
	// Help and version, as each spells them (strace's -v is verbose and
	// -c a summary: they trace).
	debugger := name == "gdb" || name == "lldb"
	if anyOption(args, func(a string) bool {
		switch a {
		case "--help", "--version", "-h":
			return true
		case "-V":
			return !debugger
		case "-help", "-version", "-v", "--core", "-core", "-c": // a core file: read, never traced
			return debugger
		}
		return debugger && (strings.HasPrefix(a, "--core=") || strings.HasPrefix(a, "-core="))
	}) {
		return false
	}
	switch name {
	case "gdb", "lldb":
		var operands int
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-p" || a == "--pid" || a == "-pid" || a == "--attach-pid" || a == "--attach-name" || a == "-n":
				return true
			case strings.HasPrefix(a, "--pid=") || strings.HasPrefix(a, "-pid=") || a == "--args" || a == "-args" || a == "--":
				return true
			case gdbValued(a):
				i++ // its value
			case !strings.HasPrefix(a, "-"):
				operands++
			}
		}
		// gdb PROGRAM runs it; gdb PROGRAM PID attaches; gdb PROGRAM CORE
		// reads a core file, which needs no ptrace.
		return operands == 1 || operands == 2 && isNumber(args[len(args)-1])
	case "py-spy":
		return firstWord(args, nil, "record", "top", "dump")
	case "rbspy":
		return firstWord(args, nil, "record", "snapshot")
	}
	return len(args) > 0 || name == "gcore" || name == "pstack" || name == "eu-stack"
}

// gdbValued reports whether a is an option of gdb's or lldb's that takes
// its value as the next argument.
func gdbValued(a string) bool {
	switch a {
	case "-ex", "-iex", "-x", "-ix", "-cd", "--cd", "-d", "--directory", "-s", "--symbols", "-e", "--exec", "-b",
		"-tty", "--tty", "-data-directory", "--data-directory", "-D", "-o", "--one-line", "-O",
		"--one-line-before-file", "-k", "-S", "--source", "-s-before-file", "--arch", "-a", "--file", "-f":
		return true
	}
	return false
}

// countsEvents reports whether a perf or rr command line needs
// performance counters: perf record, stat, top, trace and the rest of
// its sampling verbs (not report, script, annotate, list, which read
// what was recorded), rr record.
func countsEvents(name string, argv []string) bool {
	var args []string
	if len(argv) > 1 {
		args = argv[1:]
	}
	if name == "rr" {
		return firstWord(args, nil, "record")
	}
	return firstWord(args, nil, "record", "stat", "top", "trace", "sched", "lock", "mem", "c2c", "kmem", "kwork", "ftrace", "probe", "kvm")
}

// isNumber reports whether s is a decimal process id.
func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 31)
	return err == nil
}

// usesDaemon reports whether a docker command line talks to the daemon:
// all but help, the client's version and its contexts and completions.
// Before the command's first word -h and -v are docker's help and version;
// after it they are the command's own (docker run -h HOST -v VOL).
func usesDaemon(argv []string) bool {
	var args []string
	if len(argv) > 1 {
		args = argv[1:]
	}
	if anyOption(args, func(a string) bool { return a == "--help" }) {
		return false
	}
	for _, a := range args {
		switch a {
		case "-h", "-v", "--version", "help", "context", "completion":
			return false
		}
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false // docker alone prints its help
}

// changesSystem reports whether a package manager's command line installs,
// removes or upgrades packages, or refreshes its index: all of them write
// the system's package database. Queries (apt list, dpkg -l, rpm -q) are
// not.
func changesSystem(name string, argv []string) bool {
	var args []string
	if len(argv) > 1 {
		args = argv[1:]
	}
	switch name {
	case "apt", "apt-get", "aptitude":
		return firstWord(args, aptValued, "install", "reinstall", "remove", "purge", "autoremove", "upgrade", "dist-upgrade", "full-upgrade", "update", "build-dep")
	case "dnf", "dnf5", "yum", "microdnf", "tdnf":
		return firstWord(args, dnfValued, "install", "in", "reinstall", "remove", "rm", "erase", "upgrade", "up", "update", "distro-sync", "downgrade", "makecache", "autoremove")
	case "zypper":
		return firstWord(args, zypperValued, "install", "in", "remove", "rm", "update", "up", "dist-upgrade", "dup", "refresh", "ref", "patch")
	case "apk":
		return firstWord(args, apkValued, "add", "del", "upgrade", "update", "fix")
	case "pacman":
		return anyOption(args, func(a string) bool {
			return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:2], "SRU") ||
				a == "--sync" || a == "--remove" || a == "--upgrade"
		})
	case "dpkg":
		return anyOption(args, func(a string) bool {
			switch a {
			case "-i", "--install", "-r", "--remove", "-P", "--purge", "--configure", "--unpack":
				return true
			}
			return false
		})
	case "rpm":
		return anyOption(args, func(a string) bool {
			if strings.HasPrefix(a, "--") {
				return a == "--install" || a == "--upgrade" || a == "--freshen" || a == "--erase" || a == "--reinstall"
			}
			return len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:2], "iUFe")
		})
	}
	return false
}

// The options before a package manager's verb that take their value as
// the next argument (`apt-get -o Dir=/x install`): that value is not the
// verb. Given joined (-oDir=/x, --option=Dir=/x) they take nothing more.
var (
	aptValued    = map[string]bool{"-o": true, "--option": true, "-c": true, "--config-file": true, "-t": true, "--target-release": true, "--default-release": true, "-a": true, "--host-architecture": true}
	dnfValued    = map[string]bool{"-c": true, "--config": true, "--installroot": true, "--releasever": true, "--repo": true, "--repoid": true, "--enablerepo": true, "--disablerepo": true, "-x": true, "--exclude": true, "-d": true, "--debuglevel": true, "-e": true, "--errorlevel": true, "--setopt": true, "--forcearch": true, "--color": true, "--destdir": true, "--downloaddir": true}
	zypperValued = map[string]bool{"-R": true, "--root": true, "-c": true, "--config": true, "-D": true, "--reposd-dir": true, "-C": true, "--cache-dir": true, "--raw-cache-dir": true, "--solv-cache-dir": true, "--pkg-cache-dir": true, "-p": true, "--plus-repo": true, "--installroot": true}
	apkValued    = map[string]bool{"-X": true, "--repository": true, "-p": true, "--root": true, "--arch": true, "--cache-dir": true, "--keys-dir": true, "--repositories-file": true, "--timeout": true}
)

// firstWord reports whether the first argument that is neither an option
// nor the value of one in valued is one of words.
func firstWord(args []string, valued map[string]bool, words ...string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if valued[a] {
				i++ // its value
			}
			continue
		}
		for _, w := range words {
			if a == w {
				return true
			}
		}
		return false
	}
	return false
}

// anyOption reports whether an argument before "--" satisfies is.
func anyOption(args []string, is func(string) bool) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if is(a) {
			return true
		}
	}
	return false
}
