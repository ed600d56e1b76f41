package fsrules

import (
	"path"
	"slices"
	"strings"
	"testing"
)

// viewsBase: the root file system (8:1) holds /home/u; /proc is a pseudo
// file system; /data is another disk (8:2).
const viewsBase = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n" +
	"2 1 0:20 / /proc rw - proc proc rw\n" +
	"3 1 8:2 / /data rw - ext4 /dev/sdb1 rw\n"

// TestViews: every other mount of the HOME's file system that shows the
// HOME, or a part of it, is found, at the place it shows it.
func TestViews(t *testing.T) {
	for _, c := range []struct {
		name, extra, target string
		want                []string
	}{
		{"none", "", "/home/u", nil},
		{"equal root (mount --bind /home/u /var/lib/v)", "10 1 8:1 /home/u /var/lib/v rw - ext4 /dev/sda1 rw\n", "/home/u", []string{"/var/lib/v"}},
		{"ancestor root (mount --bind /home /srv/h)", "10 1 8:1 /home /srv/h rw - ext4 /dev/sda1 rw\n", "/home/u", []string{"/srv/h/u"}},
		{"root of the file system a second time", "10 1 8:1 / /mnt/root rw - ext4 /dev/sda1 rw\n", "/home/u", []string{"/mnt/root/home/u"}},
		{"root inside the HOME (mount --bind /home/u/.ssh /var/lib/k)", "10 1 8:1 /home/u/.ssh /var/lib/k rw - ext4 /dev/sda1 rw\n", "/home/u", []string{"/var/lib/k (part)"}},
		{"a file inside the HOME", "10 1 8:1 /home/u/.ssh/id_ed25519 /etc/k rw - ext4 /dev/sda1 rw\n", "/home/u", []string{"/etc/k (part)"}},
		{"other device, same path", "10 1 8:2 /home/u /var/lib/v rw - ext4 /dev/sdb1 rw\n", "/home/u", nil},
		{"sibling root (not an ancestor: /home/uu)", "10 1 8:1 /home/uu /var/lib/v rw - ext4 /dev/sda1 rw\n", "/home/u", nil},
		{"unrelated root", "10 1 8:1 /etc /var/lib/v rw - ext4 /dev/sda1 rw\n", "/home/u", nil},
		{"the HOME's own mount", "10 1 8:3 / /home/u rw - ext4 /dev/sdc1 rw\n", "/home/u", nil},
		{"the HOME's own mount, and a second one", "10 1 8:3 / /home/u rw - ext4 /dev/sdc1 rw\n11 1 8:3 / /var/lib/v rw - ext4 /dev/sdc1 rw\n", "/home/u", []string{"/var/lib/v"}},
		{"HOME on a subvolume-like root", "10 1 8:3 /@home/u /home/u rw - btrfs /dev/sdc1 rw\n11 1 8:3 /@home /var/lib/all rw - btrfs /dev/sdc1 rw\n12 1 8:3 /@ /x rw - btrfs /dev/sdc1 rw\n", "/home/u", []string{"/var/lib/all/u"}},
		{"a view under the workspace (mount --bind /home/u /home/u/proj/v)", "10 1 8:1 /home/u /home/u/proj/v rw - ext4 /dev/sda1 rw\n", "/home/u", []string{"/home/u/proj/v"}},
		{"a disk mounted in the HOME, shown elsewhere too", "10 1 8:4 / /home/u/disk rw - ext4 /dev/sdd1 rw\n11 1 8:4 /sub /media/s rw - ext4 /dev/sdd1 rw\n", "/home/u", []string{"/media/s (part)"}},
		{"a view inside a pseudo file system is skipped", "10 2 8:1 /home/u /proc/x rw - proc proc rw\n", "/home/u", nil},
		{"overmounted HOME mount point: the last line wins", "10 1 8:3 / /home/u rw - ext4 /dev/sdc1 rw\n11 1 8:5 / /home/u rw - ext4 /dev/sde1 rw\n12 1 8:5 / /var/lib/v rw - ext4 /dev/sde1 rw\n", "/home/u", []string{"/var/lib/v"}},
		{"escaped root and point", `10 1 8:1 /home/u/my\040keys /var/lib/my\040k rw - ext4 /dev/sda1 rw` + "\n", "/home/u", []string{"/var/lib/my k (part)"}},
		{"state directory elsewhere", "10 1 8:2 /jail /var/lib/j rw - ext4 /dev/sdb1 rw\n", "/data/jail/state", []string{"/var/lib/j/state"}},
		{"a directory of the HOME bound onto itself is no other place", "10 1 8:1 /home/u/proj/sub /home/u/proj/sub rw - ext4 /dev/sda1 rw\n", "/home/u", nil},
		{"... nor one of a disk mounted in it", "10 1 8:4 / /home/u/disk rw - ext4 /dev/sdd1 rw\n11 1 8:4 /sub /home/u/disk/sub rw - ext4 /dev/sdd1 rw\n", "/home/u", nil},
		{"target at the file system's root", "10 1 8:2 / /var/lib/d rw - ext4 /dev/sdb1 rw\n", "/data", []string{"/var/lib/d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, v := range Views(ParseMountinfo([]byte(viewsBase+c.extra)), c.target) {
				got = append(got, v.Path+map[bool]string{true: " (part)"}[v.Part])
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("Views(%s) = %q, want %q", c.target, got, c.want)
			}
		})
	}
}

