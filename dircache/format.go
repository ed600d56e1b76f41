package dircache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// The file format (all integers unsigned varints, ctime a signed one):
//
//	"JAILDC1\n" len(view) view
//	{ len(dir) dir dev ino ctime total n { type len(name) name [len(text) text] }*n }*
//	sha256(everything before)
//
// Records are sorted by dir, and names within a record (each once). The
// text follows only type linkCode: a symlink kept with its text (Links).
const magic = "JAILDC1\n"

// MaxFile bounds a cache file (a bigger one is ignored).
const MaxFile = 64 << 20

// Key is what a directory's record is valid for.
type Key struct {
	Dev, Ino uint64
	Ctime    int64 // nanoseconds since the epoch
}

// Entry is one kept name of a directory; *Entry is its fs.DirEntry.
type Entry struct {
	name string
	typ  fs.FileMode // the type bits only (fs.ModeType)
	dir  string      // the directory it is in (for Info; not stored)
	link string      // a symlink's text, when kept with it (Links); else ""
}

func (e *Entry) Name() string               { return e.name }
func (e *Entry) IsDir() bool                { return e.typ.IsDir() }
func (e *Entry) Type() fs.FileMode          { return e.typ }
func (e *Entry) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(e.dir, e.name)) }
func (e *Entry) String() string             { return fs.FormatDirEntry(e) }

// Link is the symlink's text when the entry was kept with it (Links).
func (e *Entry) Link() string { return e.link }

// Record is what was kept of one directory.
type Record struct {
	Key   Key
	Total int // entries the directory had in all
	Ents  []Entry
}

// type codes on disk
var typeCodes = [...]fs.FileMode{0, fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe, fs.ModeSocket,
	fs.ModeDevice | fs.ModeCharDevice, fs.ModeDevice, fs.ModeIrregular}

// linkCode is a symlink kept with its text (the text follows the name).
const linkCode = byte(len(typeCodes))

func typeCode(t fs.FileMode) (byte, bool) {
	for i, c := range typeCodes {
		if c == t&fs.ModeType {
			return byte(i), true
		}
	}
	return 0, false
}

var errFormat = errors.New("dircache: malformed cache file")

// Encode returns the file for view's records.
func Encode(view string, recs map[string]*Record) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(magic)
	putStr(&b, view)
	dirs := make([]string, 0, len(recs))
	for d := range recs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var tmp [binary.MaxVarintLen64]byte
	for _, d := range dirs {
		r := recs[d]
		putStr(&b, d)
		b.Write(tmp[:binary.PutUvarint(tmp[:], r.Key.Dev)])
		b.Write(tmp[:binary.PutUvarint(tmp[:], r.Key.Ino)])
		b.Write(tmp[:binary.PutVarint(tmp[:], r.Key.Ctime)])
		b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(r.Total))])
		b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(r.Ents)))])
		es := append([]Entry(nil), r.Ents...)
		sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
		for _, e := range es {
			c, ok := typeCode(e.typ)
			if !ok || e.link != "" && (e.typ&fs.ModeType != fs.ModeSymlink || !validLink(e.link)) {
				return nil, fmt.Errorf("dircache: %s/%s: type %v cannot be stored", d, e.name, e.typ)
			}
			if e.link != "" {
				c = linkCode
			}
			b.WriteByte(c)
			putStr(&b, e.name)
			if e.link != "" {
				putStr(&b, e.link)
			}
		}
	}
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes(), nil
}

func putStr(b *bytes.Buffer, s string) {
	var tmp [binary.MaxVarintLen64]byte
	b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(s)))])
	b.WriteString(s)
}

// Parse reads a cache file of view. Anything it cannot read exactly as
// Encode writes it is an error: the caller then ignores the whole file.
// The records do not refer to data.
func Parse(data []byte, view string) (map[string]*Record, error) {
	t, err := parseTable(data, view, false)
	if err != nil {
		return nil, err
	}
	recs := make(map[string]*Record, len(t.dirs))
	for i, d := range t.dirs {
		r := t.record(i)
		recs[d] = &r
	}
	return recs, nil
}

// table is a cache file's records as they lie in it: the file's body (one
// string), each record's directory and where its key starts. Loading a
// file makes no object per record; a lookup decodes the one it uses. (A
// map of decoded records made some 450 KB per file on the bench's tree of
// 2,800 directories, and its fresh pages were most of a start's parse: 7
// ms of it in a new process, two files a run.)
type table struct {
	s    string   // the records, all checked by parseTable
	dirs []string // each record's directory (slices of s), ascending
	off  []int32  // where each record's key starts in s
}

// find returns the index of dir's record.
func (t *table) find(dir string) (int, bool) {
	return slices.BinarySearch(t.dirs, dir)
}

// head decodes record i up to its entries: its key, how many entries the
// directory had, how many were kept, and a parser at the first of them.
// The record was checked by parseTable: nothing here can fail.
func (t *table) head(i int) (k Key, total, n int, p parser) {
	p.s = t.s[t.off[i]:]
	dev, _ := p.uvarint()
	ino, _ := p.uvarint()
	ct, _ := p.varint()
	tot, _ := p.uvarint()
	nn, _ := p.uvarint()
	return Key{Dev: dev, Ino: ino, Ctime: ct}, int(tot), int(nn), p
}

