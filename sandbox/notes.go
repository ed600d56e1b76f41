package sandbox

import "strings"

// mergeRootNotes joins notes that say the same thing about different roots
// ("ROOT: text", as fsrules writes them for each writable root) into one
// ("ROOT1, ROOT2: text"), at the place of the first: with -w a -w b the same
// list of missing names is not repeated once per path. A note that names no
// root of roots, or whose text is its own, stays as it is.
func mergeRootNotes(notes, roots []string) []string {
	type group struct {
		roots []string
		text  string
	}
	var out []*group
	byText := map[string]*group{}
	for _, n := range notes {
		root := ""
		for _, r := range roots {
			// The longest root that prefixes the note: a root may lie in
			// another (-w ~ -w ~/.cache).
			if len(r) > len(root) && strings.HasPrefix(n, r+": ") {
				root = r
			}
		}
		if root == "" {
			out = append(out, &group{text: n})
			continue
		}
		text := n[len(root)+2:]
		if g := byText[text]; g != nil {
			g.roots = append(g.roots, root)
			continue
		}
		g := &group{roots: []string{root}, text: text}
		byText[text] = g
		out = append(out, g)
	}
	merged := make([]string, 0, len(out))
	for _, g := range out {
		if len(g.roots) == 0 {
			merged = append(merged, g.text)
			continue
		}
		merged = append(merged, strings.Join(g.roots, ", ")+": "+g.text)
	}
	return merged
}
