package sandbox

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/policy"
)

// A policy file shown under another name by a mount of its file system (a
// bind of the project's directory: the user runs in the view, names the
// file by its own path) lies in the writable tree under that name: the
// view is made read-only too. Seen failing before the views were looked at
// (and on main's binary a493adb by hand, as root: `mount --bind src view`,
// `cd view; jail --settings src/srt.json` and the agent rewrote
// view/srt.json, that is src/srt.json).
func TestPolicyFileRulesViews(t *testing.T) {
	d := t.TempDir()
	src, view := filepath.Join(d, "src"), filepath.Join(d, "view")
	for _, p := range []string{src, view} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		// The view's name must exist as the bind would show it.
		if err := os.WriteFile(filepath.Join(p, "srt.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mounts := []fsrules.Mount{
		{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"},
		{Point: view, FSType: "ext4", Dev: "8:1", Root: src},
	}
	p := &policy.Policy{PolicyFiles: []policy.PolicyFile{{Path: filepath.Join(src, "srt.json"), From: "--settings"}}}
	roots := []agentcfg.Root{{Path: view, Dir: true}}
	masks, _, notes, _, _, _ := policyFileRules(p, nil, roots, nil, nil, nil, mounts, false)
	if len(masks) != 1 || masks[0].Path != filepath.Join(view, "srt.json") || masks[0].Kind != fsrules.ReadOnly ||
		!strings.Contains(masks[0].Rule, "another view (a mount) of "+filepath.Join(src, "srt.json")) {
		t.Fatalf("masks %+v", masks)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], filepath.Join(view, "srt.json")+" (--settings)") {
		t.Fatalf("notes %q", notes)
	}
	// Without the mount there is no other name: nothing writable to keep.
	if masks, _, _, _, _, _ := policyFileRules(p, nil, roots, nil, nil, nil, mounts[:1], false); len(masks) != 0 {
		t.Fatalf("no view, masks %+v", masks)
	}
}

// TestPolicyFileRulesSaidCapped: the "policy files:" line of a start
// keeping many files (earlier runs' names, up to 256) names their number
// and the first few, not every one (session 19: one path per file, each
// start). Seen failing on main's code (all 20 named).
func TestPolicyFileRulesSaidCapped(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var earlier []policy.PolicyFile
	for i := 0; i < 20; i++ {
		path := filepath.Join(ws, fmt.Sprintf("srt-%02d.json", i))
		if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		earlier = append(earlier, policy.PolicyFile{Path: path, From: "--settings in an earlier run"})
	}
	roots := []agentcfg.Root{{Path: ws, Dir: true}}
	mounts := []fsrules.Mount{{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"}}
	masks, _, notes, _, _, _ := policyFileRules(&policy.Policy{}, earlier, roots, nil, nil, nil, mounts, false)
	if len(masks) != len(earlier) {
		t.Fatalf("%d masks, want %d: %+v", len(masks), len(earlier), masks)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "20 files: "+earlier[0].Path) || strings.Contains(notes[0], earlier[maxSaidPolicyFiles].Path) ||
		!strings.Contains(notes[0], fmt.Sprintf("and %d more", len(earlier)-maxSaidPolicyFiles)) {
		t.Errorf("notes %q, want the number and the first %d files", notes, maxSaidPolicyFiles)
	}
}

// TestPolicyFileRulesWays: a policy file named through a link that passes
// a directory of the writable tree and leaves it (srt.json ->
// b/../real/srt.json) has that directory among the ways to pin; a link
// straight at its target has none (review19c).
func TestPolicyFileRulesWays(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"b", "real"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "real", "srt.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"left.json": "b/../real/srt.json", "straight.json": "real/srt.json"} {
		if err := os.Symlink(to, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	roots := []agentcfg.Root{{Path: ws, Dir: true}}
	mounts := []fsrules.Mount{{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"}}
	for _, c := range []struct {
		name string
		want []wayPin
	}{
		{"left.json", []wayPin{{Dir: filepath.Join(ws, "b"), Of: filepath.Join(ws, "left.json")}}},
		{"straight.json", nil},
	} {
		p := &policy.Policy{PolicyFiles: []policy.PolicyFile{{Path: filepath.Join(ws, c.name), From: "--settings"}}}
		_, _, _, _, ways, err := policyFileRules(p, nil, roots, nil, nil, nil, mounts, false)
		if err != nil || !slices.Equal(ways, c.want) {
			t.Errorf("%s: ways %v (%v), want %v", c.name, ways, err, c.want)
		}
	}
}

// namedTree makes workspaces and an outside tree joined by links (out of a
// workspace, back into another, up, an absolute one, a dangling one and a
// loop), with a settings file in each directory. A name is something else
// in each directory (l: a link, a directory, missing; srt.json: a file, a
// directory; d/dangling: a link, a directory), so an answer taken from
// another directory's name shows.
func namedTree(t testing.TB) string {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ws1/d", "ws2/d/srt.json", "ws2/d/dangling", "ws2/l", "out/up"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"ws1", "ws2", "out", "ws1/d", "ws2/d/srt.json", "ws2/l", "out/up"} {
		if err := os.WriteFile(filepath.Join(root, d, "srt.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for l, target := range map[string]string{
		"ws1/l": "../out", "out/d": "../ws2", "out/back": "../ws2/d", "ws1/back": root + "/out",
		"ws2/up": "..", "out/abs": root + "/ws1", "ws1/d/dangling": "nowhere", "out/loop": "loop",
		"ws2/s": "d/srt.json", "out/s": "../ws1/srt.json", "out/up/l": "../../ws2/l",
	} {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var namedNames = []string{"ws1", "ws2", "out", "d", "l", "back", "up", "abs", "dangling", "loop", "s", "..", ".", "x", "srt.json"}

// namedRecord spells paths under root from data: a byte a name, 0xff ends
// a path (each ends in srt.json unless its last name is s).
func namedRecord(root string, data []byte) []string {
	var out []string
	for _, part := range strings.Split(string(data), "\xff") {
		var b strings.Builder
		b.WriteString(root)
		for _, c := range []byte(part) {
			b.WriteString("/" + namedNames[int(c)%len(namedNames)])
		}
		p := b.String()
		if !strings.HasSuffix(p, "/s") {
			p += "/srt.json"
		}
		out = append(out, p)
	}
	return out
}

// namedAnswers are policyNamedSince's, policyNamedLive's and
// policyFileRules' answers on the record paths, with r's lookups (nil:
// afresh, as main's code), under each choice of writable trees (and live
// runs having them, degraded or not, started before the names or after).
func namedAnswers(root string, paths []string, r *hostpath.Resolver) []string {
	var out []string
	rec := policyNamedRecord{}
	var files []policy.PolicyFile
	first := map[string]time.Time{}
	t0 := time.Unix(1700000000, 0)
	for i, p := range paths {
		rec[p] = namedPolicy{First: t0.Add(time.Duration(i) * time.Second).UnixNano(), From: "--settings"}
		files = append(files, policy.PolicyFile{Path: p, From: "--settings"})
		first[p] = time.Unix(0, rec[p].First)
	}
	trees := [][]string{
		{root + "/ws1"}, {root + "/ws2"}, {root + "/ws2/d"}, {root + "/out"},
		{root + "/ws1", root + "/ws2/d"}, {root + "/ws1/d", root + "/out/d"},
	}
	for _, w := range trees {
		err := policyNamedSinceBy(r, rec, map[string]bool{}, w)
		out = append(out, fmt.Sprint("since ", w, ": ", err))
		for _, degraded := range []bool{false, true} {
			for _, started := range []time.Time{t0.Add(-time.Second), t0.Add(time.Duration(len(paths)/2) * time.Second)} {
				live := []Entry{{ID: "run", Started: started, Writable: w, Degraded: degraded}}
				err := policyNamedLiveBy(r, files[:len(files)/2], files, first, live)
				out = append(out, fmt.Sprint("live ", w, degraded, started.Unix(), ": ", err))
			}
			var roots []agentcfg.Root
			for _, d := range w {
				roots = append(roots, agentcfg.Root{Path: d, Dir: true})
			}
			mounts := []fsrules.Mount{{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"}}
			own := &policy.Policy{PolicyFiles: files[:len(files)/2]}
			masks, targets, notes, exposed, ways, err := policyFileRulesBy(r, own, files[len(files)/2:], roots, nil, nil, nil, mounts, degraded)
			out = append(out, fmt.Sprintf("rules %v %v: %+v %+v %q %q %+v %v", w, degraded, masks, targets, notes, exposed, ways, err))
		}
	}
	return out
}

// sameAnswers fails when one Resolver for the whole pass answers
// otherwise than every path resolved afresh; it returns how many answers
// were refusals or kept something (so a test can see both kinds met).
func sameAnswers(t testing.TB, root string, paths []string) (refused int) {
	t.Helper()
	want := namedAnswers(root, paths, nil)
	r := hostpath.NewResolver()
	defer r.Close()
	got := namedAnswers(root, paths, r)
	if !slices.Equal(got, want) {
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("paths %q:\nwith a Resolver: %s\nafresh:          %s", paths, got[i], want[i])
			}
		}
	}
	for _, a := range want {
		if !strings.HasSuffix(a, ": <nil>") && !strings.Contains(a, ": [] [] [] [] [] <nil>") {
			refused++
		}
	}
	return refused
}

// The record's checks with one Resolver for the pass (namedcost: the
// start's cost) refuse exactly what they refused resolving each path
// afresh, and policyFileRules keeps exactly what it kept: generated
// records of paths through links out of and back into workspaces, "..",
// after a link too, missing parts, dangling links and a loop. Checked to
// fail when the Resolver keys its lookups by name alone.
func TestPolicyNamedResolverSame(t *testing.T) {
	root := namedTree(t)
	// A full record (256 paths) of every way two or three names go, in
	// one pass, in order and reversed; then smaller generated ones.
	var full []string
	for a := range namedNames {
		for b := range namedNames {
			full = append(full, namedRecord(root, []byte{byte(a), byte(b)})...)
			if b < 3 || b == 11 {
				full = append(full, namedRecord(root, []byte{byte(a), byte(b), 3, 8})...)
			}
		}
	}
	full = full[:maxPolicyNamed]
	refused, total := sameAnswers(t, root, full), 2
	slices.Reverse(full)
	refused += sameAnswers(t, root, full)
	rnd := rand.New(rand.NewSource(20))
	for range 60 {
		data := make([]byte, 1+rnd.Intn(24))
		for i := range data {
			data[i] = byte(rnd.Intn(len(namedNames)))
			if rnd.Intn(5) == 0 {
				data[i] = 0xff
			}
		}
		refused += sameAnswers(t, root, namedRecord(root, data))
		total++
	}
	t.Logf("%d answers refused or kept something, of %d records", refused, total)
	if refused == 0 {
		t.Fatalf("no record refused or kept anything in %d: the test compares nothing", total)
	}
}

// Fuzzed records: see TestPolicyNamedResolverSame.
func FuzzPolicyNamedResolverSame(f *testing.F) {
	root := namedTree(f)
	for _, seed := range []string{"\x00\x0e", "\x00\x04\x05\xff\x01\x06\x0b\x00", "\x02\x07\x03\xff\x00\x03\x0b\x0b\x01", "\x01\x0a", "\x01\x0c\xff\x00\x08\x0b"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 48 {
			return
		}
		sameAnswers(t, root, namedRecord(root, data))
	})
}
