package sandbox

import (
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// This file: a notice when the sandbox runs sudo (or su, doas, pkexec).
// Agents reach for `sudo apt-get install` when a tool is missing. Inside
// jail it cannot work, by design (no_new_privs, every mount nosuid, no
// capability; started by root, the sandbox's user is nobody), and sudo's
// own words send the user the wrong way: "The "no new privileges" flag is
// set ... you may need to adjust the container configuration to disable
// the flag" as an ordinary user, "/etc/sudo.conf is owned by uid 65534,
// should be 0" and "no valid sudoers sources found" when root started
// jail (session 40). One line says why and what to do instead.

// noticePrivilege groups the notices of set-id programs run inside.
const noticePrivilege = "privilege"

// privilegePrograms are the set-id programs whose job is to run a command
// as another user, root above all.
var privilegePrograms = map[string]bool{
	"sudo": true, "sudoedit": true, "sudo-rs": true, "su": true, "su-rs": true,
	"doas": true, "pkexec": true,
}

// notePrivilegeExec says, once for each such program a run executes, that it
// cannot raise privileges inside. Only for the file set-user-ID as the
// sandbox sees it (its mode read through the process's own root while the
// exec waits for its answer): a shim of that name that runs the command
// itself, as some images have, works and is not named.
func (r *runner) notePrivilegeExec(pid int, path string) {
	name := filepath.Base(path)
	if !privilegePrograms[name] || !filepath.IsAbs(path) {
		return
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid)+"/root"+path, &st); err != nil || st.Mode&unix.S_ISUID == 0 {
		return
	}
	r.notice(noticePrivilege, name, name+" cannot work inside the sandbox, whatever it says next: nothing there can raise privileges (no_new_privs, nosuid mounts, no capabilities); do what it was for on the host, or without root (a tool installed into the workspace)")
}
