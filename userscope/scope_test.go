package userscope

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeManager is an in-process Manager: it records the start and answers
// with the jobs the test scripts.
type fakeManager struct {
	subscribed bool
	name, mode string
	props      []Property
	startErr   error
	jobs       []Job // sent on JobRemoved when StartTransientUnit is called
	cgroup     string
	ch         chan Job
	closed     bool
}

func (f *fakeManager) Subscribe(context.Context) error { f.subscribed = true; return nil }
func (f *fakeManager) StartTransientUnit(_ context.Context, name, mode string, props []Property) (string, error) {
	if !f.subscribed {
		return "", errors.New("test: StartTransientUnit before Subscribe would lose the job's signal")
	}
	f.name, f.mode, f.props = name, mode, props
	if f.startErr != nil {
		return "", f.startErr
	}
	for _, j := range f.jobs {
		f.ch <- j // before the reply, as a fast manager may
	}
	return "/org/freedesktop/systemd1/job/7", nil
}
func (f *fakeManager) JobRemoved() <-chan Job { return f.ch }
func (f *fakeManager) ControlGroup(_ context.Context, unit string) (string, error) {
	if unit != f.name {
		return "", errors.New("no such unit")
	}
	return f.cgroup, nil
}
func (f *fakeManager) Close() error { f.closed = true; return nil }

func (f *fakeManager) dial(context.Context, string) (Manager, error) { return f, nil }

func newFake(jobs ...Job) *fakeManager {
	return &fakeManager{ch: make(chan Job, 8), jobs: jobs, cgroup: "/user.slice/app.slice/x.scope"}
}

func TestStartAsksForADelegatedScopeOfThisProcess(t *testing.T) {
	f := newFake(Job{Path: "/org/freedesktop/systemd1/job/6", Result: "failed"}, Job{Path: "/org/freedesktop/systemd1/job/7", Result: "done"})
	sc, err := Start(context.Background(), Options{Address: "unix:path=/x", Dial: f.dial})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Cgroup != f.cgroup || sc.Unit != f.name || !f.closed {
		t.Errorf("scope %+v (unit %q), closed %v", sc, f.name, f.closed)
	}
	if !strings.HasPrefix(f.name, "jail-run-"+itoa(os.Getpid())+"-") || !strings.HasSuffix(f.name, ".scope") || f.mode != "fail" {
		t.Errorf("unit %q mode %q", f.name, f.mode)
	}
	got := map[string]any{}
	for _, p := range f.props {
		got[p.Name] = p.Value
	}
	if pids, _ := got["PIDs"].([]uint32); len(pids) != 1 || int(pids[0]) != os.Getpid() {
		t.Errorf("PIDs = %v, want this process only", got["PIDs"])
	}
	if got["Delegate"] != true || got["CollectMode"] != "inactive-or-failed" {
		t.Errorf("properties = %v", got)
	}
}

func TestStartFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		f    *fakeManager
		want string
	}{
		{"job failed", newFake(Job{Path: "/org/freedesktop/systemd1/job/7", Result: "failed"}), "job failed"},
		{"refused", func() *fakeManager {
			f := newFake()
			f.startErr = errors.New("Access denied")
			return f
		}(), "Access denied"},
		{"no answer", newFake(Job{Path: "/org/freedesktop/systemd1/job/other", Result: "done"}), "no answer"},
		{"no control group", func() *fakeManager {
			f := newFake(Job{Path: "/org/freedesktop/systemd1/job/7", Result: "done"})
			f.cgroup = ""
			return f
		}(), "has no control group"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Start(context.Background(), Options{Address: "unix:path=/x", Dial: c.f.dial, Timeout: 200 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestAddress(t *testing.T) {
	dir := t.TempDir()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if a, err := Address(env(map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/given", "XDG_RUNTIME_DIR": dir}), 4242); a != "unix:path=/given" || err != nil {
		t.Errorf("explicit address: %q %v", a, err)
	}
	_, err := Address(env(map[string]string{"XDG_RUNTIME_DIR": dir}), 4242)
	if !errors.Is(err, ErrNoBus) || !strings.Contains(err.Error(), filepath.Join(dir, "bus")) || !strings.Contains(err.Error(), "/run/user/4242/bus") {
		t.Errorf("no bus: %v", err)
	}
	// A plain file named bus is not a bus.
	os.WriteFile(filepath.Join(dir, "bus"), nil, 0o600)
	if _, err := Address(env(map[string]string{"XDG_RUNTIME_DIR": dir}), 4242); !errors.Is(err, ErrNoBus) {
		t.Errorf("a regular file taken for the bus: %v", err)
	}
	os.Remove(filepath.Join(dir, "bus"))
	ln, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if a, err := Address(env(map[string]string{"XDG_RUNTIME_DIR": dir}), 4242); a != "unix:path="+filepath.Join(dir, "bus") || err != nil {
		t.Errorf("XDG_RUNTIME_DIR/bus: %q %v", a, err)
	}
	// No address at all: Start says so without dialling.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if _, err := os.Stat("/run/user/" + itoa(os.Getuid()) + "/bus"); err == nil {
		t.Skip("this host has a user bus for this uid")
	}
	if _, err := Start(context.Background(), Options{Dial: func(context.Context, string) (Manager, error) {
		t.Error("dialled without an address")
		return nil, errors.New("x")
	}}); !errors.Is(err, ErrNoBus) {
		t.Errorf("Start without a bus: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
