// Package gitguard knows which files make git execute code or choose its
// repository, and decides what must not change in the git directories of the
// trees an agent can write. It is pure logic over the host filesystem: it
// reads files and directories, never mounts, watches or moves anything.
//
// What git honours beyond objects and refs (git 2.39): in a git dir, config,
// config.worktree, commondir (redirects the common dir: config and hooks come
// from there), hooks/, the legacy remotes/ and branches/, and
// objects/info/alternates; worktrees/NAME/{commondir,gitdir,config.worktree}
// for linked worktrees; modules/NAME/ (a submodule's git dir, itself all of
// the above); a .git FILE ("gitdir: PATH") anywhere in a work tree; the
// checkout of every gitlink (mode 160000) of an index, whose own .git git
// status at the top of the work tree reads (see gitlink.go); a bare
// repository (HEAD, objects/, refs/) found by walking up from the current
// directory; and, through configuration, core.hooksPath, include.path,
// includeIf.*.path and every program-valued key (core.fsmonitor,
// core.sshCommand, filters, diff drivers, aliases, ...). Hook managers read
// files of their own from the work tree (.husky/, lefthook.yml,
// .pre-commit-config.yaml, .overcommit.yml).
//
// Scan (at start) turns that into a Plan: what to mount read-only, what to
// hide, which absent paths must not appear, which directories to observe,
// and the verified worktree common dir that stays writable. A Guard (built
// by Scan, serializable for the next start after a crash) judges what
// appears later: a new .git entry, a git init, a new worktree or submodule
// git dir; Sweep does the same over whole trees at exit (SweepDirs through a
// DirReader, package dircache, that need not read a directory unchanged
// since it was last listed). The same walk judges the caller's Names, other
// protected file names a host program loads from its directory (package
// fsrules' ExitNames), made during the run at any depth; with NoGit (git
// trusted) it judges only those. Decisions are
// Findings; moving things out of the tree is the caller's (package
// sentinel).
//
// The parsers (ParseConfig, ParseGitFile, ParseCommondir) follow git's own
// code (config.c, setup.c) byte for byte where a difference could make jail
// accept what git reads otherwise; anything they cannot read the way git
// does is treated as unsafe.
package gitguard
