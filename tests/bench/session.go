package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// The Go API's row starts sandboxes from this program: it must act as their
// supervisor and init when re-executed (jail.Init, before main).
func init() { jail.Init() }

// session: a command exec'd into a running sandbox (jail exec NAME --
// /bin/true) vs a fresh sandbox (jail -- /bin/true) vs bubblewrap's fresh
// start vs plain /bin/true. Issue 13's goal: exec <= 0.5x bwrap.
func (b *bench) session() error {
	name := fmt.Sprintf("bench-%d", os.Getpid())
	argv := []string{b.jail, "run", "-d", "--name", name, "--quiet", "--audit", auditPlaceholder}
	if _, err := run(b.ws, argv...); err != nil {
		return err
	}
	defer exec.Command(b.jail, "kill", "--now", name).Run()
	vs := []variant{
		{name: "/bin/true", argv: []string{"/bin/true"}},
		{name: "jail exec", argv: []string{b.jail, "exec", name, "--", "/bin/true"}},
		{name: "jail --", argv: b.jailArgv(nil, "/bin/true")},
	}
	bwrap := ""
	if v, err := b.bwrapVariant(); err == nil {
		bwrap, vs = v.argv[0], append(vs, v)
	}
	s, err := alternate(b.ws, b.pick(20, 100), vs)
	if err != nil {
		return err
	}
	bw := math.NaN()
	if bwrap != "" {
		bw = med(s[3])
		b.add(row{"session", "bwrap --unshare-all ... /bin/true", bw, p90(s[3]), "ms", ratio(bw, med(s[0]), "true")})
	}
	b.add(row{"session", "/bin/true", med(s[0]), p90(s[0]), "ms", ""})
	b.add(row{"session", "jail -- /bin/true (fresh sandbox)", med(s[2]), p90(s[2]), "ms", strings.TrimSpace(ratio(med(s[2]), bw, "bwrap"))})
	b.add(row{"session", "jail exec NAME -- /bin/true", med(s[1]), p90(s[1]), "ms",
		strings.Join([]string{ratio(med(s[1]), bw, "bwrap (target <= 0.5)"), ratio(med(s[1]), med(s[2]), "jail --")}, ", ")})
	api, err := b.apiExec()
	if err != nil {
		return err
	}
	b.add(row{"session", "Go API: Sandbox.Command(\"/bin/true\").Run()", med(api), p90(api), "ms", ratio(med(api), bw, "bwrap")})
	return nil
}

// apiExec times commands run through the Go API in a sandbox it started
// (no jail process per command: the embedding program's own cost).
func (b *bench) apiExec() ([]float64, error) {
	p := policy.Default()
	p.Cwd, p.Quiet, p.AuditFile = b.ws, true, filepath.Join(auditDir, "api.jsonl")
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	var xs []float64
	for i := -1; i < b.pick(20, 100); i++ {
		t := time.Now()
		if err := sb.Command("/bin/true").Run(); err != nil {
			return nil, err
		}
		if i >= 0 {
			xs = append(xs, float64(time.Since(t))/1e6)
		}
	}
	return xs, nil
}
