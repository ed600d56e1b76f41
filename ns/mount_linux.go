package ns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Where init stages things in its own (private) copy of the host's mount
// table before pivot_root. Mounting over it in our mount namespace changes
// nothing on the host.
var stageCandidates = []string{"/tmp", "/run", "/mnt", "/var/tmp", "/opt", "/srv"}

// Devices bound from the host's /dev into the sandbox's minimal /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// Staged mask sources inside the sandbox's /dev tmpfs; removed before the agent
// starts (the bind mounts made from them keep the inodes alive).
const (
	maskFile = "/dev/.jail-mask-file"
	maskDir  = "/dev/.jail-mask-dir"
	dataDir  = "/dev/.jail-data"
)

func mountErr(op, path string, err error) error {
	return &os.PathError{Op: op, Path: path, Err: err}
}

// cloneTree returns a detached, recursive copy of the mount tree at path
// (open_tree OPEN_TREE_CLONE): a bind source that later mounts in our
// namespace cannot affect.
func cloneTree(path string) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return -1, mountErr("open_tree", path, err)
	}
	return fd, nil
}

// openTreeAt is open_tree(2) of path with flags; with noLinks, path is
// first opened with no symlink on the way (openat2 RESOLVE_NO_SYMLINKS)
// and the tree taken from that descriptor. Why: a bind source the
// supervisor checked link by link (sandbox grantLinks) can be changed
// before this open by a command running in another sandbox that writes
// a directory on the way (a rename exchanging a directory and a link won
// about one start in sixteen, review14f): open_tree follows links, so the
// link's target was bound instead. Where openat2 is missing (before
// Linux 5.6) the path is opened as before.
func openTreeAt(path string, flags uint, noLinks bool) (int, error) {
	if noLinks {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
		pfd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
		switch {
		case err == nil:
			defer unix.Close(pfd)
			fd, err := unix.OpenTree(pfd, "", flags|unix.AT_EMPTY_PATH)
			if err != nil {
				return -1, mountErr("open_tree", path, err)
			}
			return fd, nil
		case errors.Is(err, unix.ELOOP):
			return -1, mountErr("open", path, fmt.Errorf("a symlink is on the way now, where jail checked there was none: a command running in a sandbox may be changing it (%w)", err))
		case !errors.Is(err, unix.ENOSYS):
			return -1, mountErr("openat2", path, err)
		}
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, flags)
	if err != nil {
		return -1, mountErr("open_tree", path, err)
	}
	return fd, nil
}

// setAttr sets and clears mount attributes on the mount at path (and below it
// when recursive).
func setAttr(path string, set, clr uint64, recursive bool) error {
	flags := uint(0)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	attr := unix.MountAttr{Attr_set: set, Attr_clr: clr}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &attr); err != nil {
		return mountErr("mount_setattr", path, err)
	}
	return nil
}

// attach mounts the detached tree fd at target (which must exist).
func attach(fd int, target string) error {
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return mountErr("move_mount", target, err)
	}
	return nil
}

// buildRoot builds the sandbox's root and pivots into it. passed holds the fds
// the supervisor prepared (idmapped bind sources when started by root). It
// returns the writable files of KindRecord mounts, for the supervisor.
func buildRoot(spec *Spec, passed []*os.File) (names []string, files []*os.File, err error) {
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			names, files = nil, nil
		}
	}()
	err = buildRootInto(spec, passed, func(name string, f *os.File) {
		names, files = append(names, name), append(files, f)
	})
	return names, files, err
}

