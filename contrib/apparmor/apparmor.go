// Package apparmor holds jail's AppArmor profile (the file "jail" beside
// this one, shipped in contrib/ for packagers) and renders it for the path
// of a given binary, for `jail doctor --apparmor-profile`.
package apparmor

import (
	_ "embed"
	"fmt"
	"strings"
)

// Profile is contrib/apparmor/jail as shipped: it attaches to
// DefaultPath.
//
//go:embed jail
var Profile string

// DefaultPath is the binary path the shipped profile attaches to.
const DefaultPath = "/usr/local/bin/jail"

// For returns the profile attached to bin, an absolute path. AppArmor
// attachments are glob patterns, so a path with pattern or quoting
// characters, or white space, is refused rather than escaped.
func For(bin string) (string, error) {
	if !strings.HasPrefix(bin, "/") {
		return "", fmt.Errorf("apparmor profile: %q is not an absolute path", bin)
	}
	if strings.ContainsAny(bin, "*?[]{}^\"\\#,= \t\n\x00") {
		return "", fmt.Errorf("apparmor profile: the path %q holds characters AppArmor reads as a pattern; install jail under a plain path such as %s", bin, DefaultPath)
	}
	head := "profile jail " + DefaultPath + " "
	if !strings.Contains(Profile, head) {
		return "", fmt.Errorf("apparmor profile: the shipped profile lacks %q", head)
	}
	return strings.Replace(Profile, head, "profile jail "+bin+" ", 1), nil
}
