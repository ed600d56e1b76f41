package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostsock"
	"github.com/jail-sandbox/jail/internal/jsonenc"
	"github.com/jail-sandbox/jail/internal/replacefile"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/statedir"
)

// farRecord is the record (in jail's state directory, statedir.SocketsFar)
// of the live sockets farMasks looked for and did not find, so that a later
// start skips that search (up to maxFarDirs directories, ~80 ms, at every
// start while such a socket lives: one whose file was removed under its
// running server is found nowhere).
//
// Why it cannot hide a socket: only a run with a write path on the
// socket's file system can rename it there (a rename never leaves its file
// system; the host's view is read-only), so every start with a write path
// on a device drops that device's entries and bumps its generation, and
// while such a start's supervisor lives (its pid and start time) no entry
// of that device is trusted or written: a search made before or during
// that run's agent's rename is never reused. An entry is written only if
// its device's generation did not change since it was read before the
// search. The record is out of every sandbox's reach (the state
// directory): an agent can neither keep a stale entry nor add one.
type farRecord struct {
	Gen     map[string]uint64 `json:"gen"` // device -> starts with a write path on it
	Writers []farWriter       `json:"writers,omitempty"`
	Left    []farLeft         `json:"left,omitempty"`
}

// farWriter is a start with a write path on device Dev: its supervisor.
type farWriter struct {
	Dev  uint64 `json:"dev"`
	Pid  int    `json:"pid"`
	Tick uint64 `json:"tick"`
}

// farLeft is a socket not found: its bound name and the kernel's inodes
// for it, the device searched and its generation then.
type farLeft struct {
	Name string   `json:"name"`
	Inos []uint32 `json:"inos"`
	Dev  uint64   `json:"dev"`
	Gen  uint64   `json:"gen"`
}

// maxFarLeft bounds the record's entries (the oldest dropped first).
const maxFarLeft = 256

// farSelf names this process as a writer (a test seam).
var farSelf = func() (int, uint64) { return os.Getpid(), selfStartTick() }

// farRecordFile is the record's file in stateDir ("" if none).
func farRecordFile(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, statedir.SocketsFar)
}

// lockFar takes the record's lock (beside it); nil if it cannot be made
// (then the record is neither read nor written: every search is made).
// The state directory is not made here: a plan never makes it (the start
// does, with its trail). Why: plans built by the tests with HOME=/ or a
// state directory in the host's root view made /.local/state/jail as
// root, which the unprivileged run then could not read (CI). A start
// without the directory yet has no record and searches; a writer that
// could not register then leaves no record to trust either, until the
// directory exists.
func lockFar(file string) func() {
	f, err := os.OpenFile(file+".lock", os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
		f.Close()
		return nil
	}
	return func() { f.Close() }
}

// readFar reads the record (empty if absent or unreadable) and drops the
// writers no longer alive.
func readFar(file string) farRecord {
	var r farRecord
	if b, err := os.ReadFile(file); err == nil {
		var ok bool
		if r, ok = decodeFar(b); !ok {
			_ = json.Unmarshal(b, &r)
		}
	}
	if r.Gen == nil {
		r.Gen = map[string]uint64{}
	}
	r.Writers = slices.DeleteFunc(r.Writers, func(w farWriter) bool { return !processLive(w.Pid, w.Tick) })
	return r
}

func writeFar(file string, r farRecord) error {
	if len(r.Left) > maxFarLeft {
		r.Left = r.Left[len(r.Left)-maxFarLeft:]
	}
	b, err := marshalFar(&r)
	if err != nil {
		return err
	}
	return replacefile.Write(file, ".sockets-far-*", b, false)
}

// farEncoder is zjson_linux.go's encoder of the record, nil without the
// file (or on another system).
var farEncoder func([]byte, *farRecord) ([]byte, error)

// marshalFar is json.Marshal's bytes of r, by the generated encoder when
// it is there: written by every start (farWriting), before the go.
func marshalFar(r *farRecord) ([]byte, error) {
	return jsonenc.Marshal(farEncoder, 256+len(r.Left)*96, r)
}

// writing reports whether a live start has a write path on dev.
func (r *farRecord) writing(dev uint64) bool {
	return slices.ContainsFunc(r.Writers, func(w farWriter) bool { return w.Dev == dev })
}