// TestTreeViews: TreeViews is Views without the file systems mounted
// inside the target: a root file system mounted again inside a hidden
// place (WSLg's /mnt/wslg/distro, a btrfs top level in /run) would make
// every other mount of it (/var, /home as subvolumes) a "part" of the
// place, though each shows what is at its own path anyway.
func TestTreeViews(t *testing.T) {
	btrfs := "20 1 0:40 /@ / rw - btrfs /dev/sdc1 rw\n21 20 0:40 /@var /var rw - btrfs /dev/sdc1 rw\n" +
		"22 20 0:41 / /run rw - tmpfs tmpfs rw\n23 22 0:40 / /run/timeshift/backup rw - btrfs /dev/sdc1 rw\n" +
		"24 20 0:40 /@var/tmp /srv/vt rw - btrfs /dev/sdc1 rw\n"
	for _, c := range []struct {
		name, table, target string
		tree, all           []string
	}{
		{"a btrfs top level in /run", btrfs, "/run", nil, []string{"/ (part)", "/var (part)", "/srv/vt (part)"}},
		{"a view of /var/tmp's own tree", btrfs, "/var/tmp", []string{"/run/timeshift/backup/@var/tmp", "/srv/vt"}, []string{"/run/timeshift/backup/@var/tmp", "/srv/vt"}},
		{"a disk mounted in the place, shown elsewhere too", viewsBase + "10 1 8:4 / /home/u/disk rw - ext4 /dev/sdd1 rw\n11 1 8:4 /sub /media/s rw - ext4 /dev/sdd1 rw\n", "/home/u", nil, []string{"/media/s (part)"}},
		{"a directory bound onto itself (/run/netns)", viewsBase + "10 1 8:1 /run/netns /run/netns rw - ext4 /dev/sda1 rw\n", "/run", nil, nil},
		{"a bind of the place", viewsBase + "10 1 8:1 /var/tmp /var/lib/v rw - ext4 /dev/sda1 rw\n", "/var/tmp", []string{"/var/lib/v"}, []string{"/var/lib/v"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := ParseMountinfo([]byte(c.table))
			for _, f := range []struct {
				name string
				fn   func([]Mount, string) []View
				want []string
			}{{"TreeViews", TreeViews, c.tree}, {"Views", Views, c.all}} {
				var got []string
				for _, v := range f.fn(ms, c.target) {
					got = append(got, v.Path+map[bool]string{true: " (part)"}[v.Part])
				}
				if strings.Join(got, ",") != strings.Join(f.want, ",") {
					t.Errorf("%s(%s) = %q, want %q", f.name, c.target, got, f.want)
				}
			}
		})
	}
}

// FuzzViews: never panics; every view is clean and absolute, never the
// target itself, and the table it came from has a mount of the target's
// file system whose point is an ancestor of it.
func FuzzViews(f *testing.F) {
	f.Add([]byte(viewsBase+"10 1 8:1 /home /srv/h rw - ext4 /dev/sda1 rw\n"), "/home/u")
	f.Add([]byte(viewsBase+"10 1 8:1 /home/u/.ssh /k rw - ext4 x rw\n11 1 8:9 / /home/u/d rw - x y z\n12 1 8:9 /a /b rw - x y z\n"), "/home/u")
	f.Fuzz(func(t *testing.T, b []byte, target string) {
		if !strings.HasPrefix(target, "/") || path.Clean(target) != target {
			return
		}
		ms := ParseMountinfo(b)
		all := Views(ms, target)
		for _, tv := range TreeViews(ms, target) {
			if !slices.Contains(all, tv) {
				t.Fatalf("tree view %v of %q is not among its views %v in %q", tv, target, all, b)
			}
		}
		for _, vw := range all {
			v := vw.Path
			if v != path.Clean(v) || !strings.HasPrefix(v, "/") || v == target {
				t.Fatalf("bad view %q of %q in %q", v, target, b)
			}
			ok := false
			for _, m := range ms {
				ok = ok || under(v, m.Point)
			}
			if !ok {
				t.Fatalf("view %q is in no mount of %q", v, b)
			}
		}
	})
}
