package dircache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// The file format (all integers unsigned varints, ctime a signed one):
//
//	"JAILDC1\n" len(view) view
//	{ len(dir) dir dev ino ctime total n { type len(name) name }*n }*
//	sha256(everything before)
//
// Records are sorted by dir; names within a record are unique.
const magic = "JAILDC1\n"

// MaxFile bounds a cache file (a bigger one is ignored).
const MaxFile = 64 << 20

// Key is what a directory's record is valid for.
type Key struct {
	Dev, Ino uint64
	Ctime    int64 // nanoseconds since the epoch
}

// Entry is one kept name of a directory.
type Entry struct {
	Name string
	Type fs.FileMode // the type bits only (fs.ModeType)
}

// Record is what was kept of one directory.
type Record struct {
	Key   Key
	Total int // entries the directory had in all
	Ents  []Entry
}

// type codes on disk
var typeCodes = []fs.FileMode{0, fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe, fs.ModeSocket,
	fs.ModeDevice | fs.ModeCharDevice, fs.ModeDevice, fs.ModeIrregular}

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
		for _, e := range r.Ents {
			c, ok := typeCode(e.Type)
			if !ok {
				return nil, fmt.Errorf("dircache: %s/%s: type %v cannot be stored", d, e.Name, e.Type)
			}
			b.WriteByte(c)
			putStr(&b, e.Name)
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
func Parse(data []byte, view string) (map[string]*Record, error) {
	if len(data) > MaxFile || len(data) < len(magic)+sha256.Size || string(data[:len(magic)]) != magic {
		return nil, errFormat
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, fmt.Errorf("%w (checksum)", errFormat)
	}
	p := parser{b: body[len(magic):]}
	if v, ok := p.str(); !ok || v != view {
		return nil, fmt.Errorf("%w (another view)", errFormat)
	}
	recs := map[string]*Record{}
	prev := ""
	for len(p.b) > 0 {
		d, ok := p.str()
		if !ok || !validDir(d) || d <= prev {
			return nil, fmt.Errorf("%w (directory)", errFormat)
		}
		prev = d
		r := &Record{}
		var total, n uint64
		var ok1, ok2, ok3, ok4, ok5 bool
		r.Key.Dev, ok1 = p.uvarint()
		r.Key.Ino, ok2 = p.uvarint()
		r.Key.Ctime, ok3 = p.varint()
		total, ok4 = p.uvarint()
		n, ok5 = p.uvarint()
		// Each entry takes two bytes at least: n is bounded by what is left.
		if !(ok1 && ok2 && ok3 && ok4 && ok5) || n > uint64(len(p.b))/2 || total < n || total > MaxFile {
			return nil, fmt.Errorf("%w (record of %s)", errFormat, d)
		}
		r.Total = int(total)
		r.Ents = make([]Entry, 0, n)
		seen := make(map[string]bool, n)
		for i := uint64(0); i < n; i++ {
			if len(p.b) == 0 || int(p.b[0]) >= len(typeCodes) {
				return nil, fmt.Errorf("%w (entry type in %s)", errFormat, d)
			}
			t := typeCodes[p.b[0]]
			p.b = p.b[1:]
			name, ok := p.str()
			if !ok || !validName(name) || seen[name] {
				return nil, fmt.Errorf("%w (entry name in %s)", errFormat, d)
			}
			seen[name] = true
			r.Ents = append(r.Ents, Entry{Name: name, Type: t})
		}
		recs[d] = r
	}
	return recs, nil
}

type parser struct{ b []byte }

func (p *parser) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		return 0, false
	}
	p.b = p.b[n:]
	return v, true
}

func (p *parser) varint() (int64, bool) {
	v, n := binary.Varint(p.b)
	if n <= 0 {
		return 0, false
	}
	p.b = p.b[n:]
	return v, true
}

func (p *parser) str() (string, bool) {
	l, ok := p.uvarint()
	if !ok || l > uint64(len(p.b)) {
		return "", false
	}
	s := string(p.b[:l])
	p.b = p.b[l:]
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
