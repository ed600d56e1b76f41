// Package landlocktest lets tests (of this and other packages) prove what
// Landlock alone blocks. A test binary re-executes itself; the child applies a
// landlock.Rules to itself (irreversible, hence the child), then performs a
// list of operations and reports each one's errno name ("ok", "EACCES", ...).
//
// Use: in the package's TestMain call landlocktest.Main(m); in a test call
// Run(rules, ops...). There is no mount layer in the child, so any denial it
// reports is Landlock's own: this is the "Landlock alone blocks a write when the
// mount layer is weakened" proof. Wall tells EROFS (mount) from EACCES (Landlock).
package landlocktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/jail-sandbox/jail/landlock"
)

// envChild marks the re-executed child; its value is the JSON request.
const envChild = "JAIL_LANDLOCKTEST_CHILD"

// Op is one operation the child attempts after Landlock is applied. Name is one
// of: read PATH, readdir PATH, write PATH (O_WRONLY|O_APPEND), create PATH
// (O_CREAT|O_EXCL), opentrunc PATH, truncate PATH, chmod PATH, utime PATH,
// mkdir PATH, unlink PATH, rename OLD NEW, link OLD NEW, symlink TARGET NEW,
// exec PATH, tcpconnect HOST:PORT, tcpbind HOST:PORT, mptcpconnect HOST:PORT,
// kill PID (signal 0), abstractconnect NAME, tcgets PATH (ioctl TCGETS).
type Op struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
}

// O builds an Op.
func O(name string, args ...string) Op { return Op{Name: name, Args: args} }

// Result is what the child saw.
type Result struct {
	Report   landlock.Report `json:"report"`
	ApplyErr string          `json:"apply_err,omitempty"`
	// ErrABITooOld is true when ApplyErr wraps landlock.ErrABITooOld.
	ErrABITooOld bool `json:"err_abi_too_old,omitempty"`
	// Errnos has one entry per Op: "ok" or the errno name (EACCES, EXDEV...).
	Errnos []string `json:"errnos"`
}

type request struct {
	Rules landlock.Rules `json:"rules"`
	Ops   []Op           `json:"ops"`
	// OpsEvenIfApplyFails runs the ops after a failed Apply (fail-closed tests).
	OpsEvenIfApplyFails bool `json:"ops_even_if_apply_fails"`
}

// Main runs the child part when the binary was re-executed by Run, otherwise
// the tests. Call it from TestMain.
func Main(m *testing.M) {
	if req := os.Getenv(envChild); req != "" {
		os.Exit(child(req))
	}
	os.Exit(m.Run())
}

// Run re-executes the test binary, applies rules in the child and performs ops.
// The error is about the harness (child crashed, bad output), not the ops.
func Run(rules landlock.Rules, ops ...Op) (Result, error) {
	return run(request{Rules: rules, Ops: ops})
}

// RunAfterFailure is Run, but the ops run even when Apply failed: it shows
// what an agent could do if the caller ignored the error.
func RunAfterFailure(rules landlock.Rules, ops ...Op) (Result, error) {
	return run(request{Rules: rules, Ops: ops, OpsEvenIfApplyFails: true})
}

func run(req request) (Result, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return Result{}, err
	}
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("landlocktest child: %w (output %q)", err, out)
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		return Result{}, fmt.Errorf("landlocktest child output %q: %w", out, err)
	}
	if len(res.Errnos) != len(req.Ops) && (res.ApplyErr == "" || req.OpsEvenIfApplyFails) {
		return res, fmt.Errorf("landlocktest: %d results for %d ops", len(res.Errnos), len(req.Ops))
	}
	return res, nil
}

func child(raw string) int {
	var req request
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		fmt.Fprintln(os.Stderr, "landlocktest child:", err)
		return 3
	}
	var res Result
	rep, err := req.Rules.Apply()
	res.Report = rep
	if err != nil {
		res.ApplyErr = err.Error()
		res.ErrABITooOld = errors.Is(err, landlock.ErrABITooOld)
	}
	if err == nil || req.OpsEvenIfApplyFails {
		for _, op := range req.Ops {
			res.Errnos = append(res.Errnos, errnoName(do(op)))
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 3
	}
	return 0
}

// Wall names the layer an errno from a write attempt points to: "mount" for
// EROFS (read-only mount), "landlock" for EACCES (Landlock, or plain file
// permissions), "" when the operation succeeded or failed otherwise.
func Wall(errno string) string {
	switch errno {
	case "EROFS":
		return "mount"
	case "EACCES", "EXDEV", "EPERM":
		return "landlock"
	}
	return ""
}
