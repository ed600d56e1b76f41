package userscope

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Manager is the part of org.freedesktop.systemd1.Manager that Start uses.
// Job and unit paths are D-Bus object paths as strings.
type Manager interface {
	// Subscribe makes the manager send job signals (Manager.Subscribe);
	// JobRemoved then delivers them, including those that arrive before
	// StartTransientUnit returns.
	Subscribe(ctx context.Context) error
	// StartTransientUnit queues the start of a transient unit and returns
	// its job's path.
	StartTransientUnit(ctx context.Context, name, mode string, props []Property) (job string, err error)
	// JobRemoved delivers the manager's JobRemoved signals.
	JobRemoved() <-chan Job
	// ControlGroup returns a unit's control group (GetUnit, then its
	// ControlGroup property), relative to the cgroup2 root.
	ControlGroup(ctx context.Context, unit string) (string, error)
	Close() error
}

// Property is one unit property for StartTransientUnit: Value is a string,
// a bool or a []uint32.
type Property struct {
	Name  string
	Value any
}

// Job is a JobRemoved signal: the job's path, its unit and its result
// ("done", "canceled", "timeout", "failed", "dependency", "skipped").
type Job struct {
	ID     uint32
	Path   string
	Unit   string
	Result string
}

// Scope is a started scope.
type Scope struct {
	Unit   string // e.g. jail-run-1234-0a1b2c3d.scope
	Cgroup string // its control group, e.g. /user.slice/user-1000.slice/user@1000.service/app.slice/jail-run-1234-0a1b2c3d.scope
}

// Options steer Start; the zero value is the real user bus and this process.
type Options struct {
	// Address is the user bus's D-Bus address; "" = Address(os.Getenv, os.Getuid()).
	Address string
	// PID is the process to put in the scope; 0 = this process.
	PID int
	// Name is the unit name; "" = jail-run-PID-RAND.scope.
	Name string
	// Timeout bounds the whole exchange; 0 = DefaultTimeout.
	Timeout time.Duration
	// Dial connects to the bus; nil = the godbus implementation.
	Dial func(ctx context.Context, address string) (Manager, error)
}

// DefaultTimeout bounds Start: a user manager answers a scope start in
// milliseconds; a wedged bus must not hold jail's start for long.
const DefaultTimeout = 5 * time.Second

// Errors callers tell apart with errors.Is (jail doctor, the fallback line).
var (
	// ErrNoBus: no user D-Bus to talk to.
	ErrNoBus = errors.New("no user D-Bus")
	// ErrNoManager: a bus, but no systemd user manager on it.
	ErrNoManager = errors.New("no systemd user manager on the user bus")
)

// Address finds the user bus the way sd_bus_open_user does, plus
// /run/user/UID/bus for sessions (su, sudo) that lost XDG_RUNTIME_DIR.
// It never starts a bus (no dbus-launch autolaunch).
func Address(getenv func(string) string, uid int) (string, error) {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		return a, nil
	}
	var tried []string
	for _, dir := range []string{getenv("XDG_RUNTIME_DIR"), "/run/user/" + strconv.Itoa(uid)} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "bus")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("%w: DBUS_SESSION_BUS_ADDRESS is unset and there is no %s", ErrNoBus, strings.Join(tried, " nor "))
}

// Start puts opts.PID (this process) into a new transient scope with
// Delegate=yes and returns it once the manager's job is done.
func Start(ctx context.Context, opts Options) (Scope, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if opts.PID == 0 {
		opts.PID = os.Getpid()
	}
	if opts.Name == "" {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return Scope{}, fmt.Errorf("systemd user scope: %w", err)
		}
		// Not jail-<pid>-...: that is the cgroup package's name for groups
		// that jail gc may remove; this unit is systemd's to remove.
		opts.Name = fmt.Sprintf("jail-run-%d-%s.scope", opts.PID, hex.EncodeToString(b[:]))
	}
	if opts.Address == "" {
		a, err := Address(os.Getenv, os.Getuid())
		if err != nil {
			return Scope{}, err
		}
		opts.Address = a
	}
	dial := opts.Dial
	if dial == nil {
		dial = dialBus
	}
	m, err := dial(ctx, opts.Address)
	if err != nil {
		return Scope{}, fmt.Errorf("user bus %s: %w", opts.Address, err)
	}
	defer m.Close()
	if err := m.Subscribe(ctx); err != nil {
		return Scope{}, fmt.Errorf("systemd user manager: subscribe: %w", err)
	}
	props := []Property{
		{"Description", fmt.Sprintf("jail sandbox (supervisor pid %d)", opts.PID)},
		{"PIDs", []uint32{uint32(opts.PID)}},
		// The point: the scope's cgroup is handed to us (chowned, and its
		// controllers enabled), so jail may make child groups with limits.
		{"Delegate", true},
		// A scope whose sandbox hit an OOM kill may end "failed"; do not
		// leave it listed in systemctl --user --failed.
		{"CollectMode", "inactive-or-failed"},
	}
	job, err := m.StartTransientUnit(ctx, opts.Name, "fail", props)
	if err != nil {
		return Scope{}, fmt.Errorf("systemd user manager: start %s: %w", opts.Name, err)
	}
	if err := waitJob(ctx, m.JobRemoved(), job, opts.Name); err != nil {
		return Scope{}, err
	}
	cg, err := m.ControlGroup(ctx, opts.Name)
	if err != nil {
		return Scope{}, fmt.Errorf("systemd user manager: control group of %s: %w", opts.Name, err)
	}
	if cg == "" || !strings.HasPrefix(cg, "/") {
		return Scope{}, fmt.Errorf("systemd user manager: %s has no control group (%q)", opts.Name, cg)
	}
	return Scope{Unit: opts.Name, Cgroup: cg}, nil
}

// waitJob waits for job's JobRemoved signal; signals of other jobs are
// skipped (the manager broadcasts every job of the session).
func waitJob(ctx context.Context, ch <-chan Job, job, unit string) error {
	for {
		select {
		case j, ok := <-ch:
			if !ok {
				return fmt.Errorf("systemd user manager: connection closed while starting %s", unit)
			}
			if j.Path != job {
				continue
			}
			if j.Result != "done" {
				return fmt.Errorf("systemd user manager: starting %s: job %s", unit, j.Result)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("systemd user manager: starting %s: no answer: %w", unit, ctx.Err())
		}
	}
}
