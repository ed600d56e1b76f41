package seccomp

import (
	"slices"
	"testing"
)

// Warm goes through the exec answer's own reads (memFile, readString,
// readArgv): what it reads back of this process is what it put there.
func TestWarmReadsLikeAnAnswer(t *testing.T) {
	path, argv, err := warmRead()
	if err != nil {
		t.Fatal(err)
	}
	if path != "jail" || !slices.Equal(argv, []string{"jail"}) {
		t.Fatalf("warm read %q %q, want \"jail\" [\"jail\"]", path, argv)
	}
	Warm() // and the warm-up itself neither fails nor panics
}
