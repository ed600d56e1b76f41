package userscopetest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// StartBus starts a private dbus-daemon for the test and returns its
// address (unix:path=...). The socket's directory is dir ("" = a temp dir);
// the socket is world-connectable so that a test running as root can let
// another uid use it. Without dbus-daemon the test fails under CI=true and
// skips otherwise.
func StartBus(t testing.TB, dir string) string {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("dbus-daemon is needed (Debian package dbus-daemon): %v", err)
		}
		t.Skip("dbus-daemon not installed")
	}
	if dir == "" {
		dir = t.TempDir()
	}
	sock := filepath.Join(dir, "bus")
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(busConfig, sock)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file="+conf, "--nofork", "--nopidfile", "--print-address")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("dbus-daemon said:\n%s", stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case a := <-line:
		if a == "" {
			t.Fatalf("dbus-daemon printed no address")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("dbus-daemon did not start")
	}
	os.Chmod(sock, 0o777)
	return "unix:path=" + sock
}

// Start is one StartTransientUnit the manager received.
type Start struct {
	Name, Mode string
	Props      map[string]dbus.Variant
}

// Manager is a fake systemd user manager. Set its fields before Serve.
type Manager struct {
	// OnStart decides a start: the control group the unit gets and the
	// job's result ("done", "failed", ...); nil = "/fake.slice/NAME", "done".
	// It runs before the reply, as systemd moves the PIDs before the job
	// completes.
	OnStart func(name string, pids []uint32) (cgroup, result string)
	// SignalFirst emits JobRemoved before replying to StartTransientUnit
	// (a reordering a client must survive).
	SignalFirst bool
	// NoSignal never emits JobRemoved (a wedged manager).
	NoSignal bool

	conn   *dbus.Conn
	mu     sync.Mutex
	starts []Start
	subs   int
	units  map[string]string // name -> control group
	jobID  uint32
}

// Serve connects the manager to the bus at address under the name
// org.freedesktop.systemd1.
func (m *Manager) Serve(t testing.TB, address string) {
	t.Helper()
	c, err := dbus.Connect(address)
	if err != nil {
		t.Fatalf("fake manager: connect %s: %v", address, err)
	}
	t.Cleanup(func() { c.Close() })
	m.conn = c
	m.units = map[string]string{}
	if err := c.Export(managerObj{m}, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"); err != nil {
		t.Fatal(err)
	}
	if r, err := c.RequestName("org.freedesktop.systemd1", dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("fake manager: own org.freedesktop.systemd1: %v %v", r, err)
	}
}

// Starts returns the StartTransientUnit calls so far.
func (m *Manager) Starts() []Start {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Start(nil), m.starts...)
}

// Subscribed returns how many Subscribe calls came.
func (m *Manager) Subscribed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.subs
}

type managerObj struct{ m *Manager }

// unitProp and auxUnit are the wire types a(sv) and a(sa(sv)).
type unitProp struct {
	Name  string
	Value dbus.Variant
}

type auxUnit struct {
	Name  string
	Props []unitProp
}

func (o managerObj) Subscribe() *dbus.Error {
	o.m.mu.Lock()
	o.m.subs++
	o.m.mu.Unlock()
	return nil
}

func (o managerObj) StartTransientUnit(name, mode string, props []unitProp, aux []auxUnit) (dbus.ObjectPath, *dbus.Error) {
	m := o.m
	st := Start{Name: name, Mode: mode, Props: map[string]dbus.Variant{}}
	for _, p := range props {
		st.Props[p.Name] = p.Value
	}
	pids, _ := st.Props["PIDs"].Value().([]uint32)
	cg, result := "/fake.slice/"+name, "done"
	if m.OnStart != nil {
		cg, result = m.OnStart(name, pids)
	}
	m.mu.Lock()
	m.starts = append(m.starts, st)
	m.jobID++
	id := m.jobID
	if result == "done" {
		m.units[name] = cg
		path := unitPath(name)
		m.conn.Export(unitObj{cg}, path, "org.freedesktop.DBus.Properties")
	}
	m.mu.Unlock()
	job := dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id))
	emit := func() {
		// Another job first: clients must wait for their own.
		m.conn.Emit("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.JobRemoved", id+1000, dbus.ObjectPath("/org/freedesktop/systemd1/job/other"), "other.service", "failed")
		m.conn.Emit("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.JobRemoved", id, job, name, result)
	}
	switch {
	case m.NoSignal:
	case m.SignalFirst:
		emit()
	default:
		go func() {
			time.Sleep(5 * time.Millisecond)
			emit()
		}()
	}
	return job, nil
}

func (o managerObj) GetUnit(name string) (dbus.ObjectPath, *dbus.Error) {
	o.m.mu.Lock()
	defer o.m.mu.Unlock()
	if _, ok := o.m.units[name]; !ok {
		return "", dbus.NewError("org.freedesktop.systemd1.NoSuchUnit", []any{"Unit " + name + " not loaded."})
	}
	return unitPath(name), nil
}

type unitObj struct{ cgroup string }

func (u unitObj) Get(iface, prop string) (dbus.Variant, *dbus.Error) {
	if iface == "org.freedesktop.systemd1.Scope" && prop == "ControlGroup" {
		return dbus.MakeVariant(u.cgroup), nil
	}
	return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.UnknownProperty", []any{iface + "." + prop})
}

// unitPath escapes a unit name as systemd does for object paths: every byte
// outside [A-Za-z0-9] becomes _XX.
func unitPath(name string) dbus.ObjectPath {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return dbus.ObjectPath("/org/freedesktop/systemd1/unit/" + b.String())
}
