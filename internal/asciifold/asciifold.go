// Package asciifold folds ASCII letters to lower case and leaves every
// other byte alone: the built-in protections match names that way
// (SERVER.PEM, .ENV; a case-insensitive filesystem's .BASHRC), and so must
// everything that judges a name by them (package fsrules' walk, the
// sentinel's globs, gitguard's exit check), so that no two disagree on
// what a name is.
package asciifold

// Lower folds A-Z to a-z and keeps every other byte, so lengths and byte
// offsets are kept (non-ASCII names are matched as written). It does not
// allocate when s has no upper-case ASCII letter.
func Lower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
