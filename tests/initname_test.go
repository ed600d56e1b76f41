//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// On the host, a sandbox's init is named jail-init (ps, top), not after its
// exec path: the lean init is exec'd as /proc/self/fd/4 and was named "4",
// jail itself re-exec'd as /proc/self/exe was named "exe".
func TestInitNamedOnHost(t *testing.T) {
	sup := gcStart(t, workspace(t), nil, jail(t), "--", "sleep", "30")
	var names []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		names = names[:0]
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(sup.Process.Pid), "task", "*", "children"))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, pid := range strings.Fields(string(b)) {
				c, err := os.ReadFile(filepath.Join("/proc", pid, "comm"))
				if err == nil {
					names = append(names, strings.TrimSpace(string(c)))
				}
			}
		}
		for _, n := range names {
			if n == "jail-init" {
				return
			}
		}
	}
	t.Fatalf("no child of the supervisor is named jail-init: %q", names)
}
