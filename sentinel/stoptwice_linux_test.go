package sentinel

import (
	"testing"
	"time"
)

// TestSecondStopWaitsForTheLoop: the run's end stops the watch in the
// background and its exit check calls Stop again: that second Stop
// returns only once the watch loop has ended (it returned at once when the
// first had taken the file, and the check could run beside the loop).
// Seen failing with the second Stop returning early.
func TestSecondStopWaitsForTheLoop(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 50; i++ {
		s := New(Config{Dir: h.qdir, Roots: []string{h.root}})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		go s.Stop()
		// Wait until the background Stop has taken the file.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Microsecond) {
			s.mu.Lock()
			taken := s.file == nil
			s.mu.Unlock()
			if taken {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the background Stop did not take the file")
			}
		}
		s.Stop()
		select {
		case <-done:
		default:
			t.Fatalf("round %d: the second Stop returned before the watch loop ended", i)
		}
		s.Close()
	}
}
