package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/sshagent"
)

// noticeAgent: a request to the user's ssh agent the relay refused.
const noticeAgent = "agent-refused"

// startAgentRelay puts jail's relay (package sshagent) between the
// sandbox's ssh and the user's agent (--ssh-agent): it listens in jail's
// runtime directory and takes the place of the host agent's socket as the
// source of the plan's bind at agentSocket. stop closes it (and removes
// the socket). A spec without that bind needs no relay.
func (r *runner) startAgentRelay(spec *ns.Spec) (stop func(), err error) {
	i := slices.IndexFunc(spec.Mounts, func(m ns.Mount) bool { return m.Kind == ns.KindROBind && m.Path == agentSocket })
	if i < 0 {
		return func() {}, nil
	}
	upstream := spec.Mounts[i].Source
	dir, err := ensureRegistry()
	if err != nil {
		return nil, fmt.Errorf("ssh-agent relay: %w", err)
	}
	path := filepath.Join(dir, r.id+".agent")
	if len(path) >= maxSunPath {
		return nil, fmt.Errorf("ssh-agent relay: socket path %s is too long for a Unix socket", path)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("ssh-agent relay: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	// Why anyone may connect: started by root, the sandbox is host uid
	// 65534, and connect(2) needs write permission on the socket. The
	// registry directory (0700) keeps every other user of the host from
	// reaching it; inside, only the bind at agentSocket shows it.
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("ssh-agent relay: %w", err)
	}
	relay := &sshagent.Relay{
		// Why dial the host's socket anew for each client, by its path:
		// an agent restarted during the run (a new login) is found at
		// the same path.
		Dial:   func() (net.Conn, error) { return net.Dial("unix", upstream) },
		Report: r.agentRequest,
	}
	go relay.Serve(ln)
	spec.Mounts[i].Source = path
	return func() { ln.Close() }, nil
}

// agentRequest records each request of the sandbox's ssh to the user's
// agent, and says a refused one once.
func (r *runner) agentRequest(q sshagent.Request) {
	d := audit.DecisionAllow
	if !q.Allowed {
		d = audit.DecisionDeny
	}
	r.recordRun(audit.Agent{Request: q.Name, Key: q.Key, Decision: d})
	if !q.Allowed {
		r.notice(noticeAgent, q.Name, "refused the ssh agent request "+q.Name+": only listing your keys and signing with them reach your agent")
	}
}
