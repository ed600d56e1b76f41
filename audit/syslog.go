package audit

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// SyslogPaths are the local syslog sockets NewSyslog tries, in order
// (systemd-journald and rsyslog listen on /dev/log).
var SyslogPaths = []string{"/dev/log", "/var/run/syslog", "/var/run/log"}

// ErrNoSyslog is returned by NewSyslog when no local syslog socket answers.
var ErrNoSyslog = errors.New("no local syslog socket (/dev/log): start systemd-journald or rsyslog, or drop `audit-syslog`")

// syslogTimeout bounds one datagram: a stalled journald must not hold the
// sink (the file writer never waits for sinks anyway).
const syslogTimeout = 100 * time.Millisecond

// Syslog is a Sink that sends each line to the local syslog as
// "<PRI>Mmm dd hh:mm:ss jail[PID]: LINE" (the format glibc syslog(3) uses
// on /dev/log), facility user, severity warning for deny, limit, kill,
// timeout and dropped events, info otherwise.
type Syslog struct {
	path string
	tag  string
	pid  int
	mu   sync.Mutex
	conn *net.UnixConn
}

// NewSyslog connects to the first of SyslogPaths that accepts a datagram
// connection. Call it in the supervisor, before starting init.
func NewSyslog() (Sink, error) {
	var errs []error
	for _, p := range SyslogPaths {
		s, err := NewSyslogAt(p)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: %w", ErrNoSyslog, errors.Join(errs...))
}

// NewSyslogAt connects to the unixgram socket at path.
func NewSyslogAt(path string) (*Syslog, error) {
	s := &Syslog{path: path, tag: "jail", pid: os.Getpid()}
	if err := s.connect(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Syslog) connect() error {
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: s.path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("connect to syslog: %w", err)
	}
	s.conn = c
	return nil
}

// Name implements Sink.
func (s *Syslog) Name() string { return "syslog" }

// WriteEvent implements Sink. It reconnects once if the daemon restarted.
func (s *Syslog) WriteEvent(typ string, line []byte) error {
	sev := 6 // LOG_INFO
	switch typ {
	case TypeDeny, TypeLimit, TypeKill, TypeTimeout, TypeDropped:
		sev = 4 // LOG_WARNING
	}
	const facility = 1 // LOG_USER
	msg := make([]byte, 0, len(line)+64)
	msg = append(msg, '<')
	msg = strconv.AppendInt(msg, facility*8+int64(sev), 10)
	msg = append(msg, '>')
	msg = time.Now().AppendFormat(msg, time.Stamp)
	msg = append(msg, ' ')
	msg = append(msg, s.tag...)
	msg = append(msg, '[')
	msg = strconv.AppendInt(msg, int64(s.pid), 10)
	msg = append(msg, "]: "...)
	msg = append(msg, line...)

	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if s.conn == nil {
			if err = s.connect(); err != nil {
				continue
			}
		}
		s.conn.SetWriteDeadline(time.Now().Add(syslogTimeout))
		if _, err = s.conn.Write(msg); err == nil {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			break // the daemon is alive but behind: do not reconnect-spin
		}
		s.conn.Close()
		s.conn = nil
	}
	return fmt.Errorf("send audit event to syslog %s: %w", s.path, err)
}

// Close implements Sink.
func (s *Syslog) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}
