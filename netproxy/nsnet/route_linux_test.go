//go:build linux

package nsnet

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

const routeChildEnv = "NSNET_ROUTE_TEST_CHILD"

// TestLocalRouteMsgAsNetlinkLibrary: the raw request that --net none's
// refusal plumbing sends makes the same route the netlink library's
// RouteAdd made before (type local, scope host, proto boot, table local,
// dev lo, the fake range), and a second one is refused with EEXIST, in a
// new network namespace (the test binary re-executed as root of a new user
// namespace).
func TestLocalRouteMsgAsNetlinkLibrary(t *testing.T) {
	uid, gid := os.Getuid(), os.Getgid()
	c := exec.Command("/proc/self/exe", "-test.run=^TestLocalRouteChild$", "-test.v")
	c.Env = append(os.Environ(), routeChildEnv+"=1")
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	out, err := c.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		skipOrFail(t, "cannot create user+net namespaces here: %v", err)
		return
	}
	if err != nil || !strings.Contains(string(out), "ROUTE-OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestLocalRouteChild is the child of TestLocalRouteMsgAsNetlinkLibrary.
func TestLocalRouteChild(t *testing.T) {
	if os.Getenv(routeChildEnv) == "" {
		// Not the re-executed child: nothing to do here (no skip: CI
		// refuses skips it has not allowed; the parent is the check).
		return
	}
	if err := localRouteChild(); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ROUTE-OK")
}

func localRouteChild() error {
	lo, err := loopbackUp()
	if err != nil {
		return err
	}
	mine, lib := netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("198.20.0.0/16")
	if err := addLocalRoute(lo, mine); err != nil {
		return fmt.Errorf("addLocalRoute: %w", err)
	}
	if err := addLocalRoute(lo, mine); !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("addLocalRoute again: %v, want EEXIST", err)
	}
	if err := netlink.RouteAdd(&netlink.Route{Family: unix.AF_INET, Type: unix.RTN_LOCAL, Scope: unix.RT_SCOPE_HOST,
		Dst: ipnet(lib.Addr(), lib.Bits()), LinkIndex: lo, Table: unix.RT_TABLE_LOCAL}); err != nil {
		return fmt.Errorf("netlink.RouteAdd: %w", err)
	}
	rs, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_LOCAL}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return err
	}
	got := map[string]netlink.Route{}
	for _, r := range rs {
		if r.Dst != nil {
			got[r.Dst.String()] = r
		}
	}
	a, ok1 := got[mine.String()]
	b, ok2 := got[lib.String()]
	if !ok1 || !ok2 {
		return fmt.Errorf("routes in table local: %v", rs)
	}
	a.Dst, b.Dst = nil, nil
	if as, bs := fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b); as != bs || a.Protocol != unix.RTPROT_BOOT || a.Type != unix.RTN_LOCAL ||
		a.Scope != unix.RT_SCOPE_HOST || a.Table != unix.RT_TABLE_LOCAL || a.LinkIndex != lo {
		return fmt.Errorf("raw route %s\n     library route %s", as, bs)
	}
	return nil
}
