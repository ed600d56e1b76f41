package ns

import (
	"fmt"
	"os"
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
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("set per-user limit: %w", err)
		}
		_, err = f.WriteString(strconv.FormatUint(l.Value, 10))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("set per-user limit %s=%d: %w", p, l.Value, err)
		}
	}
	return nil
}
