package fsrules

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkExpandHomeMany: the plan of an empty workspace with a home
// whose ~/.ssh/ holds n files (a browser profile, Python's user site): the
// hard-link check reads them all.
func BenchmarkExpandHomeMany(b *testing.B) {
	for _, n := range []int{0, 5_000, 20_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			base := tmp(b)
			ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
			manyFiles(b, filepath.Join(home, ".ssh/many"), n)
			mk(b, ws, "plain")
			in := Input{Workspace: ws, Home: home, Writable: []string{ws}}
			b.ResetTimer()
			for range b.N {
				if _, err := Expand(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
