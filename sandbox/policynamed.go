package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/internal/replacefile"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
)

// A file a run was given by a flag to read its policy from (--settings,
// --config, --seccomp) is read again by that run's next start, but another
// run of the same workspace not given the flag read it as any file of the
// workspace: its agent rewrote it (allowWrite ["~/Documents"]) and the next
// start given the flag read the agent's bytes (policyfiles, session 17).
// So each such file is recorded in jail's state directory (no sandbox
// reaches it) and every later run keeps it read-only like its own policy
// files; a run that was already running when the file was first named
// could write it, so the start naming it then refuses (policyNamedLive).

// maxPolicyNamed bounds the record: past it the oldest names go (a run not
// given their flag can write them again).
const maxPolicyNamed = 256

// maxPolicyNamedBytes bounds what is read of the record.
const maxPolicyNamedBytes = 1 << 20

// policyNamedRecord maps a policy file's path, as the flag named it, to
// when a run first named it and with which flag.
type policyNamedRecord map[string]namedPolicy

type namedPolicy struct {
	First int64  `json:"first"` // Unix nanoseconds
	From  string `json:"from"`  // --settings, --config, --seccomp
	// Exposed says which run (its workspace and start) not given the flag that left the file writable
	// through other names (hard links) past the bound: the start given
	// the flag refuses while it is set (markPolicyExposed).
	Exposed string `json:"exposed,omitempty"`
}

// policyNamedLock, beside the record, is flocked shared by a plan reading
// the record and exclusive by a start changing it (lockPolicyNamed).
const policyNamedLock = "policy-named.lock"

// lockPolicyNamed flocks the record's lock in stateDir (how: LOCK_SH or
// LOCK_EX) and returns its release. Why: two starts naming files at once
// each read the record and wrote it back, and one's name was lost; and a
// start's plan read the record while another start wrote it, so the
// written name's "first named" time could precede a run that had not read
// it (policyNamedLive skipped that run as keeping the file). Under the
// lock a name's time is taken, and the record written, with no plan
// reading it meanwhile. A file system without flock (ENOLCK, EOPNOTSUPP)
// goes on unlocked, as the trust store does: the check after the
// registration (policyNamedSince) still refuses a run that missed a name.
func lockPolicyNamed(stateDir string, how int) (func(), error) {
	p := filepath.Join(stateDir, policyNamedLock)
	// O_NOFOLLOW: a link there is not followed (the state directory is
	// the user's own; no sandbox reaches it).
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return func() {}, fmt.Errorf("lock %s: %w", p, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil && err != syscall.ENOLCK && err != syscall.EOPNOTSUPP {
		f.Close()
		return func() {}, fmt.Errorf("lock %s: %w", p, err)
	}
	return func() { f.Close() }, nil
}

// readPolicyNamed reads the record in stateDir, under the shared lock; a
// missing or unreadable record is empty.
func readPolicyNamed(stateDir string) policyNamedRecord {
	if stateDir == "" {
		return policyNamedRecord{}
	}
	// Unlocked when the lock cannot be had (no state directory yet: no
	// record either): the check after the registration still holds.
	unlock, _ := lockPolicyNamed(stateDir, syscall.LOCK_SH)
	defer unlock()
	return readPolicyNamedLocked(stateDir)
}

// readPolicyNamedLocked reads the record; the caller holds the lock.
func readPolicyNamedLocked(stateDir string) policyNamedRecord {
	rec := policyNamedRecord{}
	f, err := os.Open(filepath.Join(stateDir, statedir.PolicyNamed))
	if err != nil {
		return rec
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyNamedBytes))
	if err != nil {
		return rec
	}
	if json.Unmarshal(data, &rec) != nil {
		return policyNamedRecord{}
	}
	return rec
}

// flagPolicyFiles are the files of p's policy named by a flag, or inside a
// file a flag named, or by the user's config: every file a start read
// its policy from except the config file itself and jail's config
// directory's links (hidden or guarded in every run). Why the second kind:
// a settings file named in a --config file or in a profile given by
// --profile ("settings in LOC") was not recorded, so a run not given that
// flag left it writable while keeping the --config file itself, and its
// agent rewrote what the next start given the flag read (review19c). Why
// the user's config's settings: every run reads them, but a line added
// while a run lives was read by the next start from a file that run
// (started before the line) could write, nothing said; recorded, the
// start refuses while such a run lives (policyNamedLive), as for a flag
// (leftovers19). A name recorded so stays kept after the line goes.
func flagPolicyFiles(p *policy.Policy) []policy.PolicyFile {
	var out []policy.PolicyFile
	for _, f := range allPolicyFiles(p) {
		switch {
		case f.From == "--settings", f.From == "--config", f.From == "--seccomp":
			out = append(out, f)
		case strings.HasPrefix(f.From, "settings in "):
			out = append(out, f)
		}
	}
	return out
}

// allPolicyFiles are the files p's policy was read from, --seccomp's too.
func allPolicyFiles(p *policy.Policy) []policy.PolicyFile {
	files := append([]policy.PolicyFile{}, p.PolicyFiles...)
	if p.SeccompFile != "" {
		if abs, err := filepath.Abs(p.SeccompFile); err == nil {
			files = append(files, policy.PolicyFile{Path: abs, From: "--seccomp"})
		}
	}
	return files
}

