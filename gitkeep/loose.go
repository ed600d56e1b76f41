package gitkeep

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"strconv"
	"sync"
)

// A loose object file (git's loose-object format): zlib of "TYPE SIZE\0"
// then SIZE bytes, and the hash of all of it (sha1, or sha256 in a sha256
// repository) is its name. The workspace's files are the agent's: a file
// named like an object is kept only when it is one.

var errLoose = errors.New("not a git loose object")

// maxHeader bounds the header read ("commit 18446744073709551615\0").
const maxHeader = 32

// looseHeader reads the header of the loose object in r (from its start)
// and returns the size it declares. width is the id's size in bytes.
func looseHeader(r io.ReaderAt, width int) (int64, error) {
	z, err := zlib.NewReader(io.NewSectionReader(r, 0, 1<<62))
	if err != nil {
		return 0, errLoose
	}
	defer z.Close()
	_, size, err := parseHeader(bufio.NewReaderSize(io.LimitReader(z, maxHeader), maxHeader))
	return size, err
}

// parseHeader reads "TYPE SIZE\0" from r.
func parseHeader(r *bufio.Reader) (string, int64, error) {
	h, err := r.ReadSlice(0)
	if err != nil {
		return "", 0, errLoose
	}
	typ, n, ok := bytes.Cut(h[:len(h)-1], []byte(" "))
	if !ok {
		return "", 0, errLoose
	}
	switch string(typ) {
	case "commit", "tree", "blob", "tag":
	default:
		return "", 0, errLoose
	}
	// git writes the size in decimal without a sign or a leading zero.
	if len(n) == 0 || (n[0] == '0' && len(n) > 1) || n[0] == '+' || n[0] == '-' {
		return "", 0, errLoose
	}
	size, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || size < 0 {
		return "", 0, errLoose
	}
	return string(typ), size, nil
}

// checkLoose verifies b, a whole loose object file, against its id want
// (20 bytes: sha1, 32: sha256): the header, exactly the bytes it
// declares after it (no more are inflated: a zip bomb costs its declared
// size), and the hash. It returns the inflated size.
func checkLoose(b []byte, want []byte) (int64, error) {
	return checkLooseUpTo(b, want, MaxCopyObject)
}

// errTooLarge is checkLooseUpTo's answer for a file whose header is a
// loose object's and declares more than its max: not read further.
var errTooLarge = errors.New("a git loose object larger than the bound")

// inflater is a zlib reader and the buffer on it, kept between objects
// (inflaters): a new zlib reader allocates and clears flate's 32 KiB
// window, which with the header's own second inflate was a third of a
// first start's copying (a copy of a few hundred loose objects, 0.5 ms
// each, is what MaxCopyTime bounds).
type inflater struct {
	src *bytes.Reader // the file's bytes: flate reads them byte by byte (an io.ByteReader), no further than its stream
	z   io.ReadCloser // zlib's reader; a zlib.Resetter
	br  *bufio.Reader
}

var inflaters = sync.Pool{New: func() any {
	return &inflater{src: bytes.NewReader(nil), br: bufio.NewReaderSize(nil, 4096)}
}}

// reset points in at the zlib stream b.
func (in *inflater) reset(b []byte) error {
	in.src.Reset(b)
	if in.z == nil {
		z, err := zlib.NewReader(in.src)
		if err != nil {
			return err
		}
		in.z = z
	} else if err := in.z.(zlib.Resetter).Reset(in.src, nil); err != nil {
		return err
	}
	in.br.Reset(in.z)
	return nil
}

// checkLooseUpTo is checkLoose for an object of at most max bytes
// inflated: a larger one is errTooLarge (its header read, nothing more),
// anything else that is not the object of want, or that git fsck calls
// corrupt (a byte after the stream), errLoose.
func checkLooseUpTo(b []byte, want []byte, max int64) (int64, error) {
	var h hash.Hash
	switch len(want) {
	case sha1.Size:
		h = sha1.New()
	case sha256.Size:
		h = sha256.New()
	default:
		return 0, errLoose
	}
	// A reader whose last stream failed is whole again after a Reset
	// (zlib's and flate's Reset clear every state but the window). The
	// pool's reader holds its last file's bytes until its next object or
	// a collection.
	in := inflaters.Get().(*inflater)
	defer inflaters.Put(in)
	if err := in.reset(b); err != nil {
		return 0, errLoose
	}
	n, err := checkInflated(in.br, h, want, max)
	if err == nil && in.src.Len() != 0 {
		// Why: git fsck calls a loose object with bytes after its zlib
		// stream corrupt ("garbage at end of loose object") and git gc
		// fails on it, though git's reader stops at the stream's end: an
		// agent's byte appended in place broke the user's gc, and the
		// end took the file for the true object (session 44).
		return 0, errLoose
	}
	return n, err
}

// checkInflated is checkLooseUpTo's check of the inflated stream br.
func checkInflated(br *bufio.Reader, h hash.Hash, want []byte, max int64) (int64, error) {
	typ, size, err := parseHeader(br)
	if err != nil {
		return 0, errLoose
	}
	if size > max {
		return 0, errTooLarge
	}
	h.Write([]byte(typ + " " + strconv.FormatInt(size, 10) + "\x00"))
	if n, err := io.CopyN(h, br, size); err != nil || n != size {
		return 0, errLoose
	}
	// Nothing after the declared bytes, and the zlib stream ends whole
	// (its checksum read).
	if n, err := io.CopyN(io.Discard, br, 1); n != 0 || err != io.EOF {
		return 0, errLoose
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return 0, errLoose
	}
	return size + int64(len(typ)) + 2 + int64(len(strconv.FormatInt(size, 10))), nil
}