func buildRootInto(spec *Spec, passed []*os.File, record func(string, *os.File)) error {
	// Nothing we mount may propagate back to the host: the host's / is usually
	// a shared mount, and a shared peer in our namespace would receive (and,
	// without a user ns boundary, send) mount events.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return mountErr("make-rprivate", "/", err)
	}

	// 1. Capture every bind source as a detached clone of the live tree, before
	//    anything is hidden. The root is cloned first.
	rootFD, err := cloneTree("/")
	if err != nil {
		return err
	}
	defer unix.Close(rootFD)
	sources := make([]int, len(spec.Mounts))
	fromPassed := make([]*os.File, len(spec.Mounts))
	for i := range sources {
		sources[i] = -1
	}
	defer func() {
		for i, fd := range sources {
			switch {
			case fromPassed[i] != nil:
				// Through its os.File: closed there, the caller's own
				// Close of passed is a no-op, never a second close(2) of
				// the number, which by then may be another descriptor's
				// (the runtime poller's epoll: init's death).
				fromPassed[i].Close()
			case fd >= 0:
				unix.Close(fd)
			}
		}
	}()
	for i, m := range spec.Mounts {
		if m.Kind != KindBind && m.Kind != KindROBind {
			continue
		}
		if m.FD >= 0 {
			if m.FD >= len(passed) {
				return fmt.Errorf("mount plan: %s refers to fd %d of %d passed", m.Path, m.FD, len(passed))
			}
			fromPassed[i] = passed[m.FD]
			sources[i] = int(passed[m.FD].Fd())
			continue
		}
		if sources[i], err = openTreeAt(m.BindSource(), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE, m.NoLinks); err != nil {
			return err
		}
	}
	devFDs := map[string]int{}
	for _, d := range devNodes {
		p := "/dev/" + d
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			// A node the host lacks (no /dev/tty on a detached CI
			// runner) is skipped, not a failure, as when a stat came
			// first: the stat is asked only now, on this rare path
			// (one system call fewer a node on the usual one).
			if _, serr := os.Stat(p); serr != nil {
				continue
			}
			return mountErr("open_tree", p, err)
		}
		devFDs[d] = fd
	}
	defer func() {
		for _, fd := range devFDs {
			unix.Close(fd)
		}
	}()

	// 2. Attach the root clone on a private stage and make it read-only,
	//    nosuid and nodev, recursively (mount_setattr AT_RECURSIVE, 5.12: one
	//    call instead of a racy walk of mountinfo). Mounts inherited from the
	//    host stay locked by the kernel (they cannot be unmounted to reveal
	//    what they cover), which is what we want.
	stage := ""
	for _, c := range stageCandidates {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			stage = c
			break
		}
	}
	if stage == "" {
		return fmt.Errorf("no directory to stage the sandbox root on (tried %s)", strings.Join(stageCandidates, ", "))
	}
	if err := unix.Mount("jail-stage", stage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0700"); err != nil {
		return mountErr("mount tmpfs", stage, err)
	}
	// The stage, by descriptor: after pivot_root no path leads to it, and
	// the record mounts' writable staging goes there (recordMount), to be
	// detached with the old root.
	stageFD, err := unix.Open(stage, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return mountErr("open", stage, err)
	}
	defer unix.Close(stageFD)
	newRoot := filepath.Join(stage, "root")
	if err := os.Mkdir(newRoot, 0o700); err != nil {
		return err
	}
	if err := attach(rootFD, newRoot); err != nil {
		return err
	}
	if err := setAttr(newRoot, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0, true); err != nil {
		return fmt.Errorf("make the host view read-only: %w", err)
	}

	// 3. pivot_root into it. The old root is left stacked on the new one
	//    (pivot_root(".", ".")) until step 8 detaches it: no lookup goes
	//    through it meanwhile (a walk from the root or the working
	//    directory starts below a mount stacked on that directory itself;
	//    only umount2(".") reaches it), and the agent does not exist yet.
	if err := os.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return mountErr("pivot_root", newRoot, err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}

	// 4. A fresh /dev (staging area for masks and generated files too).
	if err := buildDev(devFDs); err != nil {
		return err
	}

	// 5. The plan: hides, binds, masks, in the order the supervisor chose.
	for i, m := range spec.Mounts {
		if filepath.Clean(m.Path) == "/" {
			// Stacked on the root it would be what step 8's
			// umount2(".") detaches, not the old root.
			return fmt.Errorf("mount plan: %s %s: nothing is mounted on the root itself", m.Kind, m.Path)
		}
		if m.Kind == KindRecord {
			f, err := recordMount(m, i, stageFD)
			if err != nil {
				return fmt.Errorf("%s %s: %w", m.Kind, m.Path, err)
			}
			record(RecordName(m.Path, m.File), f)
			continue
		}
		if err := applyMount(m, sources[i]); err != nil {
			return fmt.Errorf("%s %s: %w", m.Kind, m.Path, err)
		}
	}

	// 6. A fresh /proc for our pid namespace, over the host's (which stays
	//    covered and locked). hidepid is not needed: only our processes exist.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return mountErr("mount proc", "/proc", err)
	}
	// /proc/keys and /proc/key-users list every kernel key the reader's
	// uid may view, host-wide (keyrings are not namespaced): in a user's
	// start the agent's uid is the user's, so they named the user's own
	// keys (their payloads stay behind the keyctl rule of seccomp).
	// Masked read-only with the empty mask file, as Docker and rootless
	// podman do; absent without CONFIG_KEYS.
	for _, p := range []string{"/proc/keys", "/proc/key-users"} {
		if err := unix.Mount(maskFile, p, "", unix.MS_BIND, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return mountErr("mask", p, err)
		}
		// Read-only: the mask file is init's, and the agent's uid is
		// init's; every mask shares it.
		if err := setAttr(p, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0, false); err != nil {
			return err
		}
	}
	// A fresh, read-only sysfs shows only our network namespace's devices and
	// none of the host's cgroup or debug mounts. Where the kernel refuses it,
	// the host's read-only /sys stays.
	_ = unix.Mount("sysfs", "/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")

	// 7. Remove the staged sources and make /dev read-only: the agent cannot
	//    create device nodes (nodev anyway) or files there.
	_ = unix.Unlink(maskFile)
	_ = unix.Rmdir(maskDir)
	removeStaged()
	if err := setAttr("/dev", unix.MOUNT_ATTR_RDONLY, 0, false); err != nil {
		return err
	}

	// 8. Detach the old root, and with it the stage and the records'
	//    writable staging mounts: afterwards no path, and no /proc/*/root
	//    of ours, leads to the host's mount tree or to a writable mount of
	//    a record. One detach, so one wait for the kernel's RCU grace
	//    period (0.1-0.3 ms here, a few ms under load), where a record's
	//    own staging mount in /dev cost a second one.
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return mountErr("detach old root", "/", err)
	}
	return nil
}

