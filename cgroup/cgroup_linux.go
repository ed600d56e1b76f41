package cgroup

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	cgroups "github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/getrandom"
	"github.com/jail-sandbox/jail/internal/rawread"
	"github.com/jail-sandbox/jail/procstat"
)

const defaultRoot = "/sys/fs/cgroup"

// Test hooks.
var (
	// geteuid decides "are we root" for the root-only strategies.
	geteuid = os.Geteuid
	// canWrite reports whether the effective uid may write path; delegation
	// (systemd Delegate=yes, or a chown by an admin) is exactly "the
	// directory and its cgroup.procs/subtree_control are writable by us".
	canWrite = func(path string) bool {
		return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
	}
	// rmdirGroup removes an (empty) group directory.
	rmdirGroup = unix.Rmdir
	// killTimeout bounds Kill and Delete.
	killTimeout = 10 * time.Second
)

func (o Options) root() string {
	if o.Root == "" {
		return defaultRoot
	}
	return o.Root
}

func (o Options) selfCgroup() string {
	if o.SelfCgroup == "" {
		return "/proc/self/cgroup"
	}
	return o.SelfCgroup
}

// groupName builds jail-<pid>-t<start tick>-<rand>[-name]. name is reduced to
// [A-Za-z0-9_.] so that it can never contain "/" or be "..": the name
// comes from the user and must not walk out of the parent cgroup.
func groupName(name string) (string, error) {
	var b [4]byte
	if err := getrandom.Read(b[:]); err != nil { // crypto/rand's pool (package getrandom)
		return "", fmt.Errorf("cgroup name: %w", err)
	}
	// The start tick lets jail gc tell this supervisor from a later
	// process that got its pid (CollectStale).
	s := fmt.Sprintf("jail-%d-t%d-%s", os.Getpid(), procstat.SelfStartTick(), hex.EncodeToString(b[:]))
	var clean strings.Builder
	for _, r := range name {
		if r < 128 && (r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			clean.WriteRune(r)
		}
		if clean.Len() >= 40 {
			break
		}
	}
	if clean.Len() > 0 {
		s += "-" + clean.String()
	}
	return s, nil
}

// parseGroupName returns the supervisor pid encoded in a jail-<pid>-... name.
func parseGroupName(base string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(base, "jail-")
	if !found {
		return 0, false
	}
	field, _, _ := strings.Cut(rest, "-")
	n, err := strconv.Atoi(field)
	if err != nil || n <= 0 || strconv.Itoa(n) != field {
		return 0, false
	}
	return n, true
}

// Open creates the sandbox's group with lim applied. See the package doc for
// the order of choices. With Mode()=="none" the Group still works (Kill and
// Delete are no-ops, Events/Stats return zeros) so callers need no branches.
func Open(name string, lim Limits, opts Options) (Group, Report, error) {
	if err := lim.Validate(); err != nil {
		return nil, Report{}, err
	}
	gname, err := groupName(name)
	if err != nil {
		return nil, Report{}, err
	}
	var reasons []string
	var scopeErr error
	// Where this process is, read once for both hierarchies' strategies:
	// a v2 strategy that moves the supervisor (its leaf, a scope) moves it
	// in the cgroup2 hierarchy only, never in a v1 one, and the scope
	// strategy reads the file again after its move.
	v1Self, v2Self, selfErr := readSelf(opts.selfCgroup())
	if !opts.DisableV2 {
		g, rep, err := openV2(opts, gname, lim, v2Self, selfErr, &scopeErr)
		if err == nil {
			return g, rep, nil
		}
		reasons = append(reasons, "cgroup v2: "+err.Error())
	}
	if !opts.DisableV1 {
		g, rep, err := openV1(opts, gname, lim, v1Self, selfErr)
		if err == nil {
			return g, rep, nil
		}
		reasons = append(reasons, "cgroup v1: "+err.Error())
	}
	rep := Report{Mode: "none", Strategy: "none", Reason: strings.Join(reasons, "; "), ScopeErr: scopeErr}
	if opts.Require {
		fix := "run as root, or start jail in a delegated cgroup v2 scope (systemd-run --user --scope -p Delegate=yes jail ...), or drop `require-limits`"
		if scopeErr != nil {
			fix = "run as root or in a systemd user session that delegates memory, pids and cpu, or drop `require-limits`"
		}
		return nil, rep, fmt.Errorf("%w (%s); %s", ErrNoCgroup, rep.Reason, fix)
	}
	rep.Warnings = noneWarnings(lim, scopeErr)
	rep.Enforced = noneEnforced(lim)
	return noneGroup{}, rep, nil
}

