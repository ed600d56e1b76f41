//go:build !unix

package blockio

import "os"

// Writer writes to its file (doc.go; nothing to wait out here).
type Writer struct{ f *os.File }

// NewWriter returns the Writer for f.
func NewWriter(f *os.File) *Writer { return &Writer{f: f} }

// File is the file the Writer writes to.
func (w *Writer) File() *os.File { return w.f }

// Write writes p to the file.
func (w *Writer) Write(p []byte) (int, error) { return w.f.Write(p) }

// WriteString is Write of s.
func (w *Writer) WriteString(s string) (int, error) { return w.f.WriteString(s) }

// Reader reads its file (doc.go; nothing to wait out here).
type Reader struct{ f *os.File }

// NewReader returns the Reader for f.
func NewReader(f *os.File) *Reader { return &Reader{f: f} }

// Read reads from the file.
func (r *Reader) Read(p []byte) (int, error) { return r.f.Read(p) }
