// Package hostgit reads what git work inside the sandbox needs from the
// host, and nothing more: the top level of the work tree jail was started
// in (which becomes the workspace, so that git finds the repository from a
// subfolder) and the user's git identity (user.name, user.email), which
// passes as GIT_AUTHOR_*/GIT_COMMITTER_* variables instead of ~/.gitconfig,
// a file that may hold credential helpers, tokens in url rewrites and
// includes of other files.
//
// It imports no other jail package and does no kernel work: it walks
// directories and runs the host's git read-only (git config --get).
package hostgit
