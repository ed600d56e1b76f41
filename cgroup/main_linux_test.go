package cgroup

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// childEnv selects a child role when the test binary re-executes itself.
const childEnv = "JAIL_CGROUP_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "memhog":
		waitGo()
		// Touch 256 MiB, 1 MiB at a time; under a 64M limit this must die.
		var keep [][]byte
		for i := 0; i < 256; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep), "MiB")
		os.Exit(0)
	case "spin":
		waitGo()
		d, _ := time.ParseDuration(os.Getenv("SPIN_FOR"))
		var stop atomic.Bool
		for i := 0; i < runtime.NumCPU(); i++ {
			go func() {
				for !stop.Load() {
				}
			}()
		}
		time.Sleep(d)
		stop.Store(true)
		os.Exit(0)
	case "unpriv":
		os.Exit(unprivMain())
	default:
		fmt.Fprintln(os.Stderr, "unknown child role", os.Getenv(childEnv))
		os.Exit(2)
	}
}

// waitGo blocks until the parent has put us into the cgroup and writes a line.
func waitGo() {
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// securityEnv: security tests may skip outside CI when the kernel or user
// setup lacks a feature, but must fail under CI=true.
func requireOrSkip(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI: %s", why)
	}
	t.Skip(why)
}

func itoa(n int) string { return strconv.Itoa(n) }

func sysProcCgroup(fd int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
}
