package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// profile: what an agent's start costs. `jail -P claude -- /bin/true` is
// what `jail -P claude -- claude` pays before Claude Code runs: the
// profile's writable state walked for the built-in protections, jail's own
// caches mounted, the agent-configuration guard, and a network (the proxy's
// namespace, veth and nftables table) where the default has none. Timed
// beside `jail -- /bin/true` and bubblewrap in the same rounds, both jail
// runs with one scratch HOME (the profile's first run makes its files
// there; the user's HOME is never touched); then the steps whose traced
// share differs between the two (JAIL_TRACE=1): where the profile's extra
// milliseconds go.
func (b *bench) profile() error {
	home := filepath.Join(b.scratch, "profile-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env := []string{"HOME=" + home}
	plain := b.jailArgv(nil, "/bin/true")
	claude := b.jailArgv([]string{"--profile", "claude"}, "/bin/true")
	vs := []variant{
		{name: "jail -- /bin/true", argv: plain, env: env},
		{name: "jail -P claude -- /bin/true", argv: claude, env: env},
	}
	bwrap := ""
	if v, err := b.bwrapVariant(); err == nil {
		bwrap, vs = v.argv[0], append(vs, v)
	}
	s, err := alternate(b.ws, b.pick(20, 60), vs)
	if err != nil {
		return err
	}
	bw := math.NaN()
	if bwrap != "" {
		bw = med(s[2])
	}
	b.add(row{"profile", "jail -- /bin/true (scratch HOME)", med(s[0]), p90(s[0]), "ms", ratio(med(s[0]), bw, "bwrap")})
	b.add(row{"profile", "jail -P claude -- /bin/true (scratch HOME)", med(s[1]), p90(s[1]), "ms",
		ratio(med(s[1]), bw, "bwrap") + fmt.Sprintf("; +%.1f ms over the default policy", med(s[1])-med(s[0]))})

	runs := b.pick(5, 15)
	base, _, _, _, err := b.traceShares(plain, env, runs)
	if err != nil {
		return err
	}
	prof, names, walls, _, err := b.traceShares(claude, env, runs)
	if err != nil {
		return err
	}
	type diff struct {
		name    string
		was, is float64
	}
	var ds []diff
	for _, n := range names {
		was, is := med(base[n]), med(prof[n])
		if math.IsNaN(was) {
			was = 0 // a step of the profile's only (its network's)
		}
		if math.Abs(is-was) >= 0.3 {
			ds = append(ds, diff{n, was, is})
		}
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].is-ds[i].was > ds[j].is-ds[j].was })
	fmt.Println("  where the profile's extra milliseconds go (JAIL_TRACE=1, steps whose median share moved by 0.3 ms or more):")
	for _, d := range ds {
		b.add(row{"profile", "  " + stepName(d.name), d.is, p90(prof[d.name]), "ms",
			fmt.Sprintf("%+.2f ms (default %.2f); trace: %s", d.is-d.was, d.was, d.name)})
	}
	b.add(row{"profile", "  traced runs of the profile: wall", med(walls), p90(walls), "ms", ""})
	return nil
}
