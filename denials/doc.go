// Package denials keeps the sandbox's own record of what jail refused it, so
// that an agent (or its hooks) can read why something failed and adapt: one
// JSON object per line, appended by the supervisor, in a file the sandbox can
// read and never write.
//
// The file is at Path inside the sandbox, and $JAIL_DENIALS names it. Each
// line is an Entry:
//
//	{"time":"2026-11-30T14:02:11.123Z","kind":"net","target":"registry.example:443","reason":"not in allowlist","allow":"--allow-domain registry.example"}
//	{"time":"2026-11-30T14:02:12.456Z","kind":"exec","target":"/usr/bin/rm","argv":["rm","-rf","/"],"reason":"guard rail default:rm-recursive-root","allow":"--no-guard-rails"}
//
// JSON lines rather than plain text: every field can hold spaces, and a
// command line or path can hold a newline; JSON keeps one denial on one line
// and each field unambiguous for jq, Python or a shell hook, without a
// parser of jail's own. The keys are stable; new keys may appear.
//
// What a line holds is what the agent did (the destination it asked for,
// the command it ran, after jail's redaction of --env/--setenv values) and
// jail's verdict in words the agent may know: never an address the host
// resolved, another run's data, or anything about the host beyond the
// sandbox's view. The record is bounded (Writer's budget, DefaultBudget):
// past it one last line of kind "truncated" says so and further denials
// are only counted (the audit trail and the user's notices still have them).
//
// Where the file lives and why the agent cannot change it (a read-only bind
// of a private tmpfs whose only writable handle is the supervisor's) is the
// business of packages ns and sandbox; this package only writes lines to the
// io.Writer it is given.
package denials
