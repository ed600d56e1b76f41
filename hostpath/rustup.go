package hostpath

import (
	"os"
	"path/filepath"
)

// Rustup reports whether the file f runs is rustup. rustup installs the
// toolchain's commands (cargo, rustc, rustfmt, ...) in CARGO_HOME/bin as
// links to its own binary, symbolic or hard: run as cargo, it runs the
// cargo of the toolchain it chooses from RUSTUP_HOME (~/.rustup), a
// directory outside the command's install tree that it cannot run
// without ("rustup could not choose a version of cargo to run").
func Rustup(f File) bool {
	if filepath.Base(f.Final) == "rustup" {
		return true
	}
	// A hard link: the same file as the rustup beside it.
	fi, err := os.Stat(f.Final)
	if err != nil {
		return false
	}
	ri, err := os.Stat(filepath.Join(filepath.Dir(f.Final), "rustup"))
	return err == nil && os.SameFile(fi, ri)
}