// key is record i's key.
func (t *table) key(i int) Key {
	k, _, _, _ := t.head(i)
	return k
}

// record decodes record i (its names are slices of t.s).
func (t *table) record(i int) Record {
	k, total, n, p := t.head(i)
	r := Record{Key: k, Total: total}
	if n > 0 {
		r.Ents = make([]Entry, n)
	}
	for j := range r.Ents {
		code := p.s[0]
		p.s = p.s[1:]
		e := &r.Ents[j]
		e.typ, e.dir = fs.ModeSymlink, t.dirs[i]
		if code != linkCode {
			e.typ = typeCodes[code]
		}
		e.name, _ = p.str()
		if code == linkCode {
			e.link, _ = p.str()
		}
	}
	return r
}

// parseTable checks a cache file of view as parse did it whole, and
// returns its records undecoded. With owned, the table's strings are data
// itself (the caller's buffer, never written again), not a copy.
func parseTable(data []byte, view string, owned bool) (table, error) {
	if len(data) > MaxFile || len(data) < len(magic)+sha256.Size || string(data[:len(magic)]) != magic {
		return table{}, errFormat
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return table{}, fmt.Errorf("%w (checksum)", errFormat)
	}
	var p parser
	if rest := body[len(magic):]; owned && len(rest) > 0 {
		p.s = unsafe.String(&rest[0], len(rest))
	} else {
		p.s = string(rest)
	}
	if v, ok := p.str(); !ok || v != view {
		return table{}, fmt.Errorf("%w (another view)", errFormat)
	}
	t := table{s: p.s}
	// Sized for the file (a record takes 40 bytes or more when its path is
	// 30 long), up to 65,536 records; a file of Links' records (see
	// linksView) has a few large ones.
	nrec := min(len(p.s)/40, 1<<16)
	if strings.HasSuffix(view, linksSuffix) {
		nrec = 16
	}
	t.dirs, t.off = make([]string, 0, nrec), make([]int32, 0, nrec)
	prev := ""
	for len(p.s) > 0 {
		d, ok := p.str()
		if !ok || !validDir(d) || d <= prev {
			return table{}, fmt.Errorf("%w (directory)", errFormat)
		}
		prev = d
		off := len(t.s) - len(p.s)
		var total, n uint64
		var ok1, ok2, ok3, ok4, ok5 bool
		_, ok1 = p.uvarint()
		_, ok2 = p.uvarint()
		_, ok3 = p.varint()
		total, ok4 = p.uvarint()
		n, ok5 = p.uvarint()
		// Each entry takes two bytes at least: n is bounded by what is left.
		if !(ok1 && ok2 && ok3 && ok4 && ok5) || n > uint64(len(p.s))/2 || total < n || total > MaxFile {
			return table{}, fmt.Errorf("%w (record of %s)", errFormat, d)
		}
		last := ""
		for i := uint64(0); i < n; i++ {
			if len(p.s) == 0 || p.s[0] > linkCode {
				return table{}, fmt.Errorf("%w (entry type in %s)", errFormat, d)
			}
			code := p.s[0]
			p.s = p.s[1:]
			// Names in ascending order: none twice, one way to write a set.
			name, ok := p.str()
			if !ok || !validName(name) || name <= last {
				return table{}, fmt.Errorf("%w (entry name in %s)", errFormat, d)
			}
			last = name
			if code == linkCode {
				if link, ok := p.str(); !ok || !validLink(link) {
					return table{}, fmt.Errorf("%w (symlink text in %s)", errFormat, d)
				}
			}
		}
		t.dirs = append(t.dirs, d)
		t.off = append(t.off, int32(off))
	}
	return t, nil
}

type parser struct{ s string }

// uvarint is binary.Uvarint on a string; a value not in its shortest
// form is refused (the file would not be canonical).
func (p *parser) uvarint() (uint64, bool) {
	var v uint64
	for i := 0; i < len(p.s) && i < binary.MaxVarintLen64; i++ {
		b := p.s[i]
		if i == binary.MaxVarintLen64-1 && b > 1 {
			return 0, false // overflow
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if b == 0 && i > 0 {
				return 0, false // not the shortest form
			}
			p.s = p.s[i+1:]
			return v, true
		}
	}
	return 0, false
}

func (p *parser) varint() (int64, bool) {
	u, ok := p.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x, ok
}

func (p *parser) str() (string, bool) {
	l, ok := p.uvarint()
	if !ok || l > uint64(len(p.s)) {
		return "", false
	}
	s := p.s[:l]
	p.s = p.s[l:]
	return s, true
}

// validDir: absolute, clean, no NUL.
func validDir(d string) bool {
	return d != "" && d[0] == '/' && path.Clean(d) == d && !strings.ContainsRune(d, 0)
}

// validName: one path element.
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

// validLink: a symlink's text as readlink(2) gives it (not empty, no NUL,
// shorter than PATH_MAX).
func validLink(l string) bool {
	return l != "" && len(l) < 4096 && !strings.ContainsRune(l, 0)
}
