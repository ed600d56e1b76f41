package pastwrite

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatParse(t *testing.T) {
	trees := []Tree{{"/data/x", 2049, 12}, {"/home/u/proj one", 1, 2}, {"/odd/\n\x01\xff", 3, 4}}
	got, err := Parse(Format(trees))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(trees) {
		t.Fatalf("%v", got)
	}
	for i := range got {
		if got[i] != trees[i] {
			t.Errorf("%d: %v, want %v", i, got[i], trees[i])
		}
	}
	if got, err := Parse([]byte(Header + "\n")); err != nil || len(got) != 0 {
		t.Errorf("empty record: %v %v", got, err)
	}
}

func TestParseRefuses(t *testing.T) {
	h := Header + "\n"
	long := "/" + strings.Repeat("a", maxPath)
	for name, in := range map[string]string{
		"empty":           "",
		"other header":    "jail written trees v2\n",
		"no header end":   Header,
		"no line end":     h + `1 2 "/a"`,
		"two fields":      h + `1 "/a"` + "\n",
		"relative":        h + `1 2 "a"` + "\n",
		"unclean":         h + `1 2 "/a/../b"` + "\n",
		"trailing slash":  h + `1 2 "/a/"` + "\n",
		"root":            h + `1 2 "/"` + "\n",
		"unquoted":        h + `1 2 /a` + "\n",
		"backquoted":      h + "1 2 `/a`\n",
		"other escape":    h + `1 2 "/\u0061"` + "\n",
		"NUL":             h + `1 2 "/a\x00"` + "\n",
		"leading zero":    h + `01 2 "/a"` + "\n",
		"sign":            h + `+1 2 "/a"` + "\n",
		"negative":        h + `-1 2 "/a"` + "\n",
		"overflow":        h + `18446744073709551616 2 "/a"` + "\n",
		"two spaces":      h + `1  2 "/a"` + "\n",
		"trailing text":   h + `1 2 "/a" x` + "\n",
		"CR":              h + `1 2 "/a"` + "\r\n",
		"duplicate":       h + `1 2 "/a"` + "\n" + `3 4 "/a"` + "\n",
		"blank line":      h + "\n",
		"long path":       h + `1 2 "` + long + `"` + "\n",
		"larger than max": h + strings.Repeat(`1 2 "/a"`+"\n", MaxSize/8),
		"more than max":   string(Format(manyTrees(MaxTrees + 1))),
	} {
		if got, err := Parse([]byte(in)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v %v, want ErrCorrupt", name, got, err)
		}
	}
}

func manyTrees(n int) []Tree {
	out := make([]Tree, n)
	for i := range out {
		out[i] = Tree{Path: "/t/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + itoa(i), Dev: 1, Ino: uint64(i + 1)}
	}
	return out
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// FuzzParse: whatever Parse accepts, Format writes back byte for byte
// (one form only: no second way to write a record), and every tree is
// valid.
func FuzzParse(f *testing.F) {
	f.Add(Format([]Tree{{"/data/x", 2049, 12}, {"/a b/\"c\"", 0, 1}}))
	f.Add([]byte(Header + "\n"))
	f.Add([]byte(Header + "\n1 2 \"/a\\x00\"\n"))
	f.Add([]byte(Header + "\n01 2 \"/a\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		trees, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		if !bytes.Equal(Format(trees), data) {
			t.Fatalf("accepted %q, formats as %q", data, Format(trees))
		}
		for _, tr := range trees {
			if err := validPath(tr.Path); err != nil {
				t.Fatalf("accepted %q: %v", tr.Path, err)
			}
		}
	})
}

func TestClean(t *testing.T) {
	for _, p := range []string{"", "/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "a", "./a", "/a/b.", "/a/.b", "/a/..b", "/a/b/..", "/a/b/."} {
		if got, want := clean(p), filepath.IsAbs(p) && filepath.Clean(p) == p; got != want {
			t.Errorf("clean(%q) = %v, want %v", p, got, want)
		}
	}
}
