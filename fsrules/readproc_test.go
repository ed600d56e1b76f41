package fsrules

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadProcFileSameAsReadFile: readProcFile returns what os.ReadFile
// returns, for a file longer than its first buffer and any number of reads
// (a regular file of 20,000 bytes: three buffers), an empty one, a missing
// one (an error), and on Linux /proc/self/mountinfo (generated: fstat says
// 0 bytes).
func TestReadProcFileSameAsReadFile(t *testing.T) {
	d := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 20000/17+1)
	for name, data := range map[string][]byte{"big": big, "empty": nil, "page": big[:8192], "small": []byte("1 2 3\n")} {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readProcFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("readProcFile(%s) = %d bytes, %v; want %d bytes", name, len(got), err, len(data))
		}
	}
	if _, err := readProcFile(filepath.Join(d, "missing")); !os.IsNotExist(err) {
		t.Errorf("readProcFile(missing): %v, want not exist", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	// The mount table can change between the two reads (another process
	// mounting): a few tries for the same bytes.
	for try := 0; ; try++ {
		want, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		got, err := readProcFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) && len(got) > 0 {
			break
		}
		if try == 5 {
			t.Fatalf("readProcFile(/proc/self/mountinfo): %d bytes differ from os.ReadFile's %d", len(got), len(want))
		}
	}
}