func noneWarnings(lim Limits, scopeErr error) []string {
	first := "no cgroup available: limits fall back to per-process rlimits, and kill relies on the pid namespace"
	if scopeErr != nil {
		// The one line that says why a desktop user gets no real limits.
		first = "no delegated cgroup from the systemd user manager (" + scopeErr.Error() + "): limits fall back to per-process rlimits and the memory watch, and kill relies on the pid namespace"
	}
	w := []string{first}
	if lim.MemoryBytes > 0 && lim.WatchMemory {
		w = append(w, "memory: watched, not kernel-enforced: jail samples the sandbox's memory (PSS of its processes plus its private tmpfs) at least every 100ms, down to every 10ms while it grows towards the limit, and kills it past the limit; an allocation faster than that overshoots until the next sample")
	} else if lim.MemoryBytes > 0 {
		w = append(w, "memory: RLIMIT_AS caps each process's virtual address space, not the sandbox's total memory (N processes may use N times the limit), and runtimes that reserve address space (node, JVM) may fail to start under it")
	}
	if lim.CPUs > 0 {
		w = append(w, "cpus: not enforced; a CPU share (quota per period) needs a cgroup, and RLIMIT_CPU can only cap total cpu seconds per process")
	}
	if lim.pidsLimit() > 0 {
		w = append(w, "pids: RLIMIT_NPROC counts processes of the uid (per user namespace since Linux 5.14, threads included), checked only at fork")
	}
	if lim.WatchMemory {
		w = append(w, "no OOM or pids-limit events without a cgroup")
	} else {
		w = append(w, "no OOM or pids-limit events and no peak-memory figure without a cgroup")
	}
	return w
}

func noneEnforced(lim Limits) []string {
	var e []string
	if lim.MemoryBytes > 0 && lim.WatchMemory {
		e = append(e, "memory="+FormatSize(lim.MemoryBytes)+"(watched)")
	} else if lim.MemoryBytes > 0 {
		e = append(e, "memory="+FormatSize(lim.MemoryBytes)+"(rlimit-as)")
	}
	if p := lim.pidsLimit(); p > 0 {
		e = append(e, "pids="+strconv.FormatInt(p, 10)+"(rlimit-nproc)")
	}
	return e
}

func cgroupEnforced(lim Limits, how string) []string {
	var e []string
	if lim.MemoryBytes > 0 {
		e = append(e, "memory="+FormatSize(lim.MemoryBytes)+"("+how+")")
	}
	if lim.CPUs > 0 {
		e = append(e, "cpus="+strconv.FormatFloat(lim.CPUs, 'f', -1, 64)+"("+how+")")
	}
	if p := lim.pidsLimit(); p > 0 {
		e = append(e, "pids="+strconv.FormatInt(p, 10)+"("+how+")")
	}
	return e
}

// ---------- small file helpers ----------

// writeFile writes val to one cgroup file in plain system calls, as
// readSmall reads: os.OpenFile registers the descriptor with Go's poller,
// and cgroupfs files support poll, so each write also took an fcntl pair
// and an epoll_ctl add and delete (the start writes pids.max before
// init's start begins). A cgroupfs write never blocks: it is done, or
// refused, when write returns.
func writeFile(path, val string) error {
	var fd int
	var err error
	for {
		// O_TRUNC is harmless on cgroupfs and keeps fake trees tidy.
		fd, err = unix.Open(path, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	b := []byte(val)
	for len(b) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, b)
		if err == unix.EINTR {
			err = nil
			continue
		}
		if err == nil && n <= 0 {
			err = unix.EIO
		}
		if err == nil {
			b = b[n:]
		}
	}
	// cgroupfs checks and applies the value in write itself; close only
	// releases the descriptor.
	if cerr := unix.Close(fd); err == nil && cerr != nil && cerr != unix.EINTR {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write " + strconv.Quote(val), Path: path, Err: err}
	}
	return nil
}

// readSelf parses a /proc/PID/cgroup file (containerd's parser) read by
// readSmall: each v1 hierarchy's path by controller, and the cgroup2 path.
func readSelf(path string) (map[string]string, string, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, "", err
	}
	return cgroups.ParseCgroupFromReaderUnified(bytes.NewReader(b))
}

