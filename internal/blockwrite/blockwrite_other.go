//go:build !unix

package blockwrite

import "os"

// Writer writes to its file (doc.go; nothing to wait out here).
type Writer struct{ f *os.File }

// New returns the Writer for f.
func New(f *os.File) *Writer { return &Writer{f: f} }

// File is the file the Writer writes to.
func (w *Writer) File() *os.File { return w.f }

// Write writes p to the file.
func (w *Writer) Write(p []byte) (int, error) { return w.f.Write(p) }

// WriteString is Write of s.
func (w *Writer) WriteString(s string) (int, error) { return w.f.WriteString(s) }
