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
	return checkLooseUpTo(b, want, maxCopyObject)
}

// checkLooseUpTo is checkLoose for an object of at most max bytes
// inflated (a larger one is not one: errLoose).
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
	z, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, errLoose
	}
	defer z.Close()
	br := bufio.NewReaderSize(z, 4096)
	typ, size, err := parseHeader(br)
	if err != nil || size > max {
		return 0, errLoose
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
