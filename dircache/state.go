package dircache

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
)

// A caller's state: a few bytes of its own that one run leaves for the
// next (fsrules' record of the home's protected directories, for the
// hard-link check), kept like the records (a private file of the cache
// directory, checked the same way, a SHA-256 trailer over the whole).
// What the bytes mean and when they may be trusted is the caller's to
// argue; the cache says only that they are what an earlier run of the
// same user set under that name, in a file nobody else could write.

const stateMagic = "JAILST1\n"

// stateFile is the file of the state named name (apart from any view's).
func (c *Cache) stateFile(name string) string { return c.fileOf("state\x00" + name) }

// State returns the bytes kept under name by SetState and Save in an
// earlier run; nil when there are none, the cache is off, or the file is
// not exactly what Save writes (the caller then starts afresh).
func (c *Cache) State(name string) []byte {
	if c == nil || c.dir == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.states[name]; ok {
		return b // this run's, not written yet
	}
	b, err := readPrivate(c.stateFile(name), c.uid)
	if err != nil {
		return nil
	}
	out, err := parseState(b, name)
	if err != nil {
		return nil
	}
	return out
}

// SetState keeps b under name, written at Save; nil removes it.
func (c *Cache) SetState(name string, b []byte) {
	if c == nil || c.dir == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.states == nil {
		c.states = map[string][]byte{}
	}
	c.states[name] = b
	c.stateDirty = true
}

// saveStates writes the states set in this run. c.mu is held.
func (c *Cache) saveStates() error {
	if !c.stateDirty {
		return nil
	}
	var errs []error
	for name, b := range c.states {
		p := c.stateFile(name)
		if b == nil {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		var f bytes.Buffer
		f.WriteString(stateMagic)
		putStr(&f, name)
		f.Write(b)
		sum := sha256.Sum256(f.Bytes())
		f.Write(sum[:])
		if err := writePrivate(c.dir, p, f.Bytes()); err != nil {
			errs = append(errs, err)
		}
	}
	c.stateDirty = false
	return errors.Join(errs...)
}

// parseState returns the bytes of a state file of name, or an error when
// it is anything else.
func parseState(data []byte, name string) ([]byte, error) {
	if len(data) > MaxFile || len(data) < len(stateMagic)+sha256.Size || string(data[:len(stateMagic)]) != stateMagic {
		return nil, errFormat
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errFormat
	}
	p := parser{s: string(body[len(stateMagic):])}
	if n, ok := p.str(); !ok || n != name {
		return nil, errFormat
	}
	return []byte(p.s), nil
}

// Trusted reports whether dir, a directory on device dev, lies on a file
// system whose directories' ctimes are trusted (see the package doc).
func (c *Cache) Trusted(dev uint64, dir string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trusted(dev, dir)
}
