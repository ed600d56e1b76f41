package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// configs holds go-landlock's full configuration for each ABI it knows.
var configs = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4,
	landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// ABI returns the Landlock ABI version the kernel offers (the
// landlock_create_ruleset LANDLOCK_CREATE_RULESET_VERSION query), 0 when
// Landlock is absent or disabled at boot. Like go-landlock, it reports 5 on a
// 6.12 kernel that lacks the signal-scoping fix (errata bit 2), and it is capped
// at the newest ABI go-landlock knows.
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= 6 {
		// Scoped signals were broken before errata 2 (fixed in 6.12.x and later
		// kernels): treat such a kernel as ABI 5 rather than trust the scope.
		errata, err := ll.LandlockGetErrata()
		if err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	if v >= len(configs) {
		v = len(configs) - 1
	}
	return v
}

// access sets for one ABI, derived from go-landlock's full config for it.
type accessSets struct {
	handled                              landlock.AccessFSSet
	readExec, readOnly, readWrite, ioctl landlock.AccessFSSet
	net                                  landlock.AccessNetSet
	scoped                               landlock.ScopedSet
}

const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSTruncate | ll.AccessFSIoctlDev

func setsFor(r Rules, abi int) accessSets {
	c := configs[abi]
	h := c.HandledAccessFS
	s := accessSets{handled: h}
	s.readExec = h & (ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	s.readOnly = h & (ll.AccessFSReadFile | ll.AccessFSReadDir)
	// Everything but device ioctl, which only terminals get (ABI 5, Linux 6.10):
	// tty ioctls are how TIOCSTI/TIOCLINUX injection works (CVE-2017-5226 class).
	s.readWrite = h &^ ll.AccessFSIoctlDev
	s.ioctl = h & (ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSReadDir | ll.AccessFSIoctlDev)
	if r.DenyTCP {
		// TCP only: UDP (ABI 10) stays open for the proxy's DNS.
		s.net = c.HandledAccessNet & (ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	}
	if r.Scope {
		s.scoped = c.Scoped & (ll.ScopeAbstractUnixSocket | ll.ScopeSignal)
	}
	return s
}

// pathRules turns the path lists into go-landlock rules. A file (not a
// directory) may only carry file rights, or landlock_add_rule fails with EINVAL.
func pathRules(r Rules, s accessSets) ([]landlock.Rule, error) {
	var out []landlock.Rule
	add := func(flag string, paths []string, a landlock.AccessFSSet) error {
		for _, p := range paths {
			if p == "" || p[0] != '/' {
				return fmt.Errorf("landlock: %s path %q: %w", flag, p, os.ErrInvalid)
			}
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("landlock: %s rule: %w", flag, err)
			}
			acc := a
			if !fi.IsDir() {
				acc &= fileRights
			}
			if acc != 0 {
				out = append(out, landlock.PathAccess(acc, p))
			}
		}
		return nil
	}
	for _, l := range []struct {
		flag  string
		paths []string
		a     landlock.AccessFSSet
	}{
		{"read-exec", r.ReadExec, s.readExec},
		{"read-only", r.ReadOnly, s.readOnly},
		{"read-write", r.ReadWrite, s.readWrite},
		{"dev-ioctl", r.DevIoctl, s.ioctl},
	} {
		if err := add(l.flag, l.paths, l.a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pinRoot takes root out of the read-exec list and returns the rules that
// stand in for it (Rules.PinRoot): READ_DIR on root, read-exec on each
// entry root holds now. Directories get the directory rights, anything
// else only the file rights (a directory right on a file is EINVAL).
// Symlinks get nothing: Landlock checks the path a symlink resolves to.
// Without root in the list it changes nothing.
func pinRoot(readExec []string, root string, s accessSets) ([]string, []landlock.Rule, error) {
	var rest []string
	found := false
	for _, p := range readExec {
		if p == root {
			found = true
			continue
		}
		rest = append(rest, p)
	}
	if !found {
		return readExec, nil, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("landlock: list %s to pin its entries: %w", root, err)
	}
	var dirs, files []string
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
		case e.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	// Listing root lets `ls /`, globs and find work; it reaches every
	// directory beneath, so a late directory's names can be listed, never
	// its files read or run.
	out := []landlock.Rule{landlock.PathAccess(s.readExec&ll.AccessFSReadDir, root)}
	// IgnoreIfMissing: an entry the host removes while the sandbox starts
	// (a churning top-level directory) must not fail the start; it gets
	// no rule, which is fewer rights.
	if len(dirs) > 0 {
		out = append(out, landlock.PathAccess(s.readExec, dirs...).IgnoreIfMissing())
	}
	if a := s.readExec & fileRights; len(files) > 0 && a != 0 {
		out = append(out, landlock.PathAccess(a, files...).IgnoreIfMissing())
	}
	return rest, out, nil
}

// Apply restricts the calling process, all its threads and all its future
// children with r, at the highest ABI the kernel offers (capped by r.MaxABI).
// It sets no_new_privs (required by the kernel for an unprivileged domain).
//
// With no Landlock (ABI 0) and r.Require == 0 it returns Enforced=false and a
// Missing entry, not an error. When r.Require is above the ABI it enforces
// nothing and returns an error wrapping ErrABITooOld. Any other failure (a
// path that does not exist, the ruleset stack full) is returned as an error
// and the caller must not start the agent.
func (r Rules) Apply() (Report, error) { return r.apply(false) }

// ApplyAfterNoNewPrivs is Apply for a caller that has already set
// no_new_privs on every thread of the process (jail's init, whose privilege
// drop does, on each thread, before Landlock). Before ABI 8 go-landlock
// sets it again on every thread, a round of signals to each of them, before
// the round that enforces the ruleset on each; this skips that first round.
// Should a thread lack no_new_privs after all, the kernel refuses the
// enforcement there (EPERM without CAP_SYS_ADMIN), and the Go runtime ends
// the process (a thread's result differing from the others'): the agent
// never starts without the ruleset.
func (r Rules) ApplyAfterNoNewPrivs() (Report, error) { return r.apply(true) }

func (r Rules) apply(nnpSet bool) (Report, error) {
	abi := effectiveABI(ABI(), r.MaxABI)
	rep := Report{ABI: abi, Missing: missing(r, abi)}
	if err := checkRequire(r, abi); err != nil {
		return rep, err
	}
	if abi == 0 {
		return rep, nil
	}
	s := setsFor(r, abi)
	var pinned []landlock.Rule
	if r.PinRoot {
		var err error
		if r.ReadExec, pinned, err = pinRoot(r.ReadExec, "/", s); err != nil {
			return rep, err
		}
	}
	rules, err := pathRules(r, s)
	if err != nil {
		return rep, err
	}
	rules = append(rules, pinned...)
	if s.net&ll.AccessNetConnectTCP != 0 {
		for _, port := range r.ConnectTCP {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	// Not BestEffort: the config is exactly this ABI's rights, so go-landlock
	// either enforces all of it or fails; it cannot quietly drop to "V0".
	cfg := landlock.Config{HandledAccessFS: s.handled, HandledAccessNet: s.net, Scoped: s.scoped}
	restrict := cfg.Restrict
	if nnpSet && ABI() < 8 {
		restrict = restrictAllThreads(cfg)
	}
	if err := restrict(rules...); err != nil {
		return rep, fmt.Errorf("landlock: enforcing ABI %d ruleset: %w", abi, err)
	}
	rep.Enforced = true
	return rep, nil
}

// restrictAllThreads is cfg.Restrict before ABI 8 (no TSYNC) without its
// no_new_privs round: go-landlock builds the very same ruleset
// (NewRulesetFD), and each thread enforces it, as in Restrict.
func restrictAllThreads(cfg landlock.Config) func(...landlock.Rule) error {
	return func(rules ...landlock.Rule) error {
		fd, flags, err := cfg.NewRulesetFD(rules...)
		if err != nil || fd < 0 {
			return err // fd < 0 with no error: nothing to restrict
		}
		defer unix.Close(fd)
		if err := ll.AllThreadsLandlockRestrictSelf(fd, flags); err != nil {
			if errors.Is(err, unix.E2BIG) {
				return fmt.Errorf("the maximum number of stacked rulesets is reached for the current thread: %w", err)
			}
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
		return nil
	}
}

// Supported reports whether the kernel offers Landlock at all.
func Supported() bool { return ABI() > 0 }
