//go:build !linux

package dircache

import (
	"errors"
	"os"
)

// Elsewhere than Linux nothing is cached: every directory is read.

func (c *Cache) stat(string) (Key, bool)       { return Key{}, false }
func fstatKey(*os.File) (Key, bool)            { return Key{}, false }
func private(string, int) error                { return errors.New("dircache: Linux only") }
func readPrivate(string, int) ([]byte, error)  { return nil, errors.New("dircache: Linux only") }
func writePrivate(_, _ string, _ []byte) error { return errors.New("dircache: Linux only") }
