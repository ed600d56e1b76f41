// Package replacefile replaces a small file of jail's own (a record or a
// cache in the state directory, the trust store) as a whole: the bytes go
// to a new file in the same directory, which is then renamed over the name.
// A reader meanwhile sees the old version or the new one, never a part;
// whatever stood at the name (a symlink too) is replaced, never written
// through; the new file is the user's only (0600, os.CreateTemp's mode).
package replacefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces file with data. pattern names the temporary file
// (os.CreateTemp's pattern; "" is the file's name and ".*"). With sync the
// data reach the disk before the rename (a record whose loss costs more
// than a repeated question). The temporary file is removed on any failure.
// Errors carry the operation and the path.
func Write(file, pattern string, data []byte, sync bool) error {
	if pattern == "" {
		pattern = filepath.Base(file) + ".*"
	}
	// O_EXCL under a new random name: nothing planted at the name can be
	// written through; the rename below replaces the name itself.
	tmp, err := os.CreateTemp(filepath.Dir(file), pattern)
	if err != nil {
		return fmt.Errorf("replace %s: %w", file, err)
	}
	_, err = tmp.Write(data)
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("replace %s: %w", file, err)
	}
	return nil
}
