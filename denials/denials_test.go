package denials

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("record does not end with a newline: %q", b)
	}
	return out
}

// TestFormat: the documented line shapes, one line per entry, a newline in
// a field stays inside its line.
func TestFormat(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, 0)
	at := time.Date(2026, 11, 30, 14, 2, 11, 123e6, time.FixedZone("x", 3600))
	w.Add(Entry{Time: at, Kind: KindNet, Target: "registry.example:443", Reason: "not in allowlist", Allow: "--allow-domain registry.example"})
	w.Add(Entry{Time: at, Kind: KindExec, Target: "/usr/bin/rm", Argv: []string{"rm", "-rf", "/\nfake line"}, Reason: "guard rail default:rm-recursive-root"})
	want := `{"time":"2026-11-30T13:02:11.123Z","kind":"net","target":"registry.example:443","reason":"not in allowlist","allow":"--allow-domain registry.example"}
{"time":"2026-11-30T13:02:11.123Z","kind":"exec","target":"/usr/bin/rm","argv":["rm","-rf","/\nfake line"],"reason":"guard rail default:rm-recursive-root"}
`
	if b.String() != want {
		t.Errorf("record:\n%s\nwant:\n%s", b.String(), want)
	}
	if l := lines(t, b.Bytes()); len(l) != 2 || l[1]["argv"].([]any)[2] != "/\nfake line" {
		t.Errorf("parsed %v", l)
	}
}

// TestBudget: the record never grows past its budget; one "truncated" line
// says so; the rest is counted.
func TestBudget(t *testing.T) {
	var b bytes.Buffer
	const budget = 4096
	w := NewWriter(&b, budget)
	for i := 0; i < 500; i++ {
		if err := w.Add(Entry{Kind: KindNet, Target: fmt.Sprintf("n%d.example:443", i), Reason: strings.Repeat("r", 100)}); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() > budget {
		t.Errorf("record is %d bytes, budget %d", b.Len(), budget)
	}
	l := lines(t, b.Bytes())
	last := l[len(l)-1]
	if last["kind"] != KindTruncated || strings.Count(b.String(), KindTruncated) != 1 {
		t.Errorf("last line %v; want exactly one truncated line at the end", last)
	}
	if w.Dropped()+int64(len(l)-1) != 500 {
		t.Errorf("dropped %d + written %d != 500", w.Dropped(), len(l)-1)
	}
}

// TestBounds: one entry cannot take the budget: fields and argv are clipped.
func TestBounds(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, 0)
	argv := make([]string, 1000)
	for i := range argv {
		argv[i] = strings.Repeat("a", 5000)
	}
	w.Add(Entry{Kind: KindExec, Target: strings.Repeat("/x", 10000), Argv: argv, Reason: "guard rail"})
	if b.Len() > 40<<10 {
		t.Errorf("one entry took %d bytes", b.Len())
	}
	l := lines(t, b.Bytes())
	if n := len(l[0]["argv"].([]any)); n != 33 {
		t.Errorf("argv kept %d elements, want 32 and a count", n)
	}
}

// TestConcurrent: lines from many goroutines never interleave.
func TestConcurrent(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, 0)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				w.Add(Entry{Kind: KindNet, Target: fmt.Sprintf("g%d-%d.example:80", i, j), Reason: "not in allowlist"})
			}
		}(i)
	}
	wg.Wait()
	if n := len(lines(t, b.Bytes())); n != 1000 {
		t.Errorf("%d lines, want 1000", n)
	}
}

// TestNil: a nil Writer (no record in this sandbox) accepts and drops.
func TestNil(t *testing.T) {
	var w *Writer
	if err := w.Add(Entry{Kind: KindNet}); err != nil || w.Dropped() != 0 {
		t.Errorf("nil writer: %v", err)
	}
}
