package sshagent

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func sshString(s string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
	return append(b, s...)
}

func msg(t byte, parts ...[]byte) []byte {
	return append([]byte{t}, bytes.Join(parts, nil)...)
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		msg     []byte
		name    string
		key     string
		allowed bool
		err     bool
	}{
		{msg(11), "REQUEST_IDENTITIES", "", true, false},
		// The fingerprint of the blob "key", as ssh-keygen -l would print
		// a key whose blob it is.
		{msg(13, sshString("key"), sshString("data"), []byte{0, 0, 0, 0}), "SIGN_REQUEST", "SHA256:LHDhK3oGRvkiefQnx7OOczTY5Tic/xZ6HcMOc/gmtoM", true, false},
		{msg(13, []byte{0, 0, 1}), "SIGN_REQUEST", "", false, true},
		{msg(13, []byte{0, 0, 0, 9, 'k'}), "SIGN_REQUEST", "", false, true},
		{msg(27, sshString("session-bind@openssh.com"), sshString("x")), "EXTENSION session-bind@openssh.com", "", true, false},
		{msg(27, sshString("query")), "EXTENSION query", "", false, false},
		{msg(27, sshString("restrict-destination-v00@openssh.com\n\x1b")), "EXTENSION restrict-destination-v00@openssh.com??", "", false, false},
		{msg(17, sshString("ssh-ed25519")), "ADD_IDENTITY", "", false, false},
		{msg(18), "REMOVE_IDENTITY", "", false, false},
		{msg(19), "REMOVE_ALL_IDENTITIES", "", false, false},
		{msg(22, sshString("pass")), "LOCK", "", false, false},
		{msg(23, sshString("pass")), "UNLOCK", "", false, false},
		{msg(25), "ADD_ID_CONSTRAINED", "", false, false},
		{msg(20), "ADD_SMARTCARD_KEY", "", false, false},
		{msg(200), "type 200", "", false, false},
		{nil, "", "", false, true},
	} {
		r, err := Judge(c.msg)
		if (err != nil) != c.err || (err != nil && !errors.Is(err, ErrMessage)) {
			t.Errorf("% x: error %v, want one: %v", c.msg, err, c.err)
		}
		if err == nil && (r.Name != c.name || r.Key != c.key || r.Allowed != c.allowed) {
			t.Errorf("% x: %+v, want %q %q allowed=%v", c.msg, r, c.name, c.key, c.allowed)
		}
	}
}

func FuzzJudge(f *testing.F) {
	f.Add(msg(11))
	f.Add(msg(13, sshString("key"), sshString("data"), []byte{0, 0, 0, 0}))
	f.Add(msg(27, sshString("session-bind@openssh.com")))
	f.Add(msg(17))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Judge(b)
		if err != nil {
			if !errors.Is(err, ErrMessage) {
				t.Fatalf("%v is not an ErrMessage", err)
			}
			return
		}
		if r.Allowed && !(b[0] == requestIdentities || b[0] == signRequest || b[0] == extension && r.Name == "EXTENSION session-bind@openssh.com") {
			t.Fatalf("% x allowed: %+v", b, r)
		}
	})
}

// fakeAgent answers every request with a reply of its own and records
// what reached it.
type fakeAgent struct {
	mu   sync.Mutex
	seen [][]byte
}

func (a *fakeAgent) serve(t *testing.T, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			for {
				m, err := readMessage(c)
				if err != nil {
					return
				}
				a.mu.Lock()
				a.seen = append(a.seen, m)
				a.mu.Unlock()
				reply := []byte{6} // SUCCESS
				switch m[0] {
				case requestIdentities:
					reply = msg(12, []byte{0, 0, 0, 0})
				case signRequest:
					reply = msg(14, sshString("signature"))
				}
				if writeMessage(c, reply) != nil {
					return
				}
			}
		}()
	}
}

// What would change the user's agent never reaches it: the client gets
// SSH_AGENT_FAILURE; what ssh needs passes and its answers come back; every
// request is reported, in order.
func TestRelay(t *testing.T) {
	dir := t.TempDir()
	agentLn, err := net.Listen("unix", filepath.Join(dir, "agent"))
	if err != nil {
		t.Fatal(err)
	}
	defer agentLn.Close()
	agent := &fakeAgent{}
	go agent.serve(t, agentLn)

	relayLn, err := net.Listen("unix", filepath.Join(dir, "relay"))
	if err != nil {
		t.Fatal(err)
	}
	defer relayLn.Close()
	var mu sync.Mutex
	var reports []Request
	r := &Relay{
		Dial:   func() (net.Conn, error) { return net.Dial("unix", filepath.Join(dir, "agent")) },
		Report: func(q Request) { mu.Lock(); reports = append(reports, q); mu.Unlock() },
	}
	go r.Serve(relayLn)

	c, err := net.Dial("unix", filepath.Join(dir, "relay"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask := func(m []byte) []byte {
		t.Helper()
		if err := writeMessage(c, m); err != nil {
			t.Fatal(err)
		}
		reply, err := readMessage(c)
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	sign := msg(13, sshString("key"), sshString("data"), []byte{0, 0, 0, 0})
	for _, step := range []struct {
		m     []byte
		reply byte
	}{
		{msg(17, sshString("ssh-ed25519"), sshString("evil")), agentFailure},
		{msg(11), 12},
		{msg(22, sshString("pass")), agentFailure},
		{sign, 14},
		{msg(19), agentFailure},
		{msg(27, sshString("session-bind@openssh.com")), 6},
		{msg(27, sshString("add-smartcard@x")), agentFailure},
	} {
		if got := ask(step.m); got[0] != step.reply {
			t.Errorf("request %d: reply %d, want %d", step.m[0], got[0], step.reply)
		}
	}
	agent.mu.Lock()
	var types []byte
	for _, m := range agent.seen {
		types = append(types, m[0])
	}
	agent.mu.Unlock()
	if !slices.Equal(types, []byte{11, 13, 27}) {
		t.Errorf("the agent saw requests %v, want 11 13 27", types)
	}
	mu.Lock()
	got := slices.Clone(reports)
	mu.Unlock()
	var names []string
	for _, q := range got {
		names = append(names, q.Name)
	}
	want := []string{"ADD_IDENTITY", "REQUEST_IDENTITIES", "LOCK", "SIGN_REQUEST", "REMOVE_ALL_IDENTITIES", "EXTENSION session-bind@openssh.com", "EXTENSION add-smartcard@x"}
	if !slices.Equal(names, want) {
		t.Errorf("reports %q, want %q", names, want)
	}
	if len(got) == len(want) && (got[3].Key != "SHA256:LHDhK3oGRvkiefQnx7OOczTY5Tic/xZ6HcMOc/gmtoM" || !got[3].Allowed || got[0].Allowed) {
		t.Errorf("reports %+v", got)
	}

	// A message over the bound ends the client, not the relay.
	bad := binary.BigEndian.AppendUint32(nil, MaxMessage+1)
	c.Write(bad)
	if _, err := readMessage(c); err == nil {
		t.Errorf("an oversized message was answered")
	}
	c2, err := net.Dial("unix", filepath.Join(dir, "relay"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := writeMessage(c2, msg(11)); err != nil {
		t.Fatal(err)
	}
	if m, err := readMessage(c2); err != nil || m[0] != 12 {
		t.Errorf("the relay after a bad client: %v %v", m, err)
	}
}