func buildDev(devFDs map[string]int) error {
	if err := unix.Mount("jail-dev", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=1m,mode=0755"); err != nil {
		return mountErr("mount tmpfs", "/dev", err)
	}
	for _, d := range devNodes {
		fd, ok := devFDs[d]
		if !ok {
			continue
		}
		p := "/dev/" + d
		if err := mountPointFile(p); err != nil {
			return err
		}
		if err := attach(fd, p); err != nil {
			return err
		}
		if err := setAttr(p, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, 0, false); err != nil {
			return err
		}
	}
	// A new devpts instance: the sandbox's terminals are its own, and no host
	// pty is reachable through /dev/pts.
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return mountErr("mount devpts", "/dev/pts", err)
	}
	for name, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, "/dev/"+name); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/dev/shm", 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("jail-shm", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return mountErr("mount tmpfs", "/dev/shm", err)
	}
	// Mask sources: an empty file and an empty directory, mode 0, so that even
	// their owner (the agent's uid, without CAP_DAC_OVERRIDE) gets EACCES.
	if err := createFile(maskFile, unix.O_WRONLY|unix.O_EXCL, 0, nil); err != nil {
		return err
	}
	if err := os.Mkdir(maskDir, 0); err != nil {
		return err
	}
	return os.Mkdir(dataDir, 0o755)
}

// touch makes an empty file at p (a mount point), or opens the one there.
func touch(p string) error {
	return createFile(p, unix.O_WRONLY, 0o644, nil)
}

// mountPointFile makes an empty regular file at p, a mount point in init's
// own fresh /dev, where nothing is there before: one mknod instead of
// touch's open and close. A file that is there already is used, as touch
// would; mknod, like O_NOFOLLOW|O_CREAT, never follows a link.
func mountPointFile(p string) error {
	err := unix.Mknod(p, unix.S_IFREG|0o644, 0)
	if err == nil || err == unix.EEXIST {
		if err == unix.EEXIST {
			// Only a regular file is taken, as touch's open for writing
			// would refuse a directory and O_NOFOLLOW a link.
			var st unix.Stat_t
			if lerr := unix.Lstat(p, &st); lerr != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				return mountErr("mknod", p, err)
			}
		}
		return nil
	}
	return mountErr("mknod", p, err)
}

// createFile creates (O_CREAT with flags; O_NOFOLLOW, never through a
// link) the file p with mode (less the umask) and writes data into it,
// through a bare descriptor: init's files here are on its own tmpfs, where
// Go's poller (os.OpenFile: four fcntl and a refused epoll_ctl a file, and
// the poller's own epoll instance and eventfd on the first) has nothing
// to wait for.
func createFile(p string, flags int, mode uint32, data []byte) error {
	fd, err := unix.Open(p, flags|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return mountErr("open", p, err)
	}
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return mountErr("write", p, err)
		}
		data = data[n:]
	}
	if err := unix.Close(fd); err != nil {
		return mountErr("close", p, err)
	}
	return nil
}

