package agentcfg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The fast path (documents parsed only as far as the protected keys need,
// the snapshot parsed once) against the reference (ref_test.go, the parser
// and Merge as they were): the same verdict, keys, bytes and flags for
// every file of the table, whatever the agent writes and whatever the host
// had.

var diffSeeds = []string{
	`{}`, ``, `[]`, `{"a": 1}`, "\xef\xbb\xbf{\"hooks\": {\"Stop\": 1}}",
	`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}, "model": "a"}`,
	`{"hooks": 1, "hooks": 2}`, `{"hooks": 2, "hooks": {}}`, `{"\u0068ooks": {"x": 1}}`, `{"ho\u006fks": 1, "hooks": 1}`,
	`{"__proto__": {"hooks": 1}}`, `{"a": {"__proto__": 1}}`, `{"a": [{"b": 1, "b": 2}]}`,
	"{\n  // comment\n  \"hooks\": {\"Stop\": 1,},\n  /* x */ \"env\": {\"A\": \"b\"},\n}",
	`{"env": {"NODE_OPTIONS": "--require /tmp/x"}}`, `{"env": {}}`, `{"env": null, "permissions": false}`,
	`{"mcpServers": {"x": {"command": "evil"}}, "projects": {"/w": {"hasTrustDialogAccepted": true, "mcpServers": {}}, "/o": {"hasTrustDialogAccepted": true, "allowedTools": ["Bash"]}}}`,
	`{"projects": {"/w": {"history": [{"display": "a\nb", "pastedContents": {}}], "mcpServers": {"e": {"command": "x"}}}}}`,
	`{"projects": {"/w": 1, "/o": [1, {"mcpServers": 2}]}, "projects": {}}`, `{"projects": [], "mcpServers": "x"}`,
	`{"security": {"auth": {"selectedType": "x"}, "folderTrust": {"enabled": false}}}`, `{"security": {"auth": 1}}`,
	`{"/w": "TRUST_FOLDER", "/o": "TRUST_FOLDER"}`, `{"/w": "TRUST_PARENT"}`, `{"/w": "TRUST_FOLDER", "/w": "DO_NOT_TRUST"}`,
	`{"trustedFolders": ["/w"]}`, `{"trustedFolders": ["/o", 1.50, "/w", "/"], "a": 1}`, `{"trustedFolders": ["/o", "/w"]}`, `{"trustedFolders": "/w"}`,
	`{"a": 1e5, "b": -0.5E-3, "c": 01}`, `{"a": 1.}`, `{"a": "\u12"}`, `{"a": "\x"}`, "{\"a\": \"\t\"}", `{"a": "\ud800"}`,
	"{\"a\": \"\xff\xfe\", \"\xff\": 1, \"\xfe\": 2}", `{"a": tru}`, `{"a": [1, 2,]}`, `{"a": /* open`, `{"a": 1} x`,
	`{"a": "unterminated`, `{"a" 1}`, `{,}`, `{"a": 1,, "b": 2}`, `{"hooks": {"Stop": [1]}, "x": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	`{"x": ` + strings.Repeat(`{"a":`, 258) + `1` + strings.Repeat(`}`, 258) + `}`,
	`{"model": "` + strings.Repeat("long string ", 2000) + `", "hooks": {}}`,
	`{"k": [` + strings.Repeat(`{"a": 1, "b": 2},`, 40) + `{"c": 3}], "big": {` + bigObject(40, "") + `}}`,
	`{"big": {` + bigObject(40, `"k7": 0`) + `}}`,
}

func bigObject(n int, extra string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"k%d": %d`, i, i)
	}
	if extra != "" {
		b.WriteString(", " + extra)
	}
	return b.String()
}

func sameResult(t *testing.T, what string, got, want Result) {
	t.Helper()
	if got.Changed() != want.Changed() || got.Whole != want.Whole || got.Remove != want.Remove ||
		got.Unreadable != want.Unreadable || !reflect.DeepEqual(got.Keys, want.Keys) || !bytes.Equal(got.Out, want.Out) {
		t.Fatalf("%s:\nfast      %+v\nreference %+v\nfast out:\n%s\nreference out:\n%s", what, got, want, got.Out, want.Out)
	}
}

// diffCheck merges every (snap, cur) pair the fuzzer gives, in both roles,
// for every JSON file of the table, both ways.
func diffCheck(t *testing.T, snap, cur []byte, snapExists bool) {
	for _, ws := range []string{"/w", ""} {
		ctx := Context{Workspace: ws}
		for _, f := range Files {
			if f.Format != JSON {
				continue
			}
			s := Version{Exists: snapExists, Data: snap}
			for _, c := range []Version{{Exists: true, Data: cur}, {}} {
				what := fmt.Sprintf("%s %s ws=%q snap=%q cur=%q", f.Agent, f.Path, ws, snap, c.Data)
				sameResult(t, what, Merge(f, ctx, s, c), refMerge(f, ctx, s, c))
				m := newMerger(f, ctx, s)
				sameResult(t, what+" (merger, twice)", m.merge(c), refMerge(f, ctx, s, c))
				sameResult(t, what+" (merger, again)", m.merge(c), refMerge(f, ctx, s, c))
			}
		}
	}
	// The parser alone: the same verdict and error, and where the whole
	// parse is asked for, the same tree and oddities.
	for _, data := range [][]byte{snap, cur} {
		rd, rerr := refParseJSON(data)
		d, err := parseJSON(data)
		if fmt.Sprint(err) != fmt.Sprint(rerr) {
			t.Fatalf("%q: error %v, reference %v", data, err, rerr)
		}
		if err == nil && (!reflect.DeepEqual(d.root.decode(), rd.root.decode()) || !reflect.DeepEqual(d.oddities(), refOddities(rd))) {
			t.Fatalf("%q: reads differently from the reference", data)
		}
		for _, f := range Files {
			pd, perr := parseJSONFor(data, trieFor(f, Context{Workspace: "/w"}))
			if fmt.Sprint(perr) != fmt.Sprint(rerr) {
				t.Fatalf("%q: pruned error %v, reference %v", data, perr, rerr)
			}
			if perr == nil && !reflect.DeepEqual(pd.oddities(), refOddities(rd)) {
				t.Fatalf("%q: pruned oddities %v, reference %v", data, pd.oddities(), refOddities(rd))
			}
		}
	}
}

func TestMergeDifferentialSeeds(t *testing.T) {
	// Each seed against itself and a few ordinary ones, both ways.
	for _, s := range diffSeeds {
		for _, c := range append([]string{s}, diffSeeds[:6]...) {
			diffCheck(t, []byte(s), []byte(c), true)
			diffCheck(t, []byte(c), []byte(s), true)
		}
		diffCheck(t, nil, []byte(s), false)
	}
}

// FuzzMergeDifferential: the fast path against the reference.
func FuzzMergeDifferential(f *testing.F) {
	for i, s := range diffSeeds {
		f.Add([]byte(diffSeeds[(i*7+3)%len(diffSeeds)]), []byte(s), true)
		f.Add([]byte(s), []byte(diffSeeds[0]), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, snap, cur []byte, snapExists bool) {
		diffCheck(t, snap, cur, snapExists)
	})
}

// plain8 against the byte loop it stands for, on every byte value in every
// position and on random words.
func TestPlain8(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		if got := plain8(binary.LittleEndian.Uint64(b)); got != naive(b) {
			t.Fatalf("plain8(%q) = %v", b, got)
		}
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			check(b)
			b = []byte{0xff, 0x80, 0x21, 0x5d, 0x23, 0x7f, 0xfe, 0x20}
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1_000_000; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		check(b[:])
	}
}
