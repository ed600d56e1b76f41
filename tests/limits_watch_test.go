//go:build linux

package tests

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// limitsNodeBig allocates 64M at a time, touched, up to 1.5G (bounded: if
// the limit failed, the host would see at most that, briefly).
const limitsNodeBig = `const a=[]; for (let i=0;i<24;i++){ a.push(Buffer.alloc(64<<20, 1)); console.log("held", (i+1)*64) } console.log("ESCAPED")`

// node under --memory 512M: a small program runs normally (node reserves
// gigabytes of address space, which RLIMIT_AS refused: "Failed to reserve
// virtual memory for CodeRange"), and a big allocation is killed with 137.
// Without a cgroup (an ordinary user here) the kill comes from the
// supervisor's memory watch and says "watched, not kernel-enforced"; with
// one, from the kernel.
func TestLimitsMemoryNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if inCI() {
			t.Fatalf("node is needed (Debian package nodejs): %v", err)
		}
		t.Skip("node not installed")
	}
	small := run(t, runOpts{timeout: 60 * time.Second}, "--memory", "512M", "--", node, "-e", `console.log("small ok", process.memoryUsage().rss > 0)`)
	mustCode(t, small, 0)
	if !strings.Contains(small.stdout, "small ok true") || strings.Contains(small.stderr, "CodeRange") {
		t.Errorf("node -e small under --memory 512M:\n%s\n%s", small.stdout, small.stderr)
	}
	big := run(t, runOpts{timeout: 60 * time.Second}, "--memory", "512M", "--timeout", "45s", "--", node, "-e", limitsNodeBig)
	mustCode(t, big, 137)
	if strings.Contains(big.stdout, "ESCAPED") || strings.Contains(big.stdout, "held 640") {
		t.Errorf("node held more than 512M + one step:\n%s", limitsTail(big.stdout))
	}
	if !strings.Contains(big.stderr, "out of memory: limit 512M reached") {
		t.Errorf("no out-of-memory line:\n%s", big.stderr)
	}
	if !limitsCgroup(t) && !strings.Contains(big.stderr, "watched, not kernel-enforced") {
		t.Errorf("without a cgroup the kill must say it was watched, not kernel-enforced:\n%s", big.stderr)
	}
}