// staged are the files made under dataDir for the plan's file mounts, in
// order; removeStaged takes them away once their mounts hold them.
var staged []string

// dataFile writes data to a new file of its own under dataDir, mode 0644
// (the bind source of a KindFile mount).
func dataFile(data []byte) (string, error) {
	p := fmt.Sprintf("%s/f%d", dataDir, len(staged))
	// O_EXCL: dataDir is init's own (in its /dev tmpfs, before the agent
	// exists); a name already there is a bug, never a file to reuse.
	if err := createFile(p, unix.O_WRONLY|unix.O_EXCL, 0o644, data); err != nil {
		return "", err
	}
	staged = append(staged, p)
	if err := unix.Chmod(p, 0o644); err != nil { // umask may have taken bits away
		return "", mountErr("chmod", p, err)
	}
	return p, nil
}

// removeStaged removes what the plan's mounts staged under dataDir, then
// dataDir itself. Anything else found there (nothing else writes it)
// falls back to a walk of the whole directory.
func removeStaged() {
	for _, p := range staged {
		_ = unix.Unlink(p)
	}
	staged = nil
	if err := unix.Rmdir(dataDir); err != nil && err != unix.ENOENT {
		_ = os.RemoveAll(dataDir)
	}
}

// ensureTarget makes sure a mount point exists at p. Missing components may
// only be created on a writable tmpfs of ours (the host view is read-only), so
// nothing is ever created on the host.
func ensureTarget(p string, dir bool) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if dir {
		return os.Mkdir(p, 0o755)
	}
	return touch(p)
}

// placeCameBack tells whether p, which ensureTarget could not make, exists
// after all: the host made it again in between (mkdir then fails with
// EEXIST), and it is mounted over like any place that was there.
func placeCameBack(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// placeChurn tells whether err, from making or mounting on a place, is
// what the host removing (or making again) that place under us gives, in
// the read-only host view where no mount point can be made.
func placeChurn(err error) bool {
	return errors.Is(err, unix.EROFS) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOENT)
}

func applyMount(m Mount, src int) error {
	switch m.Kind {
	case KindTmpfs:
		mode := m.Mode
		if mode == 0 {
			mode = 0o755
		}
		opts := "mode=0" + strconv.FormatUint(uint64(mode), 8)
		if m.Size > 0 {
			opts += ",size=" + strconv.FormatInt(m.Size, 10)
		}
		// The usual case first: the place is there (a directory, or a
		// link to one, which the mount follows as before), and one mount
		// is all it takes, without ensureTarget's lstat. Any failure
		// goes the whole way below, which begins again with the look.
		if unix.Mount("tmpfs", m.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts) == nil {
			return nil
		}
		// The host may remove the place (a data place the plan hides under
		// an empty tmpfs) between the plan and this mount, and make it
		// again, any number of times: no mount point can be made in the
		// read-only host view. What counts is the place as it is now: gone,
		// nothing is left there to hide (whatever the host makes there
		// later is like any directory it makes after the start); there, it
		// is mounted over. A start must not fail on the host's own churn
		// (about two in three did while a top-level directory came and
		// went, and then one in a few hundred when it came back between two
		// looks: TestDataPlaceVanishesDuringStart).
		for attempt := 0; ; attempt++ {
			err := ensureTarget(m.Path, true)
			if err == nil || placeCameBack(m.Path) {
				if err = unix.Mount("tmpfs", m.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err == nil {
					return nil
				}
			}
			if !placeChurn(err) {
				return err
			}
			if _, lerr := os.Lstat(m.Path); errors.Is(lerr, os.ErrNotExist) {
				return nil // gone: nothing is left there to hide
			}
			if attempt == 7 {
				return err
			}
			// There again since the failed step: mount over it.
		}
	case KindBind, KindROBind:
		if err := ensureTarget(m.Path, m.Dir); err != nil {
			return err
		}
		if err := attach(src, m.Path); err != nil {
			return err
		}
		var set, clr uint64 = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, 0
		if m.Kind == KindROBind {
			set |= unix.MOUNT_ATTR_RDONLY
		} else {
			clr |= unix.MOUNT_ATTR_RDONLY
		}
		err := setAttr(m.Path, set, clr, true)
		if err != nil && m.Kind == KindBind && errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%w (the host mount is read-only)", err)
		}
		return err
	case KindSymlink:
		if _, err := os.Lstat(m.Path); err == nil {
			return nil // the view shows the host's own link (or what replaced it)
		}
		// Only in a private tmpfs of ours can anything be missing: the
		// host view is read-only, so nothing is ever created on the host
		// (MkdirAll and Symlink fail with EROFS there).
		if err := os.MkdirAll(filepath.Dir(m.Path), 0o755); err != nil {
			return err
		}
		return os.Symlink(m.Link, m.Path)
	case KindPin:
		if err := unix.Mount(m.Path, m.Path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return mountErr("bind", m.Path, err)
		}
		return nil
	case KindMask, KindReadOnly, KindFile:
		if m.Kind == KindMask {
			if done, err := maskByHint(m); done {
				return err
			}
		}
		for attempt := 1; ; attempt++ {
			err := bindOver(m)
			// A mask whose place went between the stat and the mount
			// (placeGone) looks again: the host may have removed it
			// (nothing to hide then) or renamed a new file in (an
			// editor's save: masked now). A bounded number of times: a
			// place that keeps going, or a mask source that is itself
			// missing (its ENOENT is the bind's too), fails the start.
			if m.Kind == KindMask && attempt < maskAttempts && placeGone(err) {
				continue
			}
			return err
		}
	}
	return fmt.Errorf("unknown mount kind %q", m.Kind)
}

