package sandbox

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/session"
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
	n := &execNotices{q: make(chan session.Reply, execQueue), done: make(chan struct{}), stop: func() {}}
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
			n.addTimely("jail: y")
		}
	}()
	n.end()
	wg.Wait()
}

// timelyExecs: a process's timely lines go to the client listening on its
// session's or its process group's leader, none once it stopped, none for
// a process of neither (the run's own command) or one gone.
func TestTimelyExecs(t *testing.T) {
	var te timelyExecs
	if _, fn := te.of(os.Getpid()); fn != nil {
		t.Fatal("a client with none listening")
	}
	pgrp := syscall.Getpgrp()
	var got []string
	stop := te.listen(pgrp, func(line string) { got = append(got, line) })
	leader, fn := te.of(os.Getpid())
	if fn == nil || leader != pgrp {
		t.Fatalf("no client for a process of group %d (leader %d)", pgrp, leader)
	}
	fn("jail: x")
	if len(got) != 1 {
		t.Fatalf("got %q", got)
	}
	other := te.listen(pgrp+1_000_000, func(string) {})
	defer other()
	if _, fn := te.of(1<<22 + 7); fn != nil {
		t.Fatal("a client for a process that is not there")
	}
	stop()
	if _, fn := te.of(os.Getpid()); fn != nil {
		t.Fatal("a client after it stopped listening")
	}
}
