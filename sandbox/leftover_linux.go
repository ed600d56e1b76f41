package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Leftovers: what a supervisor makes on the host for the time of one run
// (a private TMPDIR in degraded mode) is named jail-<pid>-t<start tick>-KIND,
// so that jail gc can tell a dead supervisor's from a live one's: the pid is
// alive AND has the same start time (pid reuse cannot fool it).

func leftoverName(kind string) string {
	return fmt.Sprintf("jail-%d-t%d-%s", os.Getpid(), startTick(os.Getpid()), kind)
}

// parseLeftover reads pid and start tick from a jail-<pid>-t<tick>-... name.
func parseLeftover(name string) (pid int, tick uint64, ok bool) {
	rest, found := strings.CutPrefix(name, "jail-")
	if !found {
		return 0, 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) < 3 || !strings.HasPrefix(f[1], "t") {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	t, err2 := strconv.ParseUint(f[1][1:], 10, 64)
	if err1 != nil || err2 != nil || p <= 0 || strconv.Itoa(p) != f[0] {
		return 0, 0, false
	}
	return p, t, true
}

// supervisorAlive: pid runs and started at tick (tick 0: unknown, alive
// if the pid exists).
func supervisorAlive(pid int, tick uint64) bool {
	st := startTick(pid)
	if st == 0 {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err == nil && tick == 0
	}
	return tick == 0 || st == tick
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func jsonUnmarshal(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}
