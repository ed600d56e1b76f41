// Package hostgit reads what git work inside the sandbox needs from the
// host, and nothing more: the top level of the work tree jail was started
// in (which becomes the workspace, so that git finds the repository from a
// subfolder) and the user's git identity (user.name, user.email), which
// passes as GIT_AUTHOR_*/GIT_COMMITTER_* variables instead of ~/.gitconfig,
// a file that may hold credential helpers, tokens in url rewrites and
// includes of other files; and the remotes of the repository that are
// repositories on this machine (LocalRemotes), for the note that names one
// the sandbox hides or keeps read-only.
//
// It does no kernel work: it walks directories, reads a repository's
// config with gitguard's parser (git's own reading of it), and runs the
// host's git read-only (git config --get).
package hostgit
