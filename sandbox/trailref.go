package sandbox

import (
	"fmt"
	"os"
	"strings"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/statedir"
)

// ResolveTrail maps what `jail audit` was given to a trail's path. "" or
// "latest": the newest trail in jail's audit directory. An existing file,
// or anything with a slash: that path. Otherwise a sandbox id (or pid) as
// jail ps shows it: a running sandbox's trail, wherever --audit put it, or
// a trail in the audit directory (a unique prefix of 4 or more characters
// does).
func ResolveTrail(ref string) (string, error) {
	if ref != "" && ref != "latest" {
		if fi, err := os.Stat(ref); err == nil && !fi.IsDir() || strings.ContainsRune(ref, '/') {
			return ref, nil
		}
		if p := runningTrail(ref); p != "" {
			return p, nil
		}
	}
	dir, err := statedir.Path(statedir.Audit)
	if err != nil {
		return "", err
	}
	if ref == "" || ref == "latest" {
		return audit.Latest(dir)
	}
	p, err := audit.FindID(dir, ref)
	if err != nil {
		return "", fmt.Errorf("%v (jail ps lists the running sandboxes; jail audit latest opens the newest trail)", err)
	}
	return p, nil
}
