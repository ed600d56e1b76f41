package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostsock"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/statedir"
	"github.com/jail-sandbox/jail/subid"
)

// TestHostSocketMasks: each host socket the mounts leave visible is masked
// at the place its path leads to; vanished, non-socket
// and hidden ones are not, nor one the user named as a read or write path.
func TestHostSocketMasks(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(rel string) string {
		p := filepath.Join(d, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return p
	}
	visible := mk("var/lib/db/db.sock")
	spaced := mk("srv/my dir/a b.sock")
	hidden := mk("run/dbus/bus")
	inMasked := mk("state/run/ctl.sock")
	inBind := mk("run/ws/lsp.sock")  // under the hidden run, but in a bind shown again
	granted := mk("run/docker.sock") // --write /run/docker.sock: the user named it
	// A link from a hidden place to a visible one: the socket was bound as
	// run/link/x.sock, its inode is at var/lib/real/x.sock.
	mk("var/lib/real/x.sock")
	if err := os.Symlink(filepath.Join(d, "var/lib/real"), filepath.Join(d, "run/link")); err != nil {
		t.Fatal(err)
	}
	// The reverse: a visible-looking path that leads into the hidden run.
	if err := os.Symlink(filepath.Join(d, "run"), filepath.Join(d, "varrun")); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(d, "var/lib/db/notasocket")
	os.WriteFile(plain, nil, 0o644)

	list := []string{visible, spaced, hidden, inMasked, inBind, filepath.Join(d, "run/link/x.sock"),
		filepath.Join(d, "varrun/dbus/bus"), granted, plain, filepath.Join(d, "gone.sock"), filepath.Join(d, "gone/x.sock"), visible}
	stubBound(t, list, nil)

	mounts := []ns.Mount{
		{Kind: ns.KindTmpfs, Path: filepath.Join(d, "run"), Dir: true},
		{Kind: ns.KindBind, Path: filepath.Join(d, "run/ws"), Dir: true},
		{Kind: ns.KindBind, Path: granted},
		{Kind: ns.KindMask, Path: filepath.Join(d, "state"), Dir: true},
	}
	var got []string
	masks, _ := hostSocketMasks(mounts, nil)
	for _, m := range masks {
		if m.Kind != ns.KindMask || m.Dir {
			t.Errorf("%s: kind %s dir %v, want a file mask", m.Path, m.Kind, m.Dir)
		}
		got = append(got, m.Path)
	}
	want := []string{visible, spaced, inBind, filepath.Join(d, "var/lib/real/x.sock")}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("masks:\n got %q\nwant %q", got, want)
	}
}

