package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/policy"
)

// ownPlaces are where init mounts the sandbox's own file systems (package
// ns, buildRoot): a host path bound at or below one either covers them or
// is covered by them. Bound at /dev, the host's tree covers init's device
// nodes, its terminals and the empty file and directory every secret mask
// is bound from (the start failed at the first mask with "bind ...: no such
// file or directory"; review12 rows); below /dev it replaces one of init's
// nodes (/dev/pts: the host's terminals) or brings a host device the
// sandbox is built without; below /proc or /sys it is mounted over by
// init's fresh /proc and sysfs, or, where the kernel refuses a sysfs (`net`
// host), left as the host's. Started by root, the idmapped mount of such a
// path failed instead ("idmapped mount of /dev: invalid argument").
// Refused when the plan is made, naming the value: degraded mode, which
// mounts nothing and turns the paths into Landlock rules, keeps them.
var ownPlaces = []struct{ path, what, instead string }{
	{"/dev", "/dev inside is the sandbox's own (null, zero, full, random, urandom, tty, its own /dev/pts and /dev/shm, and the secret masks' sources)",
		"drop it: those nodes are there already, and no other device opens inside"},
	{"/proc", "/proc inside is the sandbox's own (its processes only, mounted over anything bound there)",
		"drop it: the agent has its own /proc"},
	{"/sys", "/sys inside is the sandbox's own, read-only (its network devices only, mounted over anything bound there)",
		"drop it: nothing of the host's /sys can be shown inside"},
}

// ownPlace returns the place of ownPlaces that path is at or below.
func ownPlace(path string) (i int, ok bool) {
	for i, o := range ownPlaces {
		if path == o.path || strings.HasPrefix(path, o.path+"/") {
			return i, true
		}
	}
	return 0, false
}

// wsInstead is what to do instead of a workspace jail cannot bind.
const wsInstead = "start jail in a project directory, or give `workspace` one"

// ownPlaceError is the refusal of raw (the value as given; path resolved)
// for key, when path is at or below one of init's own places.
func ownPlaceError(key, raw, path string) error {
	i, ok := ownPlace(path)
	if !ok {
		return nil
	}
	o := ownPlaces[i]
	at := ""
	if raw != path {
		at = " (it is " + path + ")"
	}
	instead := o.instead
	switch key {
	case "workspace":
		instead = wsInstead
	case "cache":
		instead = "put the cache elsewhere"
	}
	return &policy.FieldError{Key: key, Value: raw, Reason: o.what + ": nothing can be bound at or below " + o.path + at + "; " + instead}
}

// refuseOwnPlaces refuses, when the sandbox is built in namespaces, every
// path jail would bind at or below init's own places (ownPlaces), and a
// read of the root itself: the workspace, the read and write paths, the
// caches, and the home hidden by an empty tmpfs. Errors are
// *policy.FieldError naming the value as given.
func refuseOwnPlaces(p *policy.Policy, res *resolved) error {
	for _, b := range res.binds {
		raw := res.raws[b.Path]
		if raw == "" {
			raw = b.Path
		}
		if b.Path == "/" {
			// A read of "/" (a writable one is refused before): the
			// sandbox's root is the host's already, read-only, and a bind
			// on the root itself is refused by init ("nothing is mounted
			// on the root itself").
			instead := "name the paths to show"
			if b.Why == "workspace" {
				instead = wsInstead
			}
			return &policy.FieldError{Key: b.Why, Value: raw, Reason: "the sandbox's root is the host's already, read-only, with its private places (/tmp, /home, /run, ...) hidden: nothing can be bound on the root itself; " + instead}
		}
		if err := ownPlaceError(b.Why, raw, b.Path); err != nil {
			return err
		}
	}
	for _, c := range p.Cache {
		_, path, err := policy.ParseCache(c)
		if err != nil {
			continue // cacheMounts says it
		}
		target := filepath.Clean(path)
		if strings.HasPrefix(path, "~/") {
			if res.home == "" {
				continue // cacheMounts says it
			}
			target = filepath.Join(res.home, path[2:])
		}
		if err := ownPlaceError("cache", c, target); err != nil {
			return err
		}
	}
	if res.home != "" {
		return homePlaceError(res.in.home, res.home)
	}
	return nil
}

// homePlaceError is the refusal of the environment's HOME (raw as set;
// home resolved) when home is at or below one of init's own places. Not
// an option: the plan hides the home behind an empty tmpfs, which there
// would go over init's nodes and masks (/dev) or under its /proc or /sys.
func homePlaceError(raw, home string) error {
	i, ok := ownPlace(home)
	if !ok {
		return nil
	}
	o := ownPlaces[i]
	return &policy.FieldError{Key: "HOME", Value: raw, Reason: o.what + ": the home, hidden inside by an empty directory, cannot be at or below " + o.path + "; set HOME to a directory elsewhere"}
}

// RefuseHomePlace refuses a HOME at or below init's own places, as the
// plan does (refuseOwnPlaces), but before jail creates anything in that
// home: its config directory, a profile's paths, the state directory
// with the lean init's copy and the walks' cache (before, the refusal
// came after them: .config and .local were left in the host's
// /dev/shm). Callers call it first, before any of those (cmd/jail's
// prepare, jail.Start); the supervisor calls it again before its first
// write, once degraded mode is decided. A home that does not exist yet is
// judged by where it would be (its existing ancestors resolved), since
// what follows would create it there. Degraded mode keeps such a home
// (it mounts nothing: the home is a Landlock rule), and whether a run is
// degraded is decided by the supervisor's probe: asked for (`degraded`,
// `x-degraded`), the home is left to the supervisor and the plan.
func RefuseHomePlace(p *policy.Policy, env []string) error {
	if p.Degraded || p.ForceDegraded {
		return nil
	}
	return refuseHomePlace(env)
}

// refuseHomePlace is RefuseHomePlace for a run known not to be degraded.
func refuseHomePlace(env []string) error {
	raw := lookupEnv(env, "HOME")
	if !filepath.IsAbs(raw) {
		return nil // no home to create anything in (statedir.From, config)
	}
	return homePlaceError(raw, resolveExisting(raw))
}