// earlierPolicyFiles are the files the record in stateDir names that this
// run's policy was not read from: kept read-only like its own.
func earlierPolicyFiles(stateDir string, own []policy.PolicyFile) []policy.PolicyFile {
	rec := readPolicyNamed(stateDir)
	if len(rec) == 0 {
		return nil
	}
	mine := make(map[string]bool, len(own))
	for _, f := range own {
		mine[f.Path] = true
	}
	var out []policy.PolicyFile
	for path, n := range rec {
		if !mine[path] && filepath.IsAbs(path) {
			out = append(out, policy.PolicyFile{Path: path, From: n.From + " in an earlier run"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// policyKept is the set of paths of own and earlier.
func policyKept(own, earlier []policy.PolicyFile) map[string]bool {
	kept := make(map[string]bool, len(own)+len(earlier))
	for _, f := range append(append([]policy.PolicyFile{}, own...), earlier...) {
		kept[f.Path] = true
	}
	return kept
}

// recordPolicyNamed adds files to the record in stateDir (first named now
// unless recorded already) and returns when each was first named. A name
// whose file is gone leaves the record.
func recordPolicyNamed(stateDir string, files []policy.PolicyFile) (map[string]time.Time, error) {
	first := make(map[string]time.Time, len(files))
	if len(files) == 0 || stateDir == "" {
		return first, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return first, fmt.Errorf("record the policy files named by flags: %w", err)
	}
	unlock, err := lockPolicyNamed(stateDir, syscall.LOCK_EX)
	if err != nil {
		return first, fmt.Errorf("record the policy files named by flags: %w", err)
	}
	defer unlock()
	rec := readPolicyNamedLocked(stateDir)
	// Why now, under the lock, not this run's start: a run whose plan read
	// the record before this write, even one started after this run, must
	// count as started before the name (policyNamedLive checks it); one
	// started after now reads the record after the write (its plan waits
	// for the lock).
	now := time.Now()
	changed := false
	for path, n := range rec {
		if n.Exposed != "" {
			// Kept while marked, the file gone or not: its other names
			// (the agent's links) may bring the agent's bytes back under
			// the name; the user drops the entry (markPolicyExposed).
			continue
		}
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			delete(rec, path)
			changed = true
		}
	}
	for _, f := range files {
		if n, ok := rec[f.Path]; ok && n.Exposed != "" {
			// Why: a run not given the flag could write the file through
			// its other names (policyFileRules: past the bound of 16), so
			// its bytes may be that run's agent's: the user decides.
			return first, fmt.Errorf("policy file %s (%s) could be written through its other names (hard links) by %s, which did not name it and made only %d of them read-only: check the file, remove the links (find / -xdev -samefile %s), then drop its entry from %s (or remove that file) and start again",
				f.Path, f.From, n.Exposed, maxPolicyLinks, f.Path, filepath.Join(stateDir, statedir.PolicyNamed))
		}
		if _, ok := rec[f.Path]; !ok {
			rec[f.Path] = namedPolicy{First: now.UnixNano(), From: f.From}
			changed = true
		}
		first[f.Path] = time.Unix(0, rec[f.Path].First)
	}
	if len(rec) > maxPolicyNamed {
		// The oldest unmarked names go. Why not a marked one: the trim
		// dropped it like any other (session 19), the start given its flag
		// then recorded the name afresh and read a file whose other names
		// a run's agent could write. Marked entries are few (one per file
		// a run left writable past maxPolicyLinks) and leave only by the
		// user's hand.
		paths := make([]string, 0, len(rec))
		for p, n := range rec {
			if n.Exposed == "" {
				paths = append(paths, p)
			}
		}
		sort.Slice(paths, func(i, j int) bool { return rec[paths[i]].First < rec[paths[j]].First })
		for _, p := range paths[:min(len(paths), len(rec)-maxPolicyNamed)] {
			delete(rec, p)
		}
	}
	if !changed {
		return first, nil
	}
	if err := writePolicyNamedLocked(stateDir, rec); err != nil {
		return first, fmt.Errorf("record the policy files named by flags: %w", err)
	}
	return first, nil
}

// writePolicyNamedLocked replaces the record with rec; the caller holds the
// lock exclusive.
func writePolicyNamedLocked(stateDir string, rec policyNamedRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return replacefile.Write(filepath.Join(stateDir, statedir.PolicyNamed), ".policy-named-*", data, false)
}

// markPolicyExposed marks paths in the record in stateDir as left writable
// by the run by says (policyFileRules' exposed): the start given their flag refuses
// until the user drops the entry (recordPolicyNamed). Before the agent
// runs: a mark lost would let that start read the agent's bytes.
func markPolicyExposed(stateDir string, paths []string, by string) error {
	if len(paths) == 0 {
		return nil
	}
	unlock, err := lockPolicyNamed(stateDir, syscall.LOCK_EX)
	if err != nil {
		return fmt.Errorf("mark the policy files left writable: %w", err)
	}
	defer unlock()
	rec := readPolicyNamedLocked(stateDir)
	changed := false
	for _, path := range paths {
		if n, ok := rec[path]; ok && n.Exposed == "" {
			n.Exposed = by
			rec[path] = n
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := writePolicyNamedLocked(stateDir, rec); err != nil {
		return fmt.Errorf("mark the policy files left writable: %w", err)
	}
	return nil
}
