// Package heartbeat touches a live run's record now and then, so that the
// next start tells by the record's modification time when a run whose
// supervisor was killed was last alive (a killed run's end is at most two
// beats after it). Used by the sentry's run record and credswap's record.
package heartbeat

import (
	"os"
	"time"
)

// Beat is one record's heartbeat.
type Beat struct {
	stop chan struct{}
	done chan struct{}
}

// Start touches the file at path every interval until Stop.
func Start(path string, every time.Duration) *Beat {
	b := &Beat{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case now := <-t.C:
				_ = os.Chtimes(path, now, now)
			}
		}
	}()
	return b
}

// Stop ends the heartbeat and waits for its last touch. Safe on nil.
func (b *Beat) Stop() {
	if b == nil {
		return
	}
	close(b.stop)
	<-b.done
}
