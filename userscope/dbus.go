package userscope

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"
)

const (
	busName     = "org.freedesktop.systemd1"
	managerPath = dbus.ObjectPath("/org/freedesktop/systemd1")
	managerIf   = "org.freedesktop.systemd1.Manager"
	scopeIf     = "org.freedesktop.systemd1.Scope"
)

// busManager is Manager over a private connection to the user bus.
type busManager struct {
	conn *dbus.Conn
	sigs chan *dbus.Signal
	jobs chan Job
}

// dialBus connects (EXTERNAL auth, Hello) within ctx: godbus's handshake
// takes no context, so it runs aside and a wedged bus is abandoned.
func dialBus(ctx context.Context, address string) (Manager, error) {
	type res struct {
		c   *dbus.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := dbus.Connect(address)
		ch <- res{c, err}
	}()
	var c *dbus.Conn
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoBus, r.err)
		}
		c = r.c
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("%w: no answer: %w", ErrNoBus, ctx.Err())
	}
	m := &busManager{conn: c, sigs: make(chan *dbus.Signal, 64), jobs: make(chan Job, 64)}
	c.Signal(m.sigs)
	go m.relay()
	return m, nil
}

// relay turns JobRemoved signals into Jobs until the connection closes
// (godbus then closes the signal channel).
func (m *busManager) relay() {
	defer close(m.jobs)
	for s := range m.sigs {
		if s.Name != managerIf+".JobRemoved" || len(s.Body) != 4 {
			continue
		}
		id, _ := s.Body[0].(uint32)
		path, _ := s.Body[1].(dbus.ObjectPath)
		unit, _ := s.Body[2].(string)
		result, _ := s.Body[3].(string)
		select {
		case m.jobs <- Job{ID: id, Path: string(path), Unit: unit, Result: result}:
		default: // nobody waits for that many jobs; never block the bus reader
		}
	}
}

func (m *busManager) manager() dbus.BusObject { return m.conn.Object(busName, managerPath) }

// call makes a method call without bus activation (never start a manager
// that is not running) and maps "nobody owns that name" to ErrNoManager.
func (m *busManager) call(ctx context.Context, obj dbus.BusObject, method string, args ...any) *dbus.Call {
	c := obj.CallWithContext(ctx, method, dbus.FlagNoAutoStart, args...)
	var de dbus.Error
	if errors.As(c.Err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
			c.Err = fmt.Errorf("%w (%s)", ErrNoManager, de.Error())
		}
	}
	return c
}

func (m *busManager) Subscribe(ctx context.Context) error {
	// The match rule first, so no JobRemoved is lost between the call and
	// the subscription.
	if err := m.conn.AddMatchSignalContext(ctx, dbus.WithMatchObjectPath(managerPath),
		dbus.WithMatchInterface(managerIf), dbus.WithMatchMember("JobRemoved")); err != nil {
		return err
	}
	return m.call(ctx, m.manager(), managerIf+".Subscribe").Err
}

// unitProperty is D-Bus's (sv).
type unitProperty struct {
	Name  string
	Value dbus.Variant
}

// auxUnit is D-Bus's (sa(sv)): StartTransientUnit's auxiliary units.
type auxUnit struct {
	Name  string
	Props []unitProperty
}

func (m *busManager) StartTransientUnit(ctx context.Context, name, mode string, props []Property) (string, error) {
	ps := make([]unitProperty, len(props))
	for i, p := range props {
		ps[i] = unitProperty{p.Name, dbus.MakeVariant(p.Value)}
	}
	var job dbus.ObjectPath
	if err := m.call(ctx, m.manager(), managerIf+".StartTransientUnit", name, mode, ps, []auxUnit{}).Store(&job); err != nil {
		return "", err
	}
	return string(job), nil
}

func (m *busManager) JobRemoved() <-chan Job { return m.jobs }

func (m *busManager) ControlGroup(ctx context.Context, unit string) (string, error) {
	var path dbus.ObjectPath
	if err := m.call(ctx, m.manager(), managerIf+".GetUnit", unit).Store(&path); err != nil {
		return "", err
	}
	var v dbus.Variant
	if err := m.call(ctx, m.conn.Object(busName, path), "org.freedesktop.DBus.Properties.Get", scopeIf, "ControlGroup").Store(&v); err != nil {
		return "", err
	}
	s, ok := v.Value().(string)
	if !ok {
		return "", fmt.Errorf("ControlGroup is %s, not a string", v.Signature())
	}
	return s, nil
}

func (m *busManager) Close() error { return m.conn.Close() }