func readTrim(path string) (string, error) {
	b, err := readSmall(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readUint(path string) (uint64, error) {
	s, err := readTrim(path)
	if err != nil {
		return 0, err
	}
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}

// readUintOpt is readUint where a missing file (older kernel) reads as 0.
func readUintOpt(path string) (uint64, error) {
	n, err := readUint(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

// parseKV parses cgroup "flat keyed" files (memory.events, pids.events,
// cpu.stat, memory.oom_control): "key value" per line. Lines that do not
// fit are skipped: the kernel adds keys over time.
func parseKV(data []byte) map[string]uint64 {
	m := make(map[string]uint64)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		m[k] = n
	}
	return m
}

func readKV(path string) (map[string]uint64, error) {
	b, err := readSmall(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string]uint64{}, nil
		}
		return nil, err
	}
	return parseKV(b), nil
}

// parsePids parses cgroup.procs.
func parsePids(data []byte) []int {
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return pids
}

func readPids(dir string) ([]int, error) {
	b, err := readSmall(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	return parsePids(b), nil
}

// rmdirRetry removes a cgroup directory, retrying while the kernel still
// counts exiting tasks (EBUSY). A missing directory is success.
func rmdirRetry(dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		err := rmdirGroup(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			if errors.Is(err, unix.EBUSY) {
				return &fs.PathError{Op: "remove cgroup (kill its processes first)", Path: dir, Err: fmt.Errorf("%w: %w", ErrBusy, err)}
			}
			return &fs.PathError{Op: "remove cgroup", Path: dir, Err: err}
		}
		time.Sleep(delay)
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// onlyIn is Group.Only over a group's directories: each lists no process
// but pid in cgroup.procs, and holds no group of its own (a process there
// would not be in cgroup.procs) but those sub says are known (the caller
// checks those).
func onlyIn(dirs []string, pid int, sub func(name string) bool) bool {
	for _, d := range dirs {
		if !onlyPid(d, pid) {
			return false
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if e.IsDir() && (sub == nil || !sub(e.Name())) {
				return false
			}
		}
	}
	return true
}

// onlyPid tells whether dir's cgroup.procs lists no process but pid
// (false when it cannot be read).
func onlyPid(dir string, pid int) bool {
	pids, err := readPids(dir)
	if err != nil {
		return false
	}
	for _, p := range pids {
		if p != pid {
			return false
		}
	}
	return true
}

// alive reports whether pid exists (EPERM means it exists but is not ours).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// ---------- none ----------

type noneGroup struct{}

func (noneGroup) Mode() string            { return "none" }
func (noneGroup) Path() string            { return "" }
func (noneGroup) FD() (int, bool)         { return -1, false }
func (noneGroup) Add(int) error           { return nil }
func (noneGroup) Kill() error             { return nil }
func (noneGroup) Events() (Events, error) { return Events{}, nil }
func (noneGroup) Stats() (Stats, error)   { return Stats{}, nil }
func (noneGroup) Delete() error           { return nil }
func (noneGroup) Only(int) bool           { return false }

// ---------- CleanupStale ----------

// CleanupStale removes jail-<pid>-* groups (v2 and v1) left behind by a
// supervisor that is gone (crash, SIGKILL): it kills what is still inside
// and removes the directories. Call it once at start, before Open. It scans
// our own cgroup, its parent and the hierarchy roots, which is where Open
// creates groups. Pid reuse can make a stale group look alive; it is then
// left for a later run (a leak, never a wrong kill of a live sandbox).
func CleanupStale() []error { return cleanupStale(Options{}) }

func cleanupStale(opts Options) []error {
	root := opts.root()
	v1, unified, err := readSelf(opts.selfCgroup())
	if err != nil {
		return []error{fmt.Errorf("cleanup stale cgroups: read %s: %w", opts.selfCgroup(), err)}
	}
	var dirs []string
	if v2root, ok := v2Mount(root); ok {
		cur := filepath.Join(v2root, filepath.Clean("/"+unified))
		dirs = append(dirs, cur, filepath.Dir(cur), filepath.Dir(filepath.Dir(cur)), v2root)
	}
	for _, c := range v1Controllers {
		base := filepath.Join(root, c.name)
		if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
			continue
		}
		dirs = append(dirs, filepath.Join(base, filepath.Clean("/"+v1[c.name])), base)
	}
	seen := map[string]bool{}
	var errs []error
	self, me := os.Getpid(), uint32(os.Geteuid())
	for _, d := range dirs {
		if seen[d] || !strings.HasPrefix(d, filepath.Clean(root)) {
			continue
		}
		seen[d] = true
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			pid, tick, ok := parseGroupTick(e.Name())
			if !ok || pid == self || supervisorLive(pid, tick) {
				continue
			}
			// Only the caller's own groups, as in CollectStale: another
			// user's (root's at a hierarchy root) is that user's to remove.
			if owner, ok := ownerOf(filepath.Join(d, e.Name())); !ok || owner != me {
				continue
			}
			if err := removeTree(filepath.Join(d, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// removeTree kills every process in a stale group tree and removes it
// depth-first. The freezer (v1) or cgroup.kill (v2) stops a fork loop
// from outrunning us.
func removeTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// Removed meanwhile: another jail gc, or another run's own
		// cleanup, got there first (seen as a failed jail gc when two
		// ran at once in the e2e tests).
		return nil
	}
	if err != nil {
		return fmt.Errorf("cleanup stale cgroup: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if pids, _ := readPids(dir); len(pids) > 0 {
		if err := killDir(dir); err != nil {
			return err
		}
	}
	return rmdirRetry(dir, killTimeout)
}

// killDir empties one directory with whatever kill mechanism it has.
func killDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err == nil {
		return killV2(dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "freezer.state")); err == nil {
		return freezeKill(dir, filepath.Join(dir, "freezer.state"), "FROZEN", "THAWED")
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.freeze")); err == nil {
		return freezeKill(dir, filepath.Join(dir, "cgroup.freeze"), "1", "0")
	}
	return signalAllUntilEmpty(dir, nil, nil)
}

// freezeKill: freeze so nothing can fork while we read the pid list,
// SIGKILL every pid, thaw so the kills are delivered, repeat until empty.
func freezeKill(dir, stateFile, frozen, thawed string) error {
	// An empty group (every run's end: the sandbox has exited) has nothing
	// to kill and no member left to fork: no freeze, thaw or wait (a v1
	// freeze costs milliseconds). Only a privileged writer of cgroup.procs
	// could add a process now, and it could do so after any kill as well.
	if pids, err := readPids(dir); err == nil && len(pids) == 0 {
		return nil
	}
	freeze := func() error {
		if err := writeFile(stateFile, frozen); err != nil {
			return err
		}
		if filepath.Base(stateFile) == "freezer.state" {
			// v1 freezing is asynchronous: FREEZING until every task stopped.
			for i := 0; i < 200; i++ {
				if s, _ := readTrim(stateFile); s == "FROZEN" {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	}
	thaw := func() error { return writeFile(stateFile, thawed) }
	return signalAllUntilEmpty(dir, freeze, thaw)
}

func signalAllUntilEmpty(dir string, freeze, thaw func() error) error {
	deadline := time.Now().Add(killTimeout)
	for {
		if freeze != nil {
			if err := freeze(); err != nil {
				return fmt.Errorf("kill cgroup: %w", err)
			}
		}
		pids, err := readPids(dir)
		if err != nil {
			if thaw != nil {
				_ = thaw()
			}
			return fmt.Errorf("kill cgroup: %w", err)
		}
		for _, p := range pids {
			// ESRCH: already gone; anything else surfaces via "not empty".
			_ = unix.Kill(p, unix.SIGKILL)
		}
		if thaw != nil {
			if err := thaw(); err != nil {
				return fmt.Errorf("kill cgroup: %w", err)
			}
		}
		if len(pids) == 0 {
			return nil
		}
		// Everything listed was frozen when signalled, so it dies on thaw;
		// another round is only for processes added from outside meanwhile.
		if err := waitEmpty(dir, min(2*time.Second, time.Until(deadline))); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return &fs.PathError{Op: "kill cgroup", Path: dir, Err: ErrBusy}
		}
	}
}

// waitEmpty polls cgroup.procs until it lists no process.
func waitEmpty(dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	delay := 200 * time.Microsecond
	for {
		pids, err := readPids(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("wait for empty cgroup: %w", err)
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &fs.PathError{Op: "wait for empty cgroup", Path: dir, Err: fmt.Errorf("%w: %d left", ErrBusy, len(pids))}
		}
		time.Sleep(delay)
		if delay < 10*time.Millisecond {
			delay *= 2
		}
	}
}

// readSmall reads one of a cgroup directory's small files (package
// rawread: without Go's poller, which cgroupfs files accept, at 30-80 us a
// file; the run's end reads four to six).
func readSmall(path string) ([]byte, error) { return rawread.File(path, 512) }
