package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// urgentLines: a listener gets the lines said before it came and each
// later one; the lines kept are bounded; a stopped listener gets nothing,
// even from a say already under way (an execNotices closed meanwhile must
// not panic on its closed queue).
func TestUrgentLines(t *testing.T) {
	var u urgentLines
	u.say("jail: one")
	var mu sync.Mutex
	var got []string
	soFar, stop := u.listen(func(l string) { mu.Lock(); got = append(got, l); mu.Unlock() })
	if len(soFar) != 1 || soFar[0] != "jail: one" {
		t.Fatalf("lines so far: %q", soFar)
	}
	u.say("jail: two")
	stop()
	u.say("jail: three")
	if len(got) != 1 || got[0] != "jail: two" {
		t.Fatalf("the listener got %q, want only the line said while it listened", got)
	}
	for i := 0; i < 2*maxUrgent; i++ {
		u.say(fmt.Sprintf("jail: %d", i))
	}
	soFar, _ = u.listen(func(string) {})
	if len(soFar) != maxUrgent+1 || !strings.Contains(soFar[maxUrgent], "more urgent notices") {
		t.Fatalf("not bounded to %d lines and a count: %d lines, last %q", maxUrgent, len(soFar), soFar[len(soFar)-1])
	}

	// An execNotices ended while lines are said: add after end is dropped.
	n := &execNotices{q: make(chan string, execQueue), done: make(chan struct{}), stop: func() {}}
	go func() {
		defer close(n.done)
		for range n.q {
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1000; i++ {
			n.add("jail: x")
		}
	}()
	n.end()
	wg.Wait()
}
