// Package agentcfg keeps agent configuration that names commands from being
// changed from inside the sandbox in a way that takes effect outside it.
//
// Agents must write their own state (Claude Code rewrites ~/.claude.json many
// times a session; Codex writes its folder trust into ~/.codex/config.toml;
// Gemini writes the sign-in choice into ~/.gemini/settings.json), so these
// files cannot simply be read-only. But the same files name commands that
// the agent's next run outside jail starts on the host: MCP servers, hooks,
// notify programs, status lines, credential helpers, environment variables,
// and the switches of the agent's own sandbox and approvals. The table
// (Files) lists, per agent, the files and their protected keys, as data.
//
// # How (design, with the evidence that decided it)
//
// Two designs were weighed: (a) the sandbox sees a private copy that jail
// merges back at exit, and (b) the file stays writable in place while the
// supervisor watches it and puts protected keys back the moment they change.
// The real CLIs decided it (observed with strace, Claude Code 2.1.197, Codex
// 0.171.0, Gemini CLI 0.61.0):
//
//   - Claude Code writes ~/.claude.json by write-temp-then-rename; when the
//     rename fails with EBUSY (the file is a bind mount, as with the README's
//     -w ~/.claude.json) it falls back to an in-place write, so either design
//     works for it.
//   - Codex writes ~/.codex/config.toml by write-temp-then-rename and has no
//     fallback: with the file bind-mounted (which (a) needs for a file inside
//     a writable directory), "Trust and continue" fails with "failed to
//     persist config.toml" and the user is stuck on the trust screen.
//   - Gemini CLI writes settings.json in place but trustedFolders.json by
//     rename, so (a) breaks its folder trust the same way.
//
// So jail uses (b): nothing is mounted over these files. The supervisor reads
// each file at start (the snapshot of its protected keys), watches its
// directory with inotify while the sandbox runs, and when a write changes a
// protected key it puts the snapshot's value back (a new file renamed into
// place; in place for a file that is itself a bind mount), keeps everything
// else the agent wrote, saves the agent's version in a quarantine directory
// under jail's state directory (nothing is lost), and reports it (an audit
// event at once, a notice at exit). A last check runs when the sandbox has
// ended, and at the next start for a supervisor that was killed before it
// could check. A file the agent creates loses its protected keys; a file it
// deletes that held protected keys comes back.
//
// The price of (b) is a window: between the agent's write and the revert a
// program on the host that reads the file sees the agent's version. The
// revert follows the inotify event (close after write, or a rename) within
// milliseconds; a writer that keeps the file open is checked at the latest
// 200 ms after its first write. An agent that rewrites the file in a loop
// reopens the window each time; what stays on the host after the run is the
// host's values. Changes to protected keys made on the host while a sandbox
// runs are reverted too (jail cannot tell who wrote); they are in the
// quarantine.
//
// The agent runs as the supervisor's user (a user's run): it can take that
// user's access away from a guarded file or a directory on its way (chmod
// a-w ~/.claude, chmod 000 settings.json). The supervisor owns all of them:
// a check refused that way gives itself the missing owner bits on the
// path, tries once more and puts the agent's modes back (unlock_linux.go),
// but for the owner's read on the file and read and search on the
// directories from the root down, which the last check gives back in any
// case (readableAgain): a loader reads an unreadable file as none, and
// the user's own restrictions in it would be gone outside jail.
// A write that still fails (a disk the agent filled) moves the agent's
// version aside, out of the loader's way, and leaves the target
// unsettled: the run's record stays (only its unsettled targets), and the
// next start, or jail gc, puts the host's version back and says so again
// while it cannot. A file jail could not put back is the agent's version
// whenever it was touched since: the next start's "changed after the run
// ended: left" rule is not for it.
//
// While the sandbox runs, a version that does not parse is taken for a
// write in progress (Claude Code rewrites ~/.claude.json in place, truncating
// first; Gemini CLI creates a file empty and locks it before renaming its
// content over it): it is put back only once it has stayed the same for
// Stale, and an empty file is left to the last check. A loader cannot run
// anything from a document it cannot parse either.
//
// A document jail cannot read (not JSON/TOML, nested too deep, too large,
// duplicate or "__proto__" keys it gained, a symlink or a FIFO in place of the
// file) is not merged: the host's version comes back whole. JSON is edited by
// splicing bytes, so comments, order and formatting stay; TOML is decoded
// and encoded again when a key must be put back, which drops its comments
// (the agent's version, with them, is in the quarantine).
//
// The cost of a check must not grow with what the agent keeps in the file
// (Claude Code's ~/.claude.json holds per-project state, megabytes for some
// users): the snapshot is parsed once per run, a version only as far as the
// protected keys can be (the rest is checked, duplicate keys included, but
// not built), an unchanged file is compared while it is read, and a large
// snapshot is kept beside the record raw (see jsonc.go, guard_linux.go).
//
// Files the agent never needs to write (.mcp.json, plugin and extension
// directories, .devcontainer/, .cursor/...) are read-only mounts instead:
// see package fsrules' built-in protections.
package agentcfg
