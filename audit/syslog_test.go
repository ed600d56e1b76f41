package audit

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

func fakeSyslog(t *testing.T) (*net.UnixConn, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sl") // short: sun_path is 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "log")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

var syslogRE = regexp.MustCompile(`^<(\d+)>[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d jail\[\d+\]: (\{.*\})$`)

// Every line reaches the fake /dev/log, byte-identical to the file's line,
// with a severity that flags denials.
func TestSyslogSinkMirrorsFile(t *testing.T) {
	l, sock := fakeSyslog(t)
	s, err := NewSyslogAt(sock)
	if err != nil {
		t.Fatal(err)
	}
	w, path := newTestWriter(t, 64)
	w.AddSink(s)
	w.Record(Exec{PID: 1, Path: "/bin/ls", Argv: []string{"ls"}, Decision: DecisionAllow})
	w.Record(Deny{Layer: "landlock", What: "path", Target: "/etc/shadow"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(path)
	want := lines(file)
	wantPri := []string{"14", "12"} // user.info, user.warning
	buf := make([]byte, 65536)
	for i := range want {
		l.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := l.Read(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		m := syslogRE.FindSubmatch(buf[:n])
		if m == nil {
			t.Fatalf("bad syslog datagram %q", buf[:n])
		}
		if string(m[1]) != wantPri[i] || !bytes.Equal(m[2], want[i]) {
			t.Errorf("datagram %d: pri %s line %s; want pri %s line %s", i, m[1], m[2], wantPri[i], want[i])
		}
	}
}

// A syslog that stops reading must neither stall the file nor lose events
// silently: the file gets every event plus a dropped event for the sink.
func TestSyslogStalledDoesNotBlockFile(t *testing.T) {
	_, sock := fakeSyslog(t) // never read
	s, err := NewSyslogAt(sock)
	if err != nil {
		t.Fatal(err)
	}
	w, path := newTestWriter(t, QueueSize)
	w.AddSink(s)
	const n = 6000 // more than the socket queue and the sink queue hold
	start := time.Now()
	for i := 0; i < n; i++ {
		w.Record(Exec{PID: i, Path: "/bin/x", Decision: DecisionAllow})
	}
	w.Sync()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("file writing took %v with a stalled syslog", d)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	res := mustVerifyOK(t, b)
	recs, _, _ := ReadAll(bytes.NewReader(b))
	execs, sinkDrops := 0, uint64(0)
	for _, r := range recs {
		switch r.Type {
		case TypeExec:
			execs++
		case TypeDropped:
			var d Dropped
			r.Decode(&d)
			if d.Sink != "syslog" {
				t.Errorf("file lost events: %s", r.Raw)
			}
			sinkDrops += d.Count
		}
	}
	if execs != n || sinkDrops == 0 || res.Dropped != sinkDrops {
		t.Fatalf("execs %d (want %d), syslog drops recorded %d", execs, n, sinkDrops)
	}
}

func TestNewSyslogNoSocket(t *testing.T) {
	old := SyslogPaths
	defer func() { SyslogPaths = old }()
	SyslogPaths = []string{filepath.Join(t.TempDir(), "nope")}
	if _, err := NewSyslog(); !errors.Is(err, ErrNoSyslog) {
		t.Fatalf("err = %v, want ErrNoSyslog", err)
	}
}
