package termfilter

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Throughput of the filter on what a relay sees: 32 KiB reads of a log
// (`cat` of a large file), of non-ASCII text, and of a full-screen TUI's
// redraws (SGR and cursor moves every few characters). Compare with
// BenchmarkCopy, the relay without a filter.
func benchInput(kind string) []byte {
	var b strings.Builder
	for b.Len() < 32<<10 {
		switch kind {
		case "ascii":
			b.WriteString("2026-01-02T03:04:05Z INFO server: request GET /api/v1/items?page=3 200 12.5ms\n")
		case "utf8":
			b.WriteString("héllo wörld — “quoted” 日本語のテキスト 🎉 ünïcödé\n")
		case "tui":
			b.WriteString("\x1b[12;4H\x1b[38;2;200;120;40m│\x1b[0m \x1b[1mclaude\x1b[22m \x1b[2mthinking…\x1b[0m\x1b[K")
		}
	}
	return []byte(b.String())[:32<<10]
}

func benchFilter(b *testing.B, kind string) {
	in := benchInput(kind)
	f, _ := New(io.Discard, Options{})
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.Write(in)
	}
}

func BenchmarkFilterASCII(b *testing.B) { benchFilter(b, "ascii") }
func BenchmarkFilterUTF8(b *testing.B)  { benchFilter(b, "utf8") }
func BenchmarkFilterTUI(b *testing.B)   { benchFilter(b, "tui") }

func BenchmarkCopy(b *testing.B) {
	in := benchInput("ascii")
	var dst bytes.Buffer
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		dst.Reset()
		dst.Write(in)
	}
}
