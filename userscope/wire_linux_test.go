package userscope_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/userscope"
	"github.com/jail-sandbox/jail/userscope/userscopetest"
)

// Over the wire, against a private dbus-daemon and a fake systemd user
// manager: the call's D-Bus types are what systemd expects (PIDs "au",
// Delegate "b"), Subscribe comes first, the client waits for its own job
// (another job's signal comes first) even when the signal arrives before
// the reply, and reads the ControlGroup property of the unit.
func TestWireStartTransientScope(t *testing.T) {
	for _, first := range []bool{false, true} {
		addr := userscopetest.StartBus(t, "")
		m := &userscopetest.Manager{SignalFirst: first, OnStart: func(name string, pids []uint32) (string, string) {
			return "/user.slice/user-1000.slice/user@1000.service/app.slice/" + name, "done"
		}}
		m.Serve(t, addr)
		sc, err := userscope.Start(context.Background(), userscope.Options{Address: addr})
		if err != nil {
			t.Fatalf("signal first %v: %v", first, err)
		}
		if !strings.HasSuffix(sc.Cgroup, "/app.slice/"+sc.Unit) {
			t.Errorf("scope %+v", sc)
		}
		st := m.Starts()
		if len(st) != 1 || st[0].Name != sc.Unit || st[0].Mode != "fail" || m.Subscribed() != 1 {
			t.Fatalf("manager saw %+v, %d subscriptions", st, m.Subscribed())
		}
		p := st[0].Props
		if p["PIDs"].Signature().String() != "au" || p["Delegate"].Signature().String() != "b" {
			t.Errorf("wire types: PIDs %s, Delegate %s", p["PIDs"].Signature(), p["Delegate"].Signature())
		}
		if pids, _ := p["PIDs"].Value().([]uint32); len(pids) != 1 || int(pids[0]) != os.Getpid() {
			t.Errorf("PIDs = %v", p["PIDs"])
		}
		if d, _ := p["Delegate"].Value().(bool); !d {
			t.Errorf("Delegate = %v", p["Delegate"])
		}
	}
}

// The failures jail tells apart: no bus, a bus without a manager, a job that
// fails, a manager that never answers.
func TestWireFailures(t *testing.T) {
	dir := t.TempDir()
	_, err := userscope.Start(context.Background(), userscope.Options{Address: "unix:path=" + filepath.Join(dir, "nothing")})
	if !errors.Is(err, userscope.ErrNoBus) {
		t.Errorf("no daemon: %v", err)
	}
	addr := userscopetest.StartBus(t, "")
	_, err = userscope.Start(context.Background(), userscope.Options{Address: addr})
	if !errors.Is(err, userscope.ErrNoManager) {
		t.Errorf("bus without a manager: %v", err)
	}
	m := &userscopetest.Manager{OnStart: func(string, []uint32) (string, string) { return "", "failed" }}
	m.Serve(t, addr)
	if _, err = userscope.Start(context.Background(), userscope.Options{Address: addr}); err == nil || !strings.Contains(err.Error(), "job failed") {
		t.Errorf("failed job: %v", err)
	}
	addr2 := userscopetest.StartBus(t, "")
	(&userscopetest.Manager{NoSignal: true}).Serve(t, addr2)
	start := time.Now()
	if _, err = userscope.Start(context.Background(), userscope.Options{Address: addr2, Timeout: 300 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("silent manager: %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("Start took %v past its timeout", time.Since(start))
	}
}
