package gitguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	mbits "math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Gitlinks: a submodule is an index entry of mode 160000 (a "gitlink").
// git status, git diff and an IDE's git view look into every populated
// gitlink of the index: they run git in that checkout, which reads the
// checkout's own .git and its config (core.fsmonitor runs a program). The
// index is data the agent writes freely (git add), and a gitlink needs no
// .gitmodules entry: a .git made at any depth and named by a gitlink makes
// the host's `git status` at the top of the work tree run the agent's
// config during the run, not only a git run inside that directory. So the
// paths the index names as gitlinks are observed down to their .git, like
// the first level of subdirectories is (see Role.Links).

// maxIndex bounds the index files read (git's own limit is memory).
const maxIndex = 128 << 20

// maxGitlinks bounds the gitlinks taken from one index.
const maxGitlinks = 4096

// maxName: the longest entry name that can be a checkout. git looks at a
// gitlink's checkout by its name relative to the top of the work tree
// (lstat, then name/.git); the kernel refuses a path of PATH_MAX (4096)
// bytes or more with ENAMETOOLONG, so git never sees a longer one, and
// neither gitlink nor prefix of one needs more bytes than this.
const maxName = 4096

var errIndex = errors.New("index git would not read")

// errManyLinks: more gitlinks than maxGitlinks.
var errManyLinks = errors.New("index names too many gitlinks")

// ParseGitlinks returns the paths (relative to the work tree, '/'
// separated) of the gitlink entries of an index file, as git 2.39's
// read-cache.c reads them: versions 2 and 3 (entries padded to 8 bytes, an
// extended flags word when flag 0x4000 is set in version 3) and 4
// (prefix-compressed names). hashSize is 20 (SHA-1) or 32 (SHA-256). A
// name longer than maxName is no checkout git can reach and is skipped.
// The entries of a split index's shared index are not in data (see
// indexGitlinks).
func ParseGitlinks(data []byte, hashSize int) ([]string, error) {
	ix, err := parseIndex(data, hashSize, nil)
	return ix.links, err
}

// index is what parseIndex takes from an index file.
type index struct {
	links []string // the gitlinks' names
	// named: the names of the named entries at the positions asked for
	// (a shared index: those a split index replaces), by position among
	// the named entries; count: how many named entries there are.
	named map[int]string
	count int
	// replModes: the modes of the entries with no name, in order: in a
	// split index, the first entries replace the shared index's entries
	// that the replace bitmap marks, and keep their names.
	replModes []uint32
	// shared: the "link" extension's hash of the shared index (hex);
	// replace: its replace bitmap's set bits; badReplace: it could not
	// be read.
	shared     string
	replace    []int
	badReplace bool
}

