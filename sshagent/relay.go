// Package sshagent relays the ssh agent protocol (draft-miller-ssh-agent,
// OpenSSH's PROTOCOL.agent) between ssh inside the sandbox and the user's
// agent on the host, one request at a time, so that git over ssh works
// while the keys stay outside.
//
// Only what a client needs to authenticate passes: listing the keys
// (REQUEST_IDENTITIES), signing with one (SIGN_REQUEST) and binding a key
// to the session being authenticated (the session-bind@openssh.com
// extension, which only narrows what a forwarded agent will sign).
// Everything else is answered with SSH_AGENT_FAILURE without reaching the
// agent: adding a key (a key of the sandbox's choosing that the user's
// next ssh would offer), removing keys, locking the agent with a
// passphrase the user does not know, smartcard keys, and any extension
// jail does not know. Each request is reported (Relay.Report), allowed or
// not, for the audit trail.
//
// The relay also carries the agent across the sandbox's user namespace:
// OpenSSH's agent answers only peers of its own uid (or root), and a
// sandbox started by root runs as nobody.
package sshagent

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// MaxMessage bounds a message either way (OpenSSH's AGENT_MAX_LEN).
const MaxMessage = 256 << 10

// MaxClients bounds the connections served at once: each holds a
// goroutine and a connection to the agent.
const MaxClients = 16

// Message numbers (draft-miller-ssh-agent, section 6.1).
const (
	agentFailure      = 5
	requestIdentities = 11
	signRequest       = 13
	extension         = 27
)

// names are the requests a client may send, for reports.
var names = map[byte]string{
	1: "RSA1 REQUEST_IDENTITIES", 3: "RSA1 CHALLENGE", 9: "RSA1 REMOVE_ALL",
	requestIdentities: "REQUEST_IDENTITIES", signRequest: "SIGN_REQUEST",
	17: "ADD_IDENTITY", 18: "REMOVE_IDENTITY", 19: "REMOVE_ALL_IDENTITIES",
	20: "ADD_SMARTCARD_KEY", 21: "REMOVE_SMARTCARD_KEY", 22: "LOCK", 23: "UNLOCK",
	25: "ADD_ID_CONSTRAINED", 26: "ADD_SMARTCARD_KEY_CONSTRAINED", extension: "EXTENSION",
}

// allowedExtensions are the extensions passed to the agent.
var allowedExtensions = map[string]bool{"session-bind@openssh.com": true}

// Request is one request of the sandbox's ssh, as reported.
type Request struct {
	// Name is the request (SIGN_REQUEST, ADD_IDENTITY; "EXTENSION name";
	// "type N" for a number the protocol does not name).
	Name string
	// Key is the fingerprint of the key a SIGN_REQUEST names
	// (SHA256:..., as ssh-keygen -l prints it).
	Key string
	// Allowed says the request went to the agent.
	Allowed bool
}

// ErrMessage is wrapped by the errors of a message that does not parse.
var ErrMessage = errors.New("bad agent message")

// Judge decides one request, msg being a message without its length: its
// type first, then its contents.
func Judge(msg []byte) (Request, error) {
	if len(msg) == 0 {
		return Request{}, fmt.Errorf("%w: empty", ErrMessage)
	}
	t := msg[0]
	name, ok := names[t]
	if !ok {
		name = fmt.Sprintf("type %d", t)
	}
	r := Request{Name: name}
	switch t {
	case requestIdentities:
		r.Allowed = true
	case signRequest:
		blob, _, err := readString(msg[1:])
		if err != nil {
			return r, err
		}
		sum := sha256.Sum256(blob)
		r.Key = "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
		r.Allowed = true
	case extension:
		ext, _, err := readString(msg[1:])
		if err != nil {
			return r, err
		}
		r.Name = "EXTENSION " + printable(ext)
		r.Allowed = allowedExtensions[string(ext)]
	}
	return r, nil
}

// readString reads an SSH string (uint32 length, bytes) from b.
func readString(b []byte) (s, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%w: short string", ErrMessage)
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("%w: string of %d bytes in %d", ErrMessage, n, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}

// printable bounds an extension's name for a report: at most 64 bytes of
// printable ASCII, anything else as '?'.
func printable(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}

// readMessage reads one length-prefixed message of at most MaxMessage.
func readMessage(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > MaxMessage {
		return nil, fmt.Errorf("%w: length %d", ErrMessage, n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

func writeMessage(w io.Writer, msg []byte) error {
	b := make([]byte, 4+len(msg))
	binary.BigEndian.PutUint32(b, uint32(len(msg)))
	copy(b[4:], msg)
	_, err := w.Write(b)
	return err
}

// Relay serves the sandbox's side of the agent.
type Relay struct {
	// Dial connects to the user's agent (for each client, at its first
	// request the agent is to see).
	Dial func() (net.Conn, error)
	// Report, when set, is called for each request, in order, before
	// it is answered.
	Report func(Request)

	mu      sync.Mutex
	clients int
}

// Serve accepts clients on ln until it is closed.
func (r *Relay) Serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		r.mu.Lock()
		full := r.clients >= MaxClients
		if !full {
			r.clients++
		}
		r.mu.Unlock()
		if full {
			c.Close() // ssh then goes on without the agent
			continue
		}
		go func() {
			defer func() {
				r.mu.Lock()
				r.clients--
				r.mu.Unlock()
			}()
			r.serve(c)
		}()
	}
}

// serve answers one client until it hangs up, or its agent does, or a
// message does not parse.
func (r *Relay) serve(c net.Conn) {
	defer c.Close()
	var up net.Conn
	defer func() {
		if up != nil {
			up.Close()
		}
	}()
	for {
		msg, err := readMessage(c)
		if err != nil {
			return
		}
		req, err := Judge(msg)
		if err != nil {
			req.Allowed = false
		}
		if r.Report != nil {
			r.Report(req)
		}
		if !req.Allowed {
			if writeMessage(c, []byte{agentFailure}) != nil {
				return
			}
			continue
		}
		if up == nil {
			if up, err = r.Dial(); err != nil {
				up = nil
				_ = writeMessage(c, []byte{agentFailure})
				return
			}
		}
		if writeMessage(up, msg) != nil {
			return
		}
		reply, err := readMessage(up)
		if err != nil {
			return
		}
		if writeMessage(c, reply) != nil {
			return
		}
	}
}