// writeDevs are the devices of mounts' writable binds (the host trees
// this run's agent can rename in), and of every host mount under one
// (hostMounts: a bind takes the mounts below it along).
func writeDevs(mounts []ns.Mount, hostMounts []fsrules.Mount) []uint64 {
	var devs []uint64
	add := func(p string) {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && !slices.Contains(devs, uint64(st.Dev)) {
			devs = append(devs, uint64(st.Dev))
		}
	}
	for _, m := range mounts {
		if m.Kind != ns.KindBind {
			continue
		}
		src := m.Source
		if src == "" {
			src = m.Path
		}
		add(src)
		for _, h := range hostMounts {
			if h.Point != src && pathUnder(h.Point, src) {
				add(h.Point)
			}
		}
	}
	return devs
}

// farWriting registers this start's write devices (those of mounts'
// writable binds) in the record at file: their entries dropped, their
// generations bumped, this supervisor a writer on each while it lives.
// Called for every start with the plan's mounts, degraded or not, before
// its agent runs.
func farWriting(file string, mounts []ns.Mount, hostMounts []fsrules.Mount) {
	devs := writeDevs(mounts, hostMounts)
	if file == "" || len(devs) == 0 {
		return
	}
	unlock := lockFar(file)
	if unlock == nil {
		// Why: fail closed: a record this start cannot update (and
		// could not drop) must not be trusted by the next.
		_ = os.Remove(file)
		return
	}
	defer unlock()
	r := readFar(file)
	pid, tick := farSelf()
	for _, d := range devs {
		r.Gen[strconv.FormatUint(d, 10)]++
		r.Writers = append(r.Writers, farWriter{Dev: d, Pid: pid, Tick: tick})
	}
	r.Left = slices.DeleteFunc(r.Left, func(l farLeft) bool { return slices.Contains(devs, l.Dev) })
	if writeFar(file, r) != nil {
		_ = os.Remove(file) // fail closed, as above
	}
}

// farBegin says which of lost (names gone from their place, by name) the
// record says were not found since on a device nobody could write: those
// are not searched. gens are the generations read, by device, for farEnd.
func farBegin(file string, lost []*farSocket, files *hostsock.Files) (skip map[string]bool, gens map[uint64]uint64) {
	if file == "" || files == nil || len(lost) == 0 {
		return nil, nil
	}
	unlock := lockFar(file)
	if unlock == nil {
		return nil, nil
	}
	defer unlock()
	r := readFar(file)
	gens = map[uint64]uint64{}
	for _, f := range lost {
		var st syscall.Stat_t
		if syscall.Stat(f.from, &st) != nil {
			continue
		}
		f.dev = uint64(st.Dev)
		g := r.Gen[strconv.FormatUint(f.dev, 10)]
		gens[f.dev] = g
		if r.writing(f.dev) {
			continue
		}
		inos := files.Inodes(f.name)
		if slices.ContainsFunc(r.Left, func(l farLeft) bool {
			return l.Name == f.name && l.Dev == f.dev && l.Gen == g && slices.Equal(l.Inos, inos)
		}) {
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[f.name] = true
		}
	}
	return skip, gens
}

// farEnd records the lost names searched and not found (left) whose
// device's generation is still the one farBegin read, and nobody writes
// on it: a start with a write path there since may have let its agent
// move one into view after the search.
func farEnd(file string, lost map[string]*farSocket, left []string, gens map[uint64]uint64, files *hostsock.Files) {
	if file == "" || gens == nil {
		return
	}
	var add []farLeft
	for _, name := range left {
		f := lost[name]
		if f == nil || f.dev == 0 {
			continue
		}
		if g, ok := gens[f.dev]; ok {
			add = append(add, farLeft{Name: name, Inos: files.Inodes(name), Dev: f.dev, Gen: g})
		}
	}
	if len(add) == 0 {
		return
	}
	unlock := lockFar(file)
	if unlock == nil {
		return
	}
	defer unlock()
	r := readFar(file)
	changed := false
	for _, a := range add {
		if r.Gen[strconv.FormatUint(a.Dev, 10)] != a.Gen || r.writing(a.Dev) {
			continue
		}
		r.Left = slices.DeleteFunc(r.Left, func(l farLeft) bool { return l.Name == a.Name && l.Dev == a.Dev })
		r.Left = append(r.Left, a)
		changed = true
	}
	if changed {
		_ = writeFar(file, r)
	}
}
