package toolreg

import (
	"encoding/json"
	"strings"
)

// goVars are the variables that choose where the go command downloads
// from.
var goVars = []string{"GOPROXY", "GOSUMDB", "GONOPROXY", "GOPRIVATE"}

// goProxyURLs returns the URLs of a GOPROXY list (',' or '|' separated);
// "direct" and "off" are not hosts, and direct is reported.
func goProxyURLs(v string) (urls []string, direct bool) {
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' }) {
		f = strings.TrimSpace(f)
		switch f {
		case "":
		case "direct":
			direct = true
		case "off":
		default:
			// A proxy without a scheme is https, as in the go command.
			if !strings.Contains(f, "://") {
				f = "https://" + f
			}
			urls = append(urls, f)
		}
	}
	return urls, direct
}

// goSumDBURL returns the URL of a GOSUMDB value: "off", "NAME",
// "NAME+KEY" or "NAME+KEY URL"; the URL is https://NAME when not given.
func goSumDBURL(v string) string {
	f := strings.Fields(v)
	if len(f) == 0 || f[0] == "off" {
		return ""
	}
	if len(f) > 1 {
		u := f[1]
		if !strings.Contains(u, "://") {
			u = "https://" + u
		}
		return u
	}
	name, _, _ := strings.Cut(f[0], "+")
	return "https://" + name
}

// goPrivateHosts returns the host of each GONOPROXY/GOPRIVATE pattern
// whose first element is a plain host name (no glob): the go command
// fetches those modules from their own hosts.
func goPrivateHosts(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		first, _, _ := strings.Cut(p, "/")
		if first == "" || strings.ContainsAny(first, "*?[]\\") || !strings.Contains(first, ".") {
			continue
		}
		out = append(out, "https://"+first)
	}
	return out
}

// goHosts takes GOPROXY, GOSUMDB and GONOPROXY (or GOPRIVATE) from the
// environment, else from `go env` (which reads the go env file and
// $GOROOT/go.env, where the defaults live).
func goHosts(c *collector, cache *cache) {
	e := c.env
	vals := map[string]string{}
	from := map[string]string{}
	for _, k := range goVars {
		if v, ok := e.lookupEnv(k); ok {
			vals[k], from[k] = v, k+" in the environment"
		}
	}
	need := false
	for _, k := range goVars {
		if _, ok := vals[k]; !ok {
			need = true
		}
	}
	if need {
		if bin, ok := findTool(c, "go"); ok {
			// GOTOOLCHAIN=local: asking must never download a toolchain.
			env := scrubEnv(e.Environ, func(k string) bool { return k == "GOTOOLCHAIN" || k == "GOFLAGS" || inList(k, goVars) })
			env = append(env, "GOTOOLCHAIN=local")
			// The answer depends on the go env file (go env -w) and the
			// toolchain's go.env, found from these.
			envIn := []string{"GOENV=" + e.getenv("GOENV"), "XDG_CONFIG_HOME=" + e.getenv("XDG_CONFIG_HOME"), "HOME=" + e.Home, "GOROOT=" + e.getenv("GOROOT")}
			out, err := ask(c, cache, bin, envIn, nil, func(a string) []string {
				var m map[string]string
				if json.Unmarshal([]byte(a), &m) != nil {
					return nil
				}
				return []string{m["GOENV"], m["GOROOT"] + "/go.env"}
			}, env, "env", "-json", "GOPROXY", "GOSUMDB", "GONOPROXY", "GOPRIVATE", "GOENV", "GOROOT")
			var m map[string]string
			if err == nil && json.Unmarshal([]byte(out), &m) == nil {
				for _, k := range goVars {
					if _, ok := vals[k]; !ok {
						vals[k], from[k] = m[k], k+" (go env)"
					}
				}
			} else {
				c.note("go: could not ask the go command for GOPROXY and GOSUMDB (%v); add --allow-domain HOST for your module proxy", err)
			}
		} else if _, ok := vals["GOPROXY"]; !ok {
			c.note("go: no go command on the PATH to ask and GOPROXY is not set; add --allow-domain HOST for your module proxy and checksum database")
		}
	}
	urls, direct := goProxyURLs(vals["GOPROXY"])
	for _, u := range urls {
		c.url(u, from["GOPROXY"])
	}
	if len(urls) == 0 && direct {
		c.note("go: GOPROXY is direct: modules come from their own hosts; add --allow-domain HOST for each")
	}
	if u := goSumDBURL(vals["GOSUMDB"]); u != "" {
		c.url(u, from["GOSUMDB"])
	}
	priv, src := vals["GONOPROXY"], from["GONOPROXY"]
	if priv == "" {
		priv, src = vals["GOPRIVATE"], from["GOPRIVATE"]
	}
	for _, u := range goPrivateHosts(priv) {
		c.url(u, src)
	}
}

func inList(s string, l []string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
