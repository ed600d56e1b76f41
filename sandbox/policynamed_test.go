package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

// Starts naming files at once each read the record and wrote it back: one
// start's name was lost, and a later run not given its flag could write
// that file again. Under the record's lock every name stays. Seen failing
// with recordPolicyNamed's lock taken out (main's read-modify-write): 5 or
// 6 of 16 names kept, three runs of three.
func TestRecordPolicyNamedConcurrent(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("srt-%d.json", i))
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := recordPolicyNamed(state, []policy.PolicyFile{{Path: p, From: "--settings"}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if rec := readPolicyNamed(state); len(rec) != n {
		t.Fatalf("%d of %d names recorded: %v", len(rec), n, rec)
	}
}