// maskAttempts bounds how often a mask looks at a place that keeps going.
const maskAttempts = 3

// placeGone tells whether a mask's mount failed because its place went
// from under it: the host unlinked or renamed over it after the stat (the
// kernel refuses a mount on a dentry gone from the tree: ENOENT) or took
// the bind with it before mount_setattr (ENOENT; EINVAL, no mount there).
func placeGone(err error) bool {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Op {
	case "bind":
		return errors.Is(pe.Err, unix.ENOENT)
	case "mount_setattr":
		return errors.Is(pe.Err, unix.ENOENT) || errors.Is(pe.Err, unix.EINVAL)
	}
	return false
}

// bindOver mounts m (a mask, a read-only bind or a file) over its place,
// stat first: the place's kind picks the mask's source.
func bindOver(m Mount) error {
	fi, err := os.Stat(m.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && m.Kind == KindMask {
			return nil // nothing to hide
		}
		if errors.Is(err, os.ErrPermission) && m.Kind == KindMask {
			// init cannot even reach the path: a directory on the way
			// is closed to the sandbox's user and owned by another
			// (root's 0700 state directory when root started jail,
			// the sandbox being host nobody). The agent, with fewer
			// rights than init, cannot reach it either, and a bind
			// over it cannot be made: nothing to hide.
			return nil
		}
		if !(errors.Is(err, os.ErrNotExist) && m.Kind == KindFile) {
			return err
		}
		// A dangling symlink (resolv.conf -> /run/..., and /run is a
		// private tmpfs now): create its target in that tmpfs.
		target := followLinks(m.Path)
		if err := ensureTarget(target, false); err != nil {
			return fmt.Errorf("create mount point: %w", err)
		}
		m.Path = target
		fi, err = os.Stat(m.Path)
		if err != nil {
			return err
		}
	}
	source := m.Path
	switch m.Kind {
	case KindMask:
		source = maskFile
		if fi.IsDir() {
			source = maskDir
		}
	case KindFile:
		if source, err = dataFile(m.Data); err != nil {
			return err
		}
	}
	if maskStatted != nil && m.Kind == KindMask {
		maskStatted(m.Path)
	}
	if err := unix.Mount(source, m.Path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return mountErr("bind", m.Path, err)
	}
	return setAttr(m.Path, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0, true)
}

// maskStatted, when set (tests), runs between bindOver's stat of a mask's
// place and its bind, where the host's unlink or rename can come.
var maskStatted func(path string)

