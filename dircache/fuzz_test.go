package dircache

import (
	"bytes"
	"io/fs"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts is canonical: encoding
// it again gives the same bytes (so no two files mean the same, and
// nothing is read that Encode would not write).
func FuzzParse(f *testing.F) {
	good, _ := Encode("v", map[string]*Record{
		"/ws":   {Key: Key{Dev: 1, Ino: 2, Ctime: 3}, Total: 5, Ents: []Entry{{name: "a"}, {name: "sub", typ: fs.ModeDir}, {name: "l", typ: fs.ModeSymlink}}},
		"/ws/s": {Key: Key{Dev: 1, Ino: 9, Ctime: -1}, Total: 0},
		"/ws/l": {Key: Key{Dev: 1, Ino: 10, Ctime: 7}, Total: 3, Ents: []Entry{{name: "a", typ: fs.ModeSymlink, link: "../x"}, {name: "b", typ: fs.ModeSymlink, link: "/opt/y"}}},
	})
	f.Add(good, "v")
	f.Add(good[:len(good)-1], "v")
	f.Add([]byte(magic), "")
	f.Fuzz(func(t *testing.T, data []byte, view string) {
		recs, err := Parse(data, view)
		if err != nil {
			return
		}
		for d, r := range recs {
			if !validDir(d) || len(r.Ents) > r.Total {
				t.Fatalf("accepted %q %+v", d, r)
			}
			for _, e := range r.Ents {
				if !validName(e.Name()) || e.link != "" && (!validLink(e.link) || e.typ != fs.ModeSymlink) {
					t.Fatalf("accepted name %q", e.Name())
				}
			}
		}
		again, err := Encode(view, recs)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("not canonical: %v", err)
		}
	})
}
