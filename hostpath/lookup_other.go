//go:build !linux

package hostpath

import "os"

// pathLookup looks each name up by its whole path (lstat, readlink).
type pathLookup struct{}

func newLookup() (lookup, error) { return pathLookup{}, nil }

func (pathLookup) stat(path, _ string) (os.FileInfo, error) { return os.Lstat(path) }
func (pathLookup) readlink(path, _ string) (string, error)  { return os.Readlink(path) }
func (pathLookup) enter(string, string) error               { return nil }
func (pathLookup) up(string) error                          { return nil }
func (pathLookup) root() error                              { return nil }
func (pathLookup) close()                                   {}
