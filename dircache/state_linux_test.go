package dircache

import (
	"bytes"
	"os"
	"testing"
)

// TestStateFailsClosed: a caller's state comes back exactly as set, from
// the file Save wrote; a file anyone else could have written, a changed
// byte, or another name's file gives nothing; SetState(nil) removes it.
func TestStateFailsClosed(t *testing.T) {
	dir := t.TempDir()
	open := func() *Cache {
		c, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := []byte("some state\x00\x01")
	c := open()
	c.SetState("a", want)
	c.SetState("b", []byte("other"))
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if got := open().State("a"); !bytes.Equal(got, want) {
		t.Fatalf("State = %q, want %q", got, want)
	}
	fa, fb := c.stateFile("a"), c.stateFile("b")
	orig, err := os.ReadFile(fa)
	if err != nil {
		t.Fatal(err)
	}
	for _, spoil := range []struct {
		name string
		do   func()
	}{
		{"writable by others", func() { os.Chmod(fa, 0o666) }},
		{"a byte changed", func() {
			b := append([]byte(nil), orig...)
			b[len(b)/2] ^= 1
			os.WriteFile(fa, b, 0o600)
		}},
		{"another name's file", func() {
			b, _ := os.ReadFile(fb)
			os.WriteFile(fa, b, 0o600)
		}},
		{"cut short", func() { os.WriteFile(fa, orig[:len(orig)-1], 0o600) }},
	} {
		spoil.do()
		if got := open().State("a"); got != nil {
			t.Errorf("%s: State = %q, want nothing", spoil.name, got)
		}
		os.WriteFile(fa, orig, 0o600)
		os.Chmod(fa, 0o600)
		if got := open().State("a"); !bytes.Equal(got, want) {
			t.Fatalf("after %s, put back: State = %q", spoil.name, got)
		}
	}
	c = open()
	c.SetState("a", nil)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(fa); !os.IsNotExist(err) {
		t.Errorf("SetState(nil): the file is still there (%v)", err)
	}
	if got := open().State("a"); got != nil {
		t.Errorf("State after removal = %q", got)
	}
}
