// Package hostpath finds what the sandbox needs from the host so that a
// path works inside the way it does on the host: the symbolic links met on
// the way to it (each to be recreated at its own path, since the sandbox's
// hidden places are empty), and, for a command found on PATH, the file that
// runs, the interpreter its #! line names, and the install tree each needs.
//
// It only reads the host's file system; deciding what may be shown (hidden
// places, secrets) is the supervisor's. It imports no other jail package.
package hostpath