// maskByHint masks m.Path without a stat first: the plan says whether it
// was a directory (Mount.Dir), and the bind of the matching mask source is
// tried at once. The kernel refuses a directory bound on a file and the
// reverse (ENOTDIR), so a place that changed its kind since the plan never
// gets the wrong source; then, and on every failure, done is false and
// applyMount takes its usual way, stat first, so that every outcome is
// the one it had. ENOENT is not taken for "nothing there" either: the
// bind's ENOENT may be its source's, init's mask file or directory,
// which an earlier mount of the plan covers when a read or write path
// (or the home) is /dev itself; only the stat of the place can tell
// (TestMaskWrongHintStillMasks). EACCES is not taken for "init cannot
// reach the place": a security module may refuse the mount itself with
// it. A secret must never stay unmasked on a guess; the stat costs a
// system call only where the bind failed, a place gone since the plan.
func maskByHint(m Mount) (done bool, err error) {
	source := maskFile
	if m.Dir {
		source = maskDir
	}
	if unix.Mount(source, m.Path, "", unix.MS_BIND|unix.MS_REC, "") != nil {
		return false, nil
	}
	if maskBound != nil {
		maskBound(m.Path)
	}
	err = setAttr(m.Path, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0, true)
	if placeGone(err) {
		// The place went between the bind and here: the host removed it
		// (ENOENT: a socket's server ended) or renamed another file over
		// it (EINVAL: what is there is no mount; an editor's save), and
		// that took the bind with it in every mount namespace. Nothing is
		// masked now: take the usual way, stat first, which finds nothing
		// to hide or masks what is there now (looking again, a bounded
		// number of times, if it goes again: applyMount). Refusing the start, as before, made a
		// host socket that closed during a start fail it (session 18).
		return false, nil
	}
	return true, err
}

// maskBound, when set (tests), runs between maskByHint's bind and its
// mount_setattr, where the host's unlink of the place can come.
var maskBound func(path string)

// recordMount builds a KindRecord (see its doc) and returns the file's only
// writable handle. Its tmpfs is made detached (fsopen, fsmount) and
// attached under the stage (stageFD), in the old root's tree, which
// buildRootInto detaches before the agent exists: no path inside leads to
// a writable mount of it; Path gets a read-only clone of it. Init, which
// keeps no copy of the handle, is not dumpable (no /proc/1/fd/ from
// inside).
func recordMount(m Mount, i, stageFD int) (*os.File, error) {
	if m.File == "" || strings.Contains(m.File, "/") || m.File == "." || m.File == ".." {
		return nil, fmt.Errorf("record file name %q: %w", m.File, os.ErrInvalid)
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, mountErr("fsopen", "tmpfs", err)
	}
	defer unix.Close(fsfd)
	conf := [][2]string{{"source", "jail-record"}, {"mode", "0755"}}
	if m.Size > 0 {
		conf = append(conf, [2]string{"size", strconv.FormatInt(m.Size, 10)})
	}
	for _, kv := range conf {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return nil, mountErr("fsconfig "+kv[0], "tmpfs", err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return nil, mountErr("fsconfig create", "tmpfs", err)
	}
	// noexec, nosuid, nodev: the record holds text, never a program.
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return nil, mountErr("fsmount", "tmpfs", err)
	}
	defer unix.Close(mfd)
	// Attached under the stage before anything else: a mount still
	// detached when its last descriptor closes is dissolved then, with
	// an RCU grace period of its own.
	name := fmt.Sprintf("record%d", i)
	if err := unix.Mkdirat(stageFD, name, 0o700); err != nil {
		return nil, mountErr("mkdir", "stage/"+name, err)
	}
	if err := unix.MoveMount(mfd, "", stageFD, name, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return nil, mountErr("move_mount", "stage/"+name, err)
	}
	// 0444: nobody inside may write it, whatever its owner maps to (the
	// read-only mount says the same to root and to the owner's chmod).
	// A bare descriptor (os.NewFile of a blocking one stays out of Go's
	// poller, as createFile).
	fd, err := unix.Openat(mfd, m.File, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return nil, mountErr("open", "stage/"+name+"/"+m.File, err)
	}
	f := os.NewFile(uintptr(fd), m.File)
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	if err := f.Chmod(0o444); err != nil { // umask may have taken bits away; never added
		return fail(err)
	}
	if err := ensureTarget(m.Path, true); err != nil {
		return fail(err)
	}
	// The view inside: a clone of the mount (the same file system),
	// attached at Path and made read-only there; the staging mount the
	// handle was opened through stays writable, and goes with the old
	// root.
	cfd, err := unix.OpenTree(mfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return fail(mountErr("open_tree", "stage/"+name, err))
	}
	defer unix.Close(cfd)
	if err := attach(cfd, m.Path); err != nil {
		return fail(err)
	}
	if err := setAttr(m.Path, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, 0, false); err != nil {
		return fail(err)
	}
	return f, nil
}

// followLinks resolves symlinks in p (inside the sandbox's root) as far as
// they lead, returning the final, possibly missing, path.
func followLinks(p string) string {
	for i := 0; i < 16; i++ {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		l, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(p), l)
		}
		p = filepath.Clean(l)
	}
	return p
}