// TestDegradedRulesSkipHostSockets: a plan made before the run fell back to
// degraded mode keeps its host socket masks out of the Landlock cover, which
// would list their directories (other runs' records come and go there:
// TestHostsDegradedForced failed with "stat ...run/X.json: no such file");
// seccomp refuses socket(AF_UNIX) there instead.
func TestDegradedRulesSkipHostSockets(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mounts := []ns.Mount{{Kind: ns.KindMask, Path: filepath.Join(d, "x.sock"), Why: whyHostSocket}}
	r, _, err := degradedRules(mounts, landlock.Rules{}, filepath.Join(d, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(d, "x.sock")
	for _, p := range r.ReadExec {
		if p == sock || strings.HasPrefix(sock, strings.TrimSuffix(p, "/")+"/") {
			return // its tree is read whole: nothing on the way was listed
		}
	}
	t.Errorf("the cover went down to the host socket's mask %s (listing each directory on the way): %q", sock, r.ReadExec)
}

// Adversarial: a host socket whose directory another mount of its file
// system also shows (a host bind of /var/lib/db at /srv/db, or of the
// socket itself) was masked at its listed path only: connect(2) at the
// other place reached the host's server. Seen with main's binary as root
// in a private mount namespace (a listening 0777 socket in a directory
// bound at a second place: "Permission denied" at its path, the server's
// greeting at the other); seen failing here before the views were asked
// for (only the listed path masked).
func TestHostSocketMasksViews(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	listen := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	}
	// The test cannot mount: the aliases are real sockets at the places
	// the fake mount table says show the same files (a mask needs a
	// socket there, as it would find one through the real mount).
	sock := filepath.Join(d, "var/lib/db/db.sock")
	dirAlias := filepath.Join(d, "srv/db/db.sock")        // /var/lib/db bound at /srv/db
	parentAlias := filepath.Join(d, "mnt/lib/db/db.sock") // /var/lib bound at /mnt/lib
	fileAlias := filepath.Join(d, "opt/the.sock")         // the socket itself bound at /opt/the.sock
	hiddenAlias := filepath.Join(d, "run/db/db.sock")     // bound in the hidden /run
	for _, p := range []string{sock, dirAlias, parentAlias, fileAlias, hiddenAlias} {
		listen(p)
	}
	stubBound(t, []string{sock}, nil)
	host := []fsrules.Mount{
		{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"},
		{Point: filepath.Join(d, "srv/db"), FSType: "ext4", Dev: "8:1", Root: filepath.Join(d, "var/lib/db")},
		{Point: filepath.Join(d, "mnt/lib"), FSType: "ext4", Dev: "8:1", Root: filepath.Join(d, "var/lib")},
		{Point: fileAlias, FSType: "ext4", Dev: "8:1", Root: sock},
		{Point: filepath.Join(d, "run/db"), FSType: "ext4", Dev: "8:1", Root: filepath.Join(d, "var/lib/db")},
		{Point: filepath.Join(d, "other"), FSType: "ext4", Dev: "8:2", Root: filepath.Join(d, "var/lib/db")},
	}
	mounts := []ns.Mount{{Kind: ns.KindTmpfs, Path: filepath.Join(d, "run"), Dir: true}}
	var got []string
	masks, _ := hostSocketMasks(mounts, host)
	for _, m := range masks {
		got = append(got, m.Path)
	}
	want := []string{sock, dirAlias, parentAlias, fileAlias}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ATTACK WORKED: masks:\n got %q\nwant %q", got, want)
	}
	// No other mount: only the listed path, as before.
	got = nil
	masks, _ = hostSocketMasks(mounts, host[:1])
	for _, m := range masks {
		got = append(got, m.Path)
	}
	if !slices.Equal(got, []string{sock}) {
		t.Errorf("without views: masks %q, want only %s", got, sock)
	}
}

// TestHostSocketMasksListFails: without the kernel's list (no unix_diag,
// no /proc/net/unix) no socket is masked; on main that went without a word
// (no mask, no note), so a host service on a socket outside /run, /tmp and
// the home was reachable while the user believed host sockets protected.
// The plan now carries a note the start shows.
func TestHostSocketMasksListFails(t *testing.T) {
	stubBound(t, nil, errors.New("sock_diag: no such protocol"))
	masks, note := hostSocketMasks(nil, nil)
	if len(masks) != 0 {
		t.Errorf("masks without a list: %v", masks)
	}
	if !strings.HasPrefix(note, hostSocketsNote) || !strings.Contains(note, "no such protocol") || !shownNote(note) {
		t.Errorf("note %q: want one that names the failure and is shown at start", note)
	}
	boundSockets = func() ([]string, *hostsock.Files, error) { return nil, nil, hostsock.ErrUnsupported }
	if _, note := hostSocketMasks(nil, nil); note != "" {
		t.Errorf("no list on this system by design: note %q", note)
	}
}

// TestHostSocketMasksCapPerOwner: another user's sockets are masked up to
// the cap, the rest left with one shown note naming the uid and the count;
// root's and the user's own are masked however many. On main every socket
// was masked, whoever bound it: a local user binding 114,000 made every
// root start fail (fs.mount-max). Seen failing with the cap check removed
// (main's loop): 8 masks of uid 4242, no note. As root the other user's
// files are really chowned; as a user (no chown) the owner is stubbed.
func TestHostSocketMasksCapPerOwner(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const other, third = 4242, 4243
	oldCap, oldAll := socketCap, socketCapAll
	socketCap, socketCapAll = 3, 4
	t.Cleanup(func() { socketCap, socketCapAll = oldCap, oldAll })
	if os.Getuid() != 0 {
		oldUID := socketUID
		socketUID = func(fi os.FileInfo) uint32 {
			if strings.HasPrefix(fi.Name(), "other") {
				return other
			}
			if strings.HasPrefix(fi.Name(), "third") {
				return third
			}
			return oldUID(fi)
		}
		t.Cleanup(func() { socketUID = oldUID })
	}
	var list []string
	bind := func(name string, owner int) string {
		p := filepath.Join(d, name)
		bindSocketFile(t, p, false)
		if owner >= 0 && os.Getuid() == 0 {
			if err := os.Lchown(p, owner, owner); err != nil {
				t.Fatal(err)
			}
		}
		list = append(list, p)
		return p
	}
	var own, others, thirds []string
	for i := range 8 {
		own = append(own, bind(fmt.Sprintf("own%d.sock", i), -1))
		others = append(others, bind(fmt.Sprintf("other%d.sock", i), other))
	}
	for i := range 2 {
		thirds = append(thirds, bind(fmt.Sprintf("third%d.sock", i), third))
	}
	stubBound(t, list, nil)

	masks, note := hostSocketMasks(nil, nil)
	got := map[string]bool{}
	for _, m := range masks {
		got[m.Path] = true
	}
	for _, p := range own {
		if !got[p] {
			t.Errorf("%s (uid %d's own): not masked; root's and the user's sockets are masked however many", p, os.Getuid())
		}
	}
	count := func(ps []string) (n int) {
		for _, p := range ps {
			if got[p] {
				n++
			}
		}
		return n
	}
	// uid 4242 binds 8, then uid 4243 (a third user) 2: the total (4)
	// masks the owner with fewer first, so that one user binding many
	// under many uids (its subordinate uids) cannot push another user's
	// few out. In the list's order uid 4242 took 3 and left uid 4243 one.
	if n, m := count(others), count(thirds); n != 2 || m != 2 {
		t.Errorf("masked: uid %d's %d (want 2), uid %d's %d (want all 2)", other, n, third, m)
	}
	if want := fmt.Sprintf("6 of other users' sockets are not masked (uid %d: 6)", other); !strings.Contains(note, want) || !shownNote(note) {
		t.Errorf("note %q: want one shown at start with %q", note, want)
	}
	// The plan keeps which masks were another user's socket (review15d):
	// a fall there alone may leave an --end-if-unmasked run going; the
	// user's own are never among them.
	_, theirs, _, _, _ := hostSocketMasksOwned(nil, nil, nil)
	for _, p := range own {
		if theirs[p] {
			t.Errorf("%s (the user's own) recorded as another user's socket", p)
		}
	}
	for _, p := range append(append([]string(nil), others...), thirds...) {
		if theirs[p] != got[p] {
			t.Errorf("%s: recorded as another user's %v, masked %v", p, theirs[p], got[p])
		}
	}
}

// TestHostSocketsLeftNoteBounded: the note names five owners at most (a
// user's subordinate uids can be 65,536) and counts the others.
func TestHostSocketsLeftNoteBounded(t *testing.T) {
	left := map[uint32]int{}
	for u := range uint32(70000) {
		left[100000+u] = 2
	}
	note := leftNote(left, nil)
	if len(note) > 600 || !strings.Contains(note, "140000 of other users'") || !strings.Contains(note, "69995 more uids: 139990") || !strings.Contains(note, "uid 100000: 2") {
		t.Errorf("note (%d bytes): %.600s", len(note), note)
	}
}

// TestHostSocketsCapOthersSubuidFlood: one user with subordinate uids
// (rootless containers: 65,536 from 100000 by default) binds one socket
// under each of 5,000 of them. A system service's sockets (postfix's
// dozens under /var/spool/postfix, owned by a system uid) and a third
// login user's few must still be masked: the flood only competes with
// other subordinate uids. Seen failing before the tiers: fewest-first
// gave the 4,096 one-socket subuids the whole total, and uid 110's 20
// and uid 1003's 2 were left.
func TestHostSocketsCapOthersSubuidFlood(t *testing.T) {
	oldSub := subOwners
	subOwners = func() subid.Ranges { return nil } // no /etc/subuid: each uid its own owner
	t.Cleanup(func() { subOwners = oldSub })
	others := map[uint32][]string{}
	for i := range 5000 {
		u := uint32(100000 + i)
		others[u] = []string{fmt.Sprintf("/srv/flood/%d.sock", u)}
	}
	for i := range 20 {
		others[110] = append(others[110], fmt.Sprintf("/var/spool/postfix/private/s%d", i))
	}
	others[1003] = []string{"/srv/c/a.sock", "/srv/c/b.sock"}
	masked, left := capOthers(others)
	got := map[string]bool{}
	for _, p := range masked {
		got[p] = true
	}
	for _, u := range []uint32{110, 1003} {
		for _, p := range others[u] {
			if !got[p] {
				t.Errorf("uid %d's %s left unmasked by another user's subuid flood", u, p)
			}
		}
		if left[u] != 0 {
			t.Errorf("uid %d: %d left", u, left[u])
		}
	}
	if len(masked) != socketCapAll {
		t.Errorf("masked %d, want the total %d", len(masked), socketCapAll)
	}
}

// TestHostSocketMasksNobodyAlways (socks15): started by root, the agent is
// host uid 65534 (ns.NobodyID), so nobody's sockets are the agent's own on
// the host: capped with other users', those past the cap (a 0700 one no
// other user can connect to) took the agent's connect(2). Started by root
// they are all masked; started by a user they are capped as another
// user's. Seen failing with main's condition (uid != 0 && uid != self): 3
// of nobody's 8 masked as root. The owner and the starter are stubbed, so
// the test runs the same as root and as a user.
func TestHostSocketMasksNobodyAlways(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	oldCap, oldAll := socketCap, socketCapAll
	socketCap, socketCapAll = 3, 4
	oldUID, oldHost := socketUID, hostUID
	socketUID = func(fi os.FileInfo) uint32 { return ns.NobodyID }
	t.Cleanup(func() { socketCap, socketCapAll, socketUID, hostUID = oldCap, oldAll, oldUID, oldHost })
	var list []string
	for i := range 8 {
		p := filepath.Join(d, fmt.Sprintf("nobody%d.sock", i))
		bindSocketFile(t, p, false)
		list = append(list, p)
	}
	stubBound(t, list, nil)
	for _, tc := range []struct {
		starter  int
		want     int
		wantNote bool
	}{{0, 8, false}, {1000, 3, true}} {
		hostUID = func() int { return tc.starter }
		masks, note := hostSocketMasks(nil, nil)
		if len(masks) != tc.want || (note != "") != tc.wantNote {
			t.Errorf("started by uid %d: %d of nobody's 8 sockets masked (want %d), note %q", tc.starter, len(masks), tc.want, note)
		}
	}
}

// TestHostSocketsCapOthersSubuidOwner (socks15): a user's subordinate
// uids (/etc/subuid) are that user's: one user's containers binding one
// socket under each of 5,000 of them took the whole total, and another
// user's containers' few sockets (under that user's range) were left,
// with a third user's. Grouped under their owners, the flood is capped
// at socketCap as one user's, and the others are masked. Seen failing
// before the grouping: uid 1001's two subuid sockets left, 4,096 of the
// flood masked.
func TestHostSocketsCapOthersSubuidOwner(t *testing.T) {
	oldSub := subOwners
	subOwners = func() subid.Ranges {
		return subid.Ranges{{Owner: 1000, Start: 100000, Count: 65536}, {Owner: 1001, Start: 165536, Count: 65536}}
	}
	t.Cleanup(func() { subOwners = oldSub })
	others := map[uint32][]string{}
	for i := range 5000 {
		u := uint32(100000 + i)
		others[u] = []string{fmt.Sprintf("/srv/flood/%d.sock", u)}
	}
	others[1000] = []string{"/srv/a/own.sock"}                                             // the flooder's own uid: same owner
	others[165536] = []string{"/srv/b/c1.sock"}                                            // uid 1001's container
	others[165537] = []string{"/srv/b/c2.sock"}                                            // and another of its uids
	others[300000] = []string{"/srv/x/1.sock", "/srv/x/2.sock"}                            // a uid no range names
	others[110] = []string{"/var/spool/postfix/private/a", "/var/spool/postfix/private/b"} // a daemon
	masked, left := capOthers(others)
	got := map[string]bool{}
	for _, p := range masked {
		got[p] = true
	}
	for _, u := range []uint32{165536, 165537, 300000, 110} {
		for _, p := range others[u] {
			if !got[p] {
				t.Errorf("uid %d's %s left unmasked by another user's container flood", u, p)
			}
		}
	}
	flood := 0
	for u := uint32(100000); u < 105000; u++ {
		if got[others[u][0]] {
			flood++
		}
	}
	if got["/srv/a/own.sock"] {
		flood++
	}
	if flood != socketCap {
		t.Errorf("uid 1000 and its subuids: %d masked, want the one-user cap %d", flood, socketCap)
	}
	total := 0
	for _, n := range left {
		total += n
	}
	if total != 5001-socketCap || len(masked) != socketCap+6 {
		t.Errorf("left %d (want %d), masked %d (want %d)", total, 5001-socketCap, len(masked), socketCap+6)
	}
}

// TestHostSocketLinkedMasks (sockets16): the other names of root's or the
// user's sockets in the walked roots are masked where the sandbox sees
// them (also those of a socket whose listed name it does not see), not in
// a hidden directory nor at a path the user named; a name outside the
// roots is found outward from the socket (sockets18: farMasks), past
// maxFarDirs and in a hidden directory (not walked) said; more names than
// maxLinkedMasks refuse the start.
func TestHostSocketLinkedMasks(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(rel string) string {
		p := filepath.Join(d, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return p
	}
	link := func(from, rel string) string {
		p := filepath.Join(d, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(from, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ws, ro := filepath.Join(d, "ws"), filepath.Join(d, "ro")
	tool := mk("ws/tool.sock")
	agent := mk("ws/.ssh/agent.sock") // its listed name hidden
	far := mk("ws/far.sock")
	plain := mk("ws/plain.sock") // one name: no walk for it
	want := []string{tool, far, plain,
		link(tool, "ws/a/b/deep.sock"), link(tool, "ro/ro.sock"), link(agent, "ws/agent-link.sock")}
	link(tool, "ws/hid/x.sock")                  // in a hidden directory: needs no mask, not walked (said)
	granted := link(tool, "ws/given.sock")       // --write ws/given.sock: named
	elsewhere := link(far, "elsewhere/far.sock") // outside the roots: found outward (farMasks)
	want = append(want, elsewhere)
	stubBound(t, []string{tool, agent, far, plain}, nil)
	mounts := []ns.Mount{
		{Kind: ns.KindBind, Path: ws, Dir: true},
		{Kind: ns.KindROBind, Path: ro, Dir: true},
		{Kind: ns.KindMask, Path: filepath.Join(ws, ".ssh"), Dir: true},
		{Kind: ns.KindTmpfs, Path: filepath.Join(ws, "hid"), Dir: true},
		{Kind: ns.KindBind, Path: granted},
	}
	roots := []string{ws, ro}
	masks, _, note, _, err := hostSocketMasksOwned(mounts, nil, roots)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range masks {
		got = append(got, m.Path)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("masks:\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(note, tool+" has another name (a hard link) not masked") || strings.Contains(note, agent) || strings.Contains(note, far) {
		t.Errorf("note: want %s said (alone), got %q", tool, note)
	}
	// Past farMasks's bound, the name outside the roots is said, not
	// masked.
	oldFar := maxFarDirs
	maxFarDirs = 0
	masks, _, note, _, err = hostSocketMasksOwned(mounts, nil, roots)
	maxFarDirs = oldFar
	if err != nil || slices.ContainsFunc(masks, func(m ns.Mount) bool { return m.Path == elsewhere }) {
		t.Errorf("past the bound: err %v, %s masked", err, elsewhere)
	}
	if !strings.Contains(note, far+", "+tool+" each have another name (a hard link) not masked") {
		t.Errorf("past the bound: want %s and %s said, got %q", far, tool, note)
	}
	oldMax := maxLinkedMasks
	maxLinkedMasks = 2
	t.Cleanup(func() { maxLinkedMasks = oldMax })
	if _, _, _, _, err := hostSocketMasksOwned(mounts, nil, roots); err == nil || !strings.Contains(err.Error(), "not starting") {
		t.Errorf("more names than maxLinkedMasks: err %v, want a refusal", err)
	}
}

// TestHostSocketsOwnSubuidMasked (sockets16): the sockets of the user's
// own subordinate uids (its rootless containers') are the user's: all
// masked, however many, not capped as another user's; another user's
// subordinate uids' stay capped. A fall of such a mask ends an
// --end-if-unmasked run (foreignSocket: not foreign). Seen failing on
// main's code: 1,024 of the user's 1,500 container sockets masked, 476
// left.
func TestHostSocketsOwnSubuidMasked(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const self, other = 1000, 1001
	oldSub, oldUID, oldSock := subOwners, hostUID, socketUID
	subOwners = func() subid.Ranges {
		return subid.Ranges{{Owner: self, Start: 100000, Count: 65536}, {Owner: other, Start: 165536, Count: 65536}}
	}
	hostUID = func() int { return self }
	owner := map[string]uint32{}
	socketUID = func(fi os.FileInfo) uint32 { return owner[fi.Name()] }
	t.Cleanup(func() { subOwners, hostUID, socketUID = oldSub, oldUID, oldSock })
	var list []string
	mk := func(name string, uid uint32) string {
		p := filepath.Join(d, name)
		bindSocketFile(t, p, true)
		owner[name] = uid
		list = append(list, p)
		return p
	}
	const mine, theirs = 1500, 1100
	for i := range mine {
		mk(fmt.Sprintf("c%d.sock", i), uint32(100000+i%50))
	}
	for i := range theirs {
		mk(fmt.Sprintf("o%d.sock", i), uint32(165536+i%50))
	}
	stubBound(t, list, nil)
	masks, note := hostSocketMasks(nil, nil)
	got := map[string]bool{}
	for _, m := range masks {
		got[m.Path] = true
	}
	n := 0
	for i := range mine {
		if got[filepath.Join(d, fmt.Sprintf("c%d.sock", i))] {
			n++
		}
	}
	if n != mine {
		t.Errorf("the user's own containers' sockets: %d of %d masked, want all", n, mine)
	}
	if want := fmt.Sprintf("%d of other users' sockets are not masked", theirs-socketCap); len(masks) != mine+socketCap || !strings.Contains(note, want) {
		t.Errorf("another user's containers: %d masks (want %d), note %q (want %q)", len(masks), mine+socketCap, note, want)
	}
	if who, foreign := foreignSocket(list[0]); foreign {
		t.Errorf("a fall at the user's container's socket (%s) would not end an --end-if-unmasked run", who)
	}
	if _, foreign := foreignSocket(list[mine]); !foreign {
		t.Errorf("another user's container's socket counted as the user's own")
	}
}

// TestHostSocketsLeftNoteNames (sockets16): the not-masked line names each
// uid's user from the passwd file (no cgo), and a subordinate uid's range
// owner; a uid without a plain login name stays a bare uid. Seen failing
// on main's code: "uid 1001: 6" only.
func TestHostSocketsLeftNoteNames(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "passwd")
	text := "root:x:0:0:root:/root:/bin/bash\n" +
		"bob:x:1001:1001::/home/bob:/bin/bash\n" +
		"evil\x1b[2J:x:1002:1002::/:/bin/sh\n" + // a terminal escape: not a name
		"short:x:1003\n" + // too few fields
		"bob2:x:1001:1001::/:/bin/sh\n" + // the first line of a uid wins
		"carol:x:1004:1004::/:/bin/sh"
	if err := os.WriteFile(pw, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	old := passwdPath
	passwdPath = pw
	t.Cleanup(func() { passwdPath = old })
	ranges := subid.Ranges{{Owner: 1004, Start: 200000, Count: 65536}, {Owner: 7777, Start: 300000, Count: 10}}
	note := leftNote(map[uint32]int{1001: 6, 1002: 2, 1003: 1, 200005: 3, 300001: 4}, ranges)
	for _, want := range []string{"uid 1001 (bob): 6", "uid 1002: 2", "uid 1003: 1", "uid 200005 (carol's subordinate uid): 3", "uid 300001 (uid 7777's subordinate uid): 4"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "\x1b") {
		t.Errorf("note carries a terminal escape from the passwd file: %q", note)
	}
	// A FIFO at the path: not read (a start must not hang on it).
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := passwdNames(fifo, []uint32{0}); len(n) != 0 {
		t.Errorf("names from a FIFO: %v", n)
	}
}

// FuzzPasswdNames: any text gives names that are plain login names, of
// uids asked for, and never panics.
func FuzzPasswdNames(f *testing.F) {
	f.Add([]byte("root:x:0:0:root:/root:/bin/bash\nbob:x:1001:1001::/home/bob:/bin/sh\n"), uint32(1001))
	f.Add([]byte("a:b:4294967295:\n::0:\nx:x:99999999999:0\n"), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, uid uint32) {
		for u, n := range parsePasswdNames(data, []uint32{uid, 0}) {
			if u != uid && u != 0 || !loginName([]byte(n)) {
				t.Fatalf("uid %d name %q", u, n)
			}
		}
	})
}

// TestHostSocketMovedMasks (sockets16): a socket the kernel lists in a
// walked root that is not at its name any more (renamed, or its directory)
// masks every socket file of the user's in the roots; a listed name gone
// outside the roots walks nothing.
func TestHostSocketMovedMasks(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(d, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(ws, "sub", "moved.sock")
	bindSocketFile(t, moved, true)
	old := boundSockets
	t.Cleanup(func() { boundSockets = old })
	mounts := []ns.Mount{{Kind: ns.KindBind, Path: ws, Dir: true}}
	for _, tc := range []struct {
		listed string
		want   int
	}{
		{filepath.Join(ws, "tool.sock"), 1},          // renamed
		{filepath.Join(ws, "gone", "x.sock"), 1},     // its directory renamed
		{filepath.Join(d, "elsewhere", "x.sock"), 0}, // not in a root
	} {
		boundSockets = func() ([]string, *hostsock.Files, error) { return []string{tc.listed}, nil, nil }
		masks, _, _, _, err := hostSocketMasksOwned(mounts, nil, []string{ws})
		if err != nil || len(masks) != tc.want || tc.want == 1 && masks[0].Path != moved {
			t.Errorf("listed %s: masks %v, err %v; want %d (%s)", tc.listed, masks, err, tc.want, moved)
		}
	}
}

// TestHostSocketMovedByInode (sockets17): with sock_diag's inodes, a
// socket listed in a walked root that is not at its name masks the bound
// socket's file wherever it is in the roots, and no other socket file of
// the user's: 1,100 dead sockets (an earlier run's agent's) are left
// alone, where masking every one refused the start (more than
// maxLinkedMasks). A dead socket bound at the old name after the rename
// (not the file the kernel lists by it) is masked and the walk still
// finds the live one. A socket listed outside the roots and renamed into
// them is found too. Seen failing on main's linkedMasks (every socket
// file masked, the start refused).
func TestHostSocketMovedByInode(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(d, "ws")
	for _, s := range []string{"sub", "dead"} {
		if err := os.MkdirAll(filepath.Join(ws, s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1100 {
		bindSocketFile(t, filepath.Join(ws, "dead", fmt.Sprint(i)), false)
	}
	listed, moved := filepath.Join(ws, "tool.sock"), filepath.Join(ws, "sub", "moved.sock")
	bindSocketFile(t, listed, true)
	if err := os.Rename(listed, moved); err != nil {
		t.Fatal(err)
	}
	old := boundSockets
	t.Cleanup(func() { boundSockets = old })
	mounts := []ns.Mount{{Kind: ns.KindBind, Path: ws, Dir: true}}
	// A socket listed outside the roots, renamed into them (an earlier
	// run's --write path, not one now).
	far := filepath.Join(d, "far.sock")
	bindSocketFile(t, far, true)
	fromFar := filepath.Join(ws, "sub", "from-far.sock")
	if err := os.Rename(far, fromFar); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []string{"far only", "renamed", "replaced"} {
		replaced := tc == "replaced"
		if replaced {
			bindSocketFile(t, listed, false) // a dead socket at the listed name
		}
		// The kernel's own list, of this test's sockets.
		boundSockets = func() ([]string, *hostsock.Files, error) {
			paths, files, err := hostsock.BoundFiles()
			if files == nil {
				t.Fatalf("sock_diag gave no files: %v", err)
			}
			var mine []string
			for _, p := range paths {
				if strings.HasPrefix(p, ws+"/") && tc != "far only" || p == far {
					mine = append(mine, p)
				}
			}
			return mine, files, err
		}
		masks, _, _, _, err := hostSocketMasksOwned(mounts, nil, []string{ws})
		var got []string
		for _, m := range masks {
			got = append(got, m.Path)
		}
		slices.Sort(got)
		want := []string{fromFar, moved}
		if replaced {
			want = []string{fromFar, moved, listed}
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: masks %q, err %v; want %q", tc, got, err, want)
		}
	}
}

// stubBound makes boundSockets answer list and err for the test, with no
// file identities (the /proc/net/unix listing's answer).
func stubBound(t *testing.T, list []string, err error) {
	t.Helper()
	old := boundSockets
	boundSockets = func() ([]string, *hostsock.Files, error) { return list, nil, err }
	t.Cleanup(func() { boundSockets = old })
}

// bindSocketFile binds a stream Unix socket at p (its directory made), not
// listening: the kernel lists it while it stays open. live keeps it bound
// until the test ends; otherwise it is closed at once (a dead socket file).
func bindSocketFile(t *testing.T, p string, live bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: p}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if !live {
		unix.Close(fd)
		return
	}
	t.Cleanup(func() { unix.Close(fd) })
}

// TestHostSocketMovedFarMasks (sockets18): a live socket whose directory,
// or itself, was renamed outside the walked roots is found outward from
// where it was bound (farMasks) and masked; past maxFarDirs it is said; a
// name whose place is hidden in this run, or of which nothing but "/" is
// left (bound in another mount namespace), is not looked for.
func TestHostSocketMovedFarMasks(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bind := func(p string) { t.Helper(); bindSocketFile(t, p, true) }
	mv := func(from, to string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(d, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	bind(filepath.Join(d, "old", "d1", "s.sock"))
	mv(filepath.Join(d, "old", "d1"), filepath.Join(d, "old", "d2"))
	bind(filepath.Join(d, "old", "t.sock"))
	mv(filepath.Join(d, "old", "t.sock"), filepath.Join(d, "x", "y", "t.sock"))
	bind(filepath.Join(d, "hid", "h", "u.sock"))
	mv(filepath.Join(d, "hid", "h"), filepath.Join(d, "hid", "h2"))
	// Bound through a symlink into the hidden place (as /var/run ->
	// /run), its directory then removed (the kernel keeps the name).
	if err := os.Symlink(filepath.Join(d, "hid"), filepath.Join(d, "hidlink")); err != nil {
		t.Fatal(err)
	}
	bind(filepath.Join(d, "hidlink", "gone", "w.sock"))
	if err := os.RemoveAll(filepath.Join(d, "hid", "gone")); err != nil {
		t.Fatal(err)
	}
	listed := []string{filepath.Join(d, "old", "d1", "s.sock"), filepath.Join(d, "old", "t.sock"), filepath.Join(d, "hid", "h", "u.sock"), "/nonexistent-jail-test/v.sock", filepath.Join(d, "hidlink", "gone", "w.sock")}
	stubBoundFiles(t, listed)
	mounts := []ns.Mount{{Kind: ns.KindBind, Path: ws, Dir: true}, {Kind: ns.KindTmpfs, Path: filepath.Join(d, "hid"), Dir: true}}
	masks, _, note, once, err := hostSocketMasksOwned(mounts, nil, []string{ws})
	var got []string
	for _, m := range masks {
		got = append(got, m.Path)
	}
	slices.Sort(got)
	want := []string{filepath.Join(d, "old", "d2", "s.sock"), filepath.Join(d, "x", "y", "t.sock")}
	if err != nil || !slices.Equal(got, want) || note != "" || once != "" {
		t.Errorf("masks %q, note %q %q, err %v; want %q and no note", got, note, once, err, want)
	}
	oldFar := maxFarDirs
	maxFarDirs = 0
	t.Cleanup(func() { maxFarDirs = oldFar })
	// Said once (the plan's onceNotes), not at every start: apart from
	// the every-start note.
	masks, _, note, once, err = hostSocketMasksOwned(mounts, nil, []string{ws})
	if err != nil || len(masks) != 0 || note != "" || !strings.Contains(once, "a live socket bound at "+listed[0]+", "+listed[1]+" is not at that name") {
		t.Errorf("past the bound: masks %v, err %v, note %q, once %q", masks, err, note, once)
	}
	// The entries bound alone (sockets19b) stops the search too.
	maxFarDirs = oldFar
	oldEntries := maxFarEntries
	maxFarEntries = 0
	t.Cleanup(func() { maxFarEntries = oldEntries })
	masks, _, _, once, err = hostSocketMasksOwned(mounts, nil, []string{ws})
	if err != nil || len(masks) != 0 || !strings.Contains(once, "entries of it") {
		t.Errorf("past the entries bound: masks %v, err %v, once %q", masks, err, once)
	}
}

// TestHostSocketFoundNamesViews (sockets19): a socket's name found by a
// walk (renamed outside the roots: farMasks; another name in the roots:
// linkedMasks) is masked at every place the host's mount table shows it
// too, as a listed name is: a host bind of its directory elsewhere
// reaches the same inode by another path, and the walks never enter a
// mount point. Seen failing on main: only the found paths masked, the
// aliases left.
func TestHostSocketFoundNamesViews(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(d, "ws")
	bindSocketFile(t, filepath.Join(d, "old", "t.sock"), true)
	if err := os.MkdirAll(filepath.Join(d, "x", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(d, "old", "t.sock"), filepath.Join(d, "x", "y", "t.sock")); err != nil {
		t.Fatal(err)
	}
	bindSocketFile(t, filepath.Join(ws, "tool.sock"), true)
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(ws, "tool.sock"), filepath.Join(ws, "sub", "l.sock")); err != nil {
		t.Fatal(err)
	}
	// The test cannot mount: the aliases are sockets at the places the
	// fake mount table says show the same files (d/x bound at d/xa, the
	// workspace at d/wa).
	farAlias := filepath.Join(d, "xa", "y", "t.sock")
	linkAlias := filepath.Join(d, "wa", "sub", "l.sock")
	bindSocketFile(t, farAlias, false)
	bindSocketFile(t, linkAlias, false)
	listed := []string{filepath.Join(d, "old", "t.sock"), filepath.Join(ws, "tool.sock")}
	stubBoundFiles(t, listed)
	host := []fsrules.Mount{
		{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"},
		{Point: filepath.Join(d, "xa"), FSType: "ext4", Dev: "8:1", Root: filepath.Join(d, "x")},
		{Point: filepath.Join(d, "wa"), FSType: "ext4", Dev: "8:1", Root: ws},
	}
	mounts := []ns.Mount{{Kind: ns.KindBind, Path: ws, Dir: true}}
	masks, _, _, _, err := hostSocketMasksOwned(mounts, host, []string{ws})
	var got []string
	for _, m := range masks {
		got = append(got, m.Path)
	}
	for _, p := range []string{filepath.Join(d, "x", "y", "t.sock"), farAlias, filepath.Join(ws, "sub", "l.sock"), linkAlias} {
		if err != nil || !slices.Contains(got, p) {
			t.Errorf("ATTACK WORKED: %s not masked (masks %q, err %v)", p, got, err)
		}
	}
}

// stubBoundFiles makes boundSockets list only the names listed, with the
// kernel's own file identities (sock_diag; a test fails without them).
func stubBoundFiles(t *testing.T, listed []string) {
	t.Helper()
	old := boundSockets
	t.Cleanup(func() { boundSockets = old })
	boundSockets = func() ([]string, *hostsock.Files, error) {
		_, files, err := hostsock.BoundFiles()
		if files == nil {
			t.Fatalf("sock_diag gave no files: %v", err)
		}
		return listed, files, err
	}
}

// TestHostSocketMovedOutOfHidden (sockets20): a live socket listed in a
// place this run hides (a tmpfs or a masked directory over it), renamed
// out of there into a place the sandbox sees outside the walked roots
// (an earlier run's --write tree held both), is found outward from the
// nearest place the sandbox sees and masked: with roots on its device
// (the hidden lstat's walk) and with none. Left where it was hidden, or
// gone, it is looked for and, not found, not said (nothing visible to
// act on). Seen failing on main: addLost refused a hidden place and the
// moved socket was left reachable.
func TestHostSocketMovedOutOfHidden(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(d, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	listed := filepath.Join(d, "hid", "a", "v.sock")
	bindSocketFile(t, listed, true)
	movedTo := filepath.Join(d, "x", "y", "v.sock")
	if err := os.MkdirAll(filepath.Dir(movedTo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(listed, movedTo); err != nil {
		t.Fatal(err)
	}
	stays := filepath.Join(d, "hid", "b", "s.sock") // moved inside the hidden place
	bindSocketFile(t, stays, true)
	if err := os.Rename(stays, filepath.Join(d, "hid", "b", "s2.sock")); err != nil {
		t.Fatal(err)
	}
	// Linked under its final name and its bound one unlinked, in the
	// hidden place (ssh's ControlMaster): not looked for.
	tmpName := filepath.Join(d, "hid", "c", "cm.tmp")
	bindSocketFile(t, tmpName, true)
	if err := os.Link(tmpName, filepath.Join(d, "hid", "c", "cm")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tmpName); err != nil {
		t.Fatal(err)
	}
	stubBoundFiles(t, []string{listed, stays, tmpName})
	if holdsIn(filepath.Join(d, "hid", "b"), stays, nil) || !func() bool {
		_, files, _ := hostsock.BoundFiles()
		return holdsIn(filepath.Join(d, "hid", "c"), tmpName, files)
	}() {
		t.Errorf("holdsIn: want the linked name found in its directory only")
	}
	for _, hide := range []ns.Mount{
		{Kind: ns.KindTmpfs, Path: filepath.Join(d, "hid"), Dir: true},
		{Kind: ns.KindMask, Path: filepath.Join(d, "hid"), Dir: true},
	} {
		mounts := []ns.Mount{{Kind: ns.KindBind, Path: ws, Dir: true}, hide}
		for _, roots := range [][]string{{ws}, nil} {
			masks, _, note, once, err := hostSocketMasksOwned(mounts, nil, roots)
			var got []string
			for _, m := range masks {
				got = append(got, m.Path)
			}
			if err != nil || !slices.Equal(got, []string{movedTo}) || note != "" || once != "" {
				t.Errorf("ATTACK WORKED? hidden by %v, roots %q: masks %q, note %q %q, err %v; want %s masked, no note", hide.Kind, roots, got, note, once, err, movedTo)
			}
		}
	}
}

// TestHostSocketFarRecord (sockets20): a live socket the far search did
// not find is recorded in the state directory and not searched for again
// (the search's ~80 ms at every start) while no start writes on its file
// system; a start with a write path there drops the record (its agent
// could rename the socket into view: a kept entry would hide it), and
// while such a start's supervisor lives nothing of that file system is
// recorded or trusted. The skip is shown by a socket moved into view
// behind the record's back (by the host: the record's one blind spot).
func TestHostSocketFarRecord(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sd := filepath.Join(d, "state")
	ws := filepath.Join(d, "ws")
	for _, p := range []string{sd, ws, filepath.Join(d, "x"), filepath.Join(d, "hid")} { // sd: a start makes it, a plan never does (lockFar)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	listed := filepath.Join(d, "old", "s.sock")
	bindSocketFile(t, listed, true)
	hidden, inView := filepath.Join(d, "hid", "s.sock"), filepath.Join(d, "x", "s.sock")
	mv := func(from, to string) {
		t.Helper()
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	mv(listed, hidden)
	stubBoundFiles(t, []string{listed})
	mounts := []ns.Mount{{Kind: ns.KindROBind, Path: ws, Dir: true}, {Kind: ns.KindTmpfs, Path: filepath.Join(d, "hid"), Dir: true}}
	writer := append(slices.Clone(mounts), ns.Mount{Kind: ns.KindBind, Path: filepath.Join(d, "x"), Dir: true})
	oldSelf := farSelf
	t.Cleanup(func() { farSelf = oldSelf })
	dead := func() (int, uint64) { return 1 << 22, 1 } // a run that has ended
	start := func(what string, want []string) {
		t.Helper()
		masks, _, _, once, err := hostSocketMasksRecorded(mounts, nil, []string{ws}, sd)
		var got []string
		for _, m := range masks {
			got = append(got, m.Path)
		}
		if err != nil || !slices.Equal(got, want) || len(want) == 0 && !strings.Contains(once, listed) {
			t.Errorf("%s: masks %q, once %q, err %v; want %q", what, got, once, err, want)
		}
	}
	start("first start: searched, not found, recorded", nil)
	if _, err := os.Stat(filepath.Join(sd, statedir.SocketsFar)); err != nil {
		t.Fatalf("no record: %v", err)
	}
	mv(hidden, inView)
	start("no start wrote there since: the record is used", nil)
	farSelf = dead
	farWriting(farRecordFile(sd), writer, nil)
	start("ATTACK WORKED? a start wrote there since: searched again", []string{inView})
	// A writer that still runs: nothing recorded, nothing trusted.
	mv(inView, hidden)
	farSelf = oldSelf
	farWriting(farRecordFile(sd), writer, nil)
	start("a writer runs: searched, not recorded", nil)
	mv(hidden, inView)
	start("ATTACK WORKED? a writer runs: searched again", []string{inView})
	// A write path on another file system leaves the record alone.
	if devs := writeDevs([]ns.Mount{{Kind: ns.KindBind, Path: "/proc", Dir: true}}, nil); len(devs) != 1 {
		t.Fatalf("writeDevs(/proc) = %v", devs)
	}
}

// TestHostSocketFarEntriesBound (sockets20): the far search stops after
// maxFarEntries directory entries, a huge directory beside a socket gone
// from its name (an earlier run's agent's, in its --write tree) among
// them: 100,100 names (hard links, made fast) in one directory, within
// the directories bound; the socket renamed beyond it is not reached (that
// is the bound: a start's cost the agent cannot choose) and is said once.
// Seen failing on main before sockets19b (ba8d63a): every entry read and
// the socket beyond them found.
func TestHostSocketFarEntriesBound(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(d, "a", "huge")
	if err := os.MkdirAll(huge, 0o755); err != nil {
		t.Fatal(err)
	}
	var f [2]string // ext4 links a file 65,000 times at most
	for i := range f {
		f[i] = filepath.Join(d, "a", "f"+strconv.Itoa(i))
		if err := os.WriteFile(f[i], nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100100 {
		if err := os.Link(f[i%2], filepath.Join(huge, strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	listed := filepath.Join(d, "a", "s.sock")
	bindSocketFile(t, listed, true)
	// Renamed to a directory the search reaches only after the huge one
	// (its parent's walk, the step after a/).
	beyond := filepath.Join(d, "b", "s.sock")
	if err := os.Mkdir(filepath.Dir(beyond), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(listed, beyond); err != nil {
		t.Fatal(err)
	}
	stubBoundFiles(t, []string{listed})
	masks, _, _, once, err := hostSocketMasksOwned(nil, nil, nil)
	if err != nil || len(masks) != 0 || !strings.Contains(once, "a live socket bound at "+listed) {
		t.Errorf("masks %v, once %q, err %v; want the search stopped at the entries bound (%s not reached) and said", masks, once, err, beyond)
	}
}

// TestHostSocketNameViewsBounded (leftovers19): the masks over other names
// of a socket count the other mounts that show each name (viewMasks) and
// the names found outside the walked trees (farMasks) against
// maxLinkedMasks: ten hard links in the workspace, each shown by three
// host binds of it, are forty mounts, and one more than the bound refuses
// the start. Seen failing on main: the bound counted the ten names only
// (forty masks under a bound of 39 started) and farMasks had no bound.
func TestHostSocketNameViewsBounded(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(d, "ws")
	tool := filepath.Join(ws, "tool.sock")
	bindSocketFile(t, tool, true)
	host := []fsrules.Mount{{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"}}
	const links, views = 10, 3
	for v := range views {
		host = append(host, fsrules.Mount{Point: filepath.Join(d, fmt.Sprintf("wa%d", v)), FSType: "ext4", Dev: "8:1", Root: ws})
	}
	for i := range links {
		rel := filepath.Join("sub", fmt.Sprintf("l%d.sock", i))
		if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(tool, filepath.Join(ws, rel)); err != nil {
			t.Fatal(err)
		}
		// The test cannot mount: each view's alias is a socket at the
		// place the fake mount table says shows the same file.
		for v := range views {
			bindSocketFile(t, filepath.Join(d, fmt.Sprintf("wa%d", v), rel), false)
		}
	}
	stubBoundFiles(t, []string{tool})
	mounts := []ns.Mount{{Kind: ns.KindBind, Path: ws, Dir: true}}
	masksWith := func(max int) ([]ns.Mount, error) {
		old := maxLinkedMasks
		maxLinkedMasks = max
		defer func() { maxLinkedMasks = old }()
		masks, _, _, _, err := hostSocketMasksOwned(mounts, host, []string{ws})
		return masks, err
	}
	const want = links * (1 + views)
	if masks, err := masksWith(want); err != nil || len(masks) != want+1 { // +1: tool.sock itself
		t.Fatalf("at the bound: %d masks (want %d), err %v", len(masks), want+1, err)
	}
	if masks, err := masksWith(want - 1); err == nil || !strings.Contains(err.Error(), "not starting") {
		t.Errorf("ATTACK WORKED: %d masks past a bound of %d, err %v", len(masks), want-1, err)
	}

	// A name outside the walked trees (farMasks) and its view count too.
	far := filepath.Join(d, "elsewhere", "f.sock")
	if err := os.MkdirAll(filepath.Dir(far), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(tool, far); err != nil {
		t.Fatal(err)
	}
	host = append(host, fsrules.Mount{Point: filepath.Join(d, "ea"), FSType: "ext4", Dev: "8:1", Root: filepath.Dir(far)})
	bindSocketFile(t, filepath.Join(d, "ea", "f.sock"), false)
	if masks, err := masksWith(want + 2); err != nil || len(masks) != want+3 {
		t.Fatalf("far at the bound: %d masks (want %d), err %v", len(masks), want+3, err)
	}
	if masks, err := masksWith(want + 1); err == nil || !strings.Contains(err.Error(), "not starting") {
		t.Errorf("ATTACK WORKED: far names masked past the bound (%d masks, bound %d), err %v", len(masks), want+1, err)
	}
}