// parseIndex reads an index file; want, if set, says which named entries
// names to keep (ix.named): only those, not every name, since each can be
// up to maxName bytes made from one byte of a version 4 file (100,000
// entries of a shared index kept 826 MB; review13f).
func parseIndex(data []byte, hashSize int, want func(pos int) bool) (ix index, err error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return ix, fmt.Errorf("%w: no DIRC header", errIndex)
	}
	ver := binary.BigEndian.Uint32(data[4:8])
	if ver < 2 || ver > 4 {
		return ix, fmt.Errorf("%w: version %d", errIndex, ver)
	}
	n := binary.BigEndian.Uint32(data[8:12])
	// prev: the previous name (version 4 names are made from it), kept
	// to at most maxName bytes, and prevLen its whole length. Copying a
	// whole kept prefix per entry let a 1 MB name followed by entries
	// that keep it (64 bytes each) cost 1 MB each: terabytes for an
	// index of maxIndex, in the supervisor (review13f).
	var prev []byte
	if ver == 4 {
		prev = make([]byte, 0, maxName+1)
	}
	prevLen := 0
	off := 12
	for i := uint32(0); i < n; i++ {
		fixed := 40 + hashSize + 2
		if off+fixed > len(data) {
			return ix, fmt.Errorf("%w: entry %d truncated", errIndex, i)
		}
		mode := binary.BigEndian.Uint32(data[off+24 : off+28])
		flags := binary.BigEndian.Uint16(data[off+40+hashSize : off+fixed])
		name := off + fixed
		if flags&0x4000 != 0 {
			// Extended flags (git reads them whatever the version).
			name += 2
		}
		if name >= len(data) {
			return ix, fmt.Errorf("%w: entry %d truncated", errIndex, i)
		}
		// As create_from_disk: the name's length is in the flags (0xfff:
		// up to the NUL); version 4 first drops a varint's worth of bytes
		// from the end of the previous name (none for the first entry)
		// and keeps the rest of it as the start of this one.
		ln := int(flags & 0xfff)
		var path []byte
		if ver == 4 {
			k := name
			c := data[k]
			k++
			strip := int(c & 127)
			for c&128 != 0 {
				if k >= len(data) || strip > 1<<24 {
					return ix, fmt.Errorf("%w: entry %d: bad name prefix", errIndex, i)
				}
				c = data[k]
				k++
				strip = ((strip + 1) << 7) | int(c&127)
			}
			keep := 0
			if i > 0 {
				if strip > prevLen {
					return ix, fmt.Errorf("%w: entry %d: bad name prefix", errIndex, i)
				}
				keep = prevLen - strip
			}
			if ln == 0xfff {
				nul := bytes.IndexByte(data[min(k, len(data)):], 0)
				if nul < 0 {
					return ix, fmt.Errorf("%w: entry %d truncated", errIndex, i)
				}
				ln = nul + keep
			}
			rest := ln - keep
			if rest < 0 || k+rest >= len(data) {
				return ix, fmt.Errorf("%w: entry %d: bad name", errIndex, i)
			}
			// In place: the name begins with the kept part of the
			// previous one, and only what the file adds is copied, at
			// most maxName+1 bytes in all: a longer name is marked too
			// long by its length (prevLen), not by its bytes.
			path = append(prev[:min(keep, maxName+1)], data[k:k+min(rest, max(0, maxName+1-keep))]...)
			prevLen = ln
			off = k + rest + 1
		} else {
			if ln == 0xfff {
				if ln = bytes.IndexByte(data[name:], 0); ln < 0 {
					return ix, fmt.Errorf("%w: entry %d truncated", errIndex, i)
				}
			}
			if name+ln > len(data) {
				return ix, fmt.Errorf("%w: entry %d truncated", errIndex, i)
			}
			path = data[name : name+ln]
			prevLen = ln
			// The entry, its name and 1 to 8 NULs: a multiple of 8 bytes.
			off += (name - off + ln + 8) &^ 7
		}
		prev = path
		if prevLen == 0 {
			ix.replModes = append(ix.replModes, mode)
			continue
		}
		pos := ix.count
		ix.count++
		if prevLen > maxName {
			continue // no checkout git can reach (see maxName)
		}
		if want != nil && want(pos) {
			if ix.named == nil {
				ix.named = map[int]string{}
			}
			ix.named[pos] = string(path)
		}
		if mode&0o170000 == 0o160000 {
			if len(ix.links) >= maxGitlinks {
				return ix, fmt.Errorf("%w: more than %d gitlinks", errManyLinks, maxGitlinks)
			}
			ix.links = append(ix.links, string(path))
		}
	}
	// The extensions, up to the trailing hash: a split index's "link"
	// names its shared index (hash, then the delete and replace bitmaps).
	for off+8 <= len(data)-hashSize {
		sig, size := string(data[off:off+4]), int(binary.BigEndian.Uint32(data[off+4:off+8]))
		off += 8
		if size < 0 || size > len(data)-hashSize-off {
			break
		}
		if sig == "link" && size >= hashSize {
			ext := data[off : off+size]
			ix.shared = fmt.Sprintf("%x", ext[:hashSize])
			rest := ext[hashSize:]
			if len(rest) > 0 {
				// The delete bitmap first: entries gone (not used:
				// observing more is safe), then the replace bitmap.
				var ok bool
				if _, n, dok := ewahBits(rest, 0); !dok {
					ix.badReplace = true
				} else if ix.replace, _, ok = ewahBits(rest[n:], len(ix.replModes)); !ok {
					ix.badReplace = true
				}
			} else if len(ix.replModes) > 0 {
				ix.badReplace = true
			}
		}
		off += size
	}
	return ix, nil
}

// ewahBits decodes one EWAH bitmap as git's ewah_io.c writes it (32-bit
// bit count, 32-bit word count, 64-bit words, 32-bit position of the last
// run word; big-endian): the set bits, at most max of them (max 0: none
// kept, only the length read), and the bytes it took.
func ewahBits(b []byte, max int) (bits []int, n int, ok bool) {
	if len(b) < 12 {
		return nil, 0, false
	}
	words := int(binary.BigEndian.Uint32(b[4:8]))
	if words < 0 || words > (len(b)-12)/8 {
		return nil, 0, false
	}
	n = 8 + 8*words + 4
	bit := 0
	for i := 0; i < words && len(bits) < max; {
		rlw := binary.BigEndian.Uint64(b[8+8*i:])
		run, lits := int((rlw>>1)&0xffffffff), int(rlw>>33)
		if rlw&1 != 0 {
			for k := 0; k < run*64 && len(bits) < max; k++ {
				bits = append(bits, bit+k)
			}
		}
		bit += run * 64
		i++
		for j := 0; j < lits && i < words; j, i = j+1, i+1 {
			// Only the set bits visited: a bitmap of maxIndex bytes of
			// zero literal words took 64 steps a word, 2.3 s of the
			// supervisor at each write of the index (review13f).
			for w := binary.BigEndian.Uint64(b[8+8*i:]); w != 0 && len(bits) < max; w &= w - 1 {
				bits = append(bits, bit+mbits.TrailingZeros64(w))
			}
			bit += 64
		}
	}
	return bits, n, true
}

