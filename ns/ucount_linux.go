package ns

import (
	"fmt"
	"strconv"
	"strings"
)

// userSysctlDir holds the limits of the calling process's user namespace
// (the kernel picks the table by current_user_ns()).
const userSysctlDir = "/proc/sys/user/"

// setUserNSLimits writes the per-user counter limits of the sandbox's user
// namespace. They are checked at every level of the namespace chain, so
// the host user's own count can then never be exhausted from inside; the
// agent cannot raise them (writing needs CAP_SYS_RESOURCE in this
// namespace, which init drops next). Fails closed: a limit that cannot
// be set stops the sandbox.
func setUserNSLimits(limits []UserNSLimit) error {
	for _, l := range limits {
		if !strings.HasPrefix(l.Name, "max_") || strings.ContainsAny(l.Name, "/.") {
			return fmt.Errorf("user namespace limit %q: not a /proc/sys/user/max_* name", l.Name)
		}
		p := userSysctlDir + l.Name
		if err := writeProc(p, strconv.FormatUint(l.Value, 10)); err != nil {
			return fmt.Errorf("set per-user limit %s=%d: %w", p, l.Value, err)
		}
	}
	return nil
}
