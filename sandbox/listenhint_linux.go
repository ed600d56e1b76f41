package sandbox

// This file: the hint that a server inside cannot be reached from the host.
// The sandbox's network namespace is its own (--net none, allow): a dev
// server the command starts (npm run dev on 5173, a Django app on 8000)
// listens where only the sandbox reaches, and the host's browser meets a
// closed port with no word of why. The exec audit's filter reports each
// listen (seccomp.ListenEvent); a server on a port of its own choosing,
// not published with -p, that still listens a moment later (not a test's
// server come and gone) is named once, with the flag that publishes it.

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/procnet"
	"github.com/jail-sandbox/jail/seccomp"
	"golang.org/x/sys/unix"
)

// ephemeralFrom is the first port of a new network namespace's ephemeral
// range (net.ipv4.ip_local_port_range, 32768-60999), which the sandbox's
// processes cannot change (CAP_NET_ADMIN in its namespace's owner): a port
// from there was chosen by the kernel (a test's server on port 0), not one
// a user would open in a browser.
const ephemeralFrom = 32768

// listenHints remembers the ports already named, and the sandbox's
// network namespace.
type listenHints struct {
	mu    sync.Mutex
	said  map[listenKey]bool
	netns uint64 // its inode, 0 until read
}

// listenKey is a port named, to the run (exec 0) or to one jail exec
// client (the host pid of its command's first exec): each exec's user
// hears of a server of its command, whoever heard of the port before.
type listenKey struct {
	port uint16
	exec int
}

// sandboxNetNS is the inode of the sandbox's network namespace (init's),
// read once; 0 where it cannot be read (no event then matches).
func (r *runner) sandboxNetNS() uint64 {
	r.listens.mu.Lock()
	defer r.listens.mu.Unlock()
	if r.listens.netns == 0 && r.sb != nil {
		var st unix.Stat_t
		if unix.Stat("/proc/"+strconv.Itoa(r.sb.Pid)+"/ns/net", &st) == nil {
			r.listens.netns = st.Ino
		}
	}
	return r.listens.netns
}

// onListen names a server the host cannot reach, once per port (and jail
// exec client): one in the sandbox's own network namespace (a sandbox
// nested inside has its own: its jail's refusal listeners on 80 and 443
// are no server of the command's, and no -p could publish them).
func (r *runner) onListen(ev seccomp.ListenEvent) {
	port := ev.Addr.Port()
	if ev.NetNS != r.sandboxNetNS() {
		return
	}
	r.listenedInside(port) // its refusals before it was up are no host's server missed (hostloop_linux.go)
	if !listenHintWanted(r.pol, r.degraded, port) {
		return
	}
	// Whose server: a jail exec'd command's is named to its client. Read
	// while the call waits, the caller surely there.
	execPid, to := r.timelyExecs.of(ev.Pid)
	key := listenKey{port, execPid}
	r.listens.mu.Lock()
	said := r.listens.said[key]
	if r.listens.said == nil {
		r.listens.said = map[listenKey]bool{}
	}
	r.listens.said[key] = true
	r.listens.mu.Unlock()
	if said {
		return
	}
	// A test's server on a fixed port comes and goes within the test; a
	// server a user would open stays. Named if it still listens a moment
	// later (the sandbox's own table: no copy of the socket is kept, which
	// would hold the port after the command closed it); else forgotten, so
	// that a later listen on the port is looked at again.
	time.AfterFunc(listenHintAfter, func() {
		select {
		case <-r.sb.Done():
			return
		default:
		}
		if !procnet.Listens(r.sb.Pid, port, nil) {
			r.listens.mu.Lock()
			delete(r.listens.said, key)
			r.listens.mu.Unlock()
			return
		}
		p := strconv.Itoa(int(port))
		// A running sandbox publishes nothing more: to a jail exec the
		// flag is for the sandbox's next start.
		how := "`publish` " + p + ":" + p + " makes it"
		if to != nil {
			how = "a sandbox started with `publish` " + p + ":" + p + " makes it"
		}
		n := notice.Notice{Kind: "net", Severity: notice.Info, Text: Spell(fmt.Sprintf(
			"a server inside listens on port %s (%s), which the host cannot reach: %s the host's 127.0.0.1:%s",
			p, ev.Addr, how, p))}
		// Timely: the user is opening the server now, not after the run.
		// A server a jail exec'd command started is named to that
		// command's client, where its user looks (the run's own notices,
		// its log and trail, still have it); the run's own command's, in
		// a terminal run, on its screen where that harms nothing.
		if to != nil {
			to(notice.Line(n.Text))
		} else {
			n.Timely = true
		}
		r.say(n)
	})
}

// listenHintAfter is how long a server must keep listening to be named.
const listenHintAfter = 500 * time.Millisecond

// listenHintWanted reports whether a server on port is worth naming: one
// the host cannot reach (the sandbox has a network namespace of its own:
// not --net host, not degraded), on a port a user chose (not 0, not an
// ephemeral one), not published already.
func listenHintWanted(p *policy.Policy, degraded bool, port uint16) bool {
	if p.Net == policy.NetHost || degraded || port == 0 || port >= ephemeralFrom {
		return false
	}
	for _, v := range append(append([]string(nil), p.Publish...), p.PublishIfFree...) {
		if s, err := netproxy.ParsePublish(v); err == nil && s.Port == port {
			return false
		}
	}
	return true
}