// indexGitlinks returns the absolute checkout paths of the gitlinks in the
// index of git dir d, whose work tree is wt; nil when there is none or the
// index cannot be read. over is set when the index names more gitlinks
// than are taken (maxGitlinks), or is too large to be read: the rest are
// not observed during the run, which the caller says.
func indexGitlinks(d, wt string) (out []string, over string) {
	f, err := os.Open(filepath.Join(d, "index"))
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && fi.Mode().IsRegular() && fi.Size() > maxIndex {
		return nil, fmt.Sprintf("the index is larger than %d MB: the gitlinks it names are not observed", maxIndex>>20)
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 12 {
		return nil, ""
	}
	// Mapped, not read: a big work tree's index is tens of MB, read at
	// every start (a copy into a fresh buffer cost more than the parse).
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, ""
	}
	defer syscall.Munmap(data)
	hs := 20
	if b, err := os.ReadFile(filepath.Join(d, "config")); err == nil {
		es, _ := ParseConfig(b)
		for _, e := range es {
			if e.Section == "extensions" && !e.HasSub && e.Key == "objectformat" && strings.EqualFold(e.Value, "sha256") {
				hs = 32
			}
		}
	}
	// What was read before an error counts. (The names are copied out of
	// the mapping by filepath.Join below.)
	ix, err := parseIndex(data, hs, nil)
	rels := ix.links
	if ix.shared != "" {
		// A split index (core.splitIndex): most entries are in
		// sharedindex.HASH beside it, whose gitlinks git status looks
		// into as well; an entry of it that the index replaces takes the
		// replacement's mode (a file made a gitlink has no name here).
		sh, shOver := sharedGitlinks(d, hs, ix)
		rels = append(rels, sh...)
		if shOver {
			err = errManyLinks
		}
	}
	if errors.Is(err, errManyLinks) || len(rels) > maxGitlinks {
		// A cap an agent can fill with decoys that sort first: the
		// gitlinks past it are not observed, which is said.
		over = fmt.Sprintf("the index names more than %d gitlinks: only the first %d are observed", maxGitlinks, maxGitlinks)
		rels = rels[:min(len(rels), maxGitlinks)]
	}
	for _, r := range rels {
		p := filepath.Join(wt, filepath.FromSlash(r))
		if under(p, wt) && p != wt {
			out = append(out, p)
		}
	}
	return out, over
}

// sharedGitlinks returns the gitlinks that split index ix takes from its
// shared index in git dir d: the shared index's own, and its entries that
// ix's replacements make gitlinks (when the replace bitmap cannot be read,
// every entry counts, up to maxGitlinks: observing more is safe,
// observing less is not).
func sharedGitlinks(d string, hs int, ix index) (links []string, over bool) {
	if len(ix.shared) != 2*hs {
		return nil, false
	}
	f, err := os.Open(filepath.Join(d, "sharedindex."+ix.shared))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 12 || fi.Size() > maxIndex {
		return nil, false
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	defer syscall.Munmap(data)
	linkRepl := false
	for _, m := range ix.replModes {
		linkRepl = linkRepl || m&0o170000 == 0o160000
	}
	// The shared entries a gitlink replaces (at most maxGitlinks of them:
	// no more are observed), or, the bitmap unreadable, the first
	// maxGitlinks entries.
	var want func(int) bool
	var repl []int
	switch {
	case !linkRepl:
	case ix.badReplace:
		want = func(pos int) bool { return pos < maxGitlinks }
	default:
		set := map[int]bool{}
		for k, pos := range ix.replace {
			if k < len(ix.replModes) && ix.replModes[k]&0o170000 == 0o160000 && len(repl) < maxGitlinks {
				repl = append(repl, pos)
				set[pos] = true
			}
		}
		want = func(pos int) bool { return set[pos] }
	}
	sh, err := parseIndex(data, hs, want)
	over = errors.Is(err, errManyLinks)
	out := sh.links
	switch {
	case !linkRepl:
	case ix.badReplace:
		for pos := 0; pos < min(sh.count, maxGitlinks); pos++ {
			if n, ok := sh.named[pos]; ok {
				out = append(out, n)
			}
		}
		over = over || sh.count > maxGitlinks
	default:
		for _, pos := range repl {
			if n, ok := sh.named[pos]; ok {
				out = append(out, n)
			}
		}
	}
	if len(out) > maxGitlinks {
		out, over = out[:maxGitlinks], true
	}
	// Copied out of the mapping (the names point into it).
	res := make([]string, len(out))
	for i, s := range out {
		res[i] = strings.Clone(s)
	}
	return res, over
}

// workTree returns the work tree whose index git dir d holds: the parent
// of a .git directory, the checkout a linked worktree's gitdir file names,
// or the core.worktree of d's config (a submodule's git dir under
// .git/modules/: git status in the superproject runs status there, which
// looks into its own gitlinks); "" for a bare repository (no status).
func workTree(d string) string {
	if filepath.Base(d) == ".git" {
		return filepath.Dir(d)
	}
	if !exists(filepath.Join(d, "commondir")) {
		b, err := os.ReadFile(filepath.Join(d, "config"))
		if err != nil {
			return ""
		}
		es, _ := ParseConfig(b)
		wt := ""
		for _, e := range es {
			if e.Section == "core" && !e.HasSub && e.Key == "worktree" && !e.NoValue {
				wt = e.Value // the last one wins
			}
		}
		if wt == "" {
			return ""
		}
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(d, wt)
		}
		return filepath.Clean(wt)
	}
	b, err := readSmall(filepath.Join(d, "gitdir"))
	if err != nil {
		return ""
	}
	back := strings.TrimRight(string(b), " \t\r\n")
	if back == "" {
		return ""
	}
	if !filepath.IsAbs(back) {
		back = filepath.Join(d, back)
	}
	return filepath.Dir(filepath.Clean(back))
}

// observeLink observes every existing directory from from (wt, or an
// observed directory on the way) down to gitlink checkout p, each to judge
// p again at its changes; it returns the newly observed ones.
// The caller checks that p is inside the roots.
func (g *Guard) observeLink(from, p string) (added []string) {
	var rest []string
	if p != from {
		r, ok := strings.CutPrefix(p, from+"/")
		if !ok {
			return nil
		}
		rest = strings.Split(r, "/")
	}
	d := from
	for i := -1; i < len(rest); i++ {
		if i >= 0 {
			d = d + "/" + rest[i]
		}
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			return added // not there yet (or a link git does not follow): judged when it appears
		}
		if r, ok := g.Dirs[d]; ok {
			if !slices.Contains(r.Links, p) {
				r.Links = append(r.Links, p)
				g.Dirs[d] = r
			}
			continue
		}
		if g.observe(d, Role{Kind: RoleLink, Links: []string{p}}) {
			added = append(added, d)
		}
	}
	return added
}

// gitlinks observes the gitlink checkouts of git dir d's index and judges
// what is there now. Scan does not read the index (a big work tree's is
// tens of MB, and the plan is on the start's critical path): the
// sentinel's first pass, which inspects every observed directory before
// the sandbox starts and beside init's setup, does, so a submodule
// registered before the run is observed before the agent runs. The exit
// check walks every depth: there, nothing to add.
func (j *judge) gitlinks(d string) {
	if j.final {
		return
	}
	wt := workTree(d)
	if wt == "" {
		return
	}
	links, over := indexGitlinks(d, wt)
	for _, p := range links {
		j.link(wt, p)
	}
	if idx := filepath.Join(d, "index"); over != "" && !j.g.Told[idx] {
		// Not observed during the run: the host's git status there may
		// run what the agent plants in a checkout past them until the
		// sandbox ends (the exit check walks every depth). Said once.
		if j.g.Told == nil {
			j.g.Told = map[string]bool{}
		}
		j.g.Told[idx] = true
		j.add(Finding{Path: idx, Rule: "git: gitlinks", ReportOnly: true,
			Reason: over + " while the sandbox runs; until it ends, do not run git in " + wt + " on the host (a submodule checkout could run the agent's core.fsmonitor); the exit check covers every depth"})
	}
}

// link judges gitlink checkout p below from: its directories are observed
// as they appear, its .git judged.
func (j *judge) link(from, p string) {
	if j.final || !j.g.inRoots(p) {
		return
	}
	j.newDirs = append(j.newDirs, j.g.observeLink(from, p)...)
	j.dotGit(filepath.Join(p, ".git"))
	j.headDir(p)
}
