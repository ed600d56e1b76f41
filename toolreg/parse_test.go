package toolreg

import (
	"reflect"
	"testing"
)

func TestHostOfURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" for none
	}{
		{"https://registry.test/", "registry.test:443"},
		{"http://registry.test/npm/", "registry.test:80"},
		{"https://Registry.TEST.:8443/x", "registry.test:8443"},
		{"sparse+https://crates-mirror.test/index/", "crates-mirror.test:443"},
		{"registry+https://crates-mirror.test/index", "crates-mirror.test:443"},
		{"git+https://crates-git.test/index", "crates-git.test:443"},
		{"https://user:pass@private.test/simple", "private.test:443"},
		{"https://192.0.2.7:4873/", "192.0.2.7:4873"},
		{"https://[2001:db8::1]/", "[2001:db8::1]:443"},
		{"file:///srv/wheels", ""},
		{"/srv/wheels", ""},
		{"./vendor", ""},
		{"ftp://files.test/", ""},
		{"https://*.test/", ""},
		{"https://bad_host.test/", ""},
		{"https://registry.test:0/", ""},
		{"https://registry.test:99999/", ""},
		{"", ""},
		{"sekrit-123", ""},
	} {
		h, ok := hostOfURL(c.in)
		got := ""
		if ok {
			got = h.Pattern()
		}
		if got != c.want {
			t.Errorf("hostOfURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseNpmrc(t *testing.T) {
	env := map[string]string{"MIRROR": "npm-mirror.test"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		name, in string
		want     []npmrcEntry
	}{
		{"plain", "registry=https://registry.test/\n", []npmrcEntry{{"registry", "https://registry.test/"}}},
		{"spaces and quotes", `  registry = "https://registry.test/"  `, []npmrcEntry{{"registry", "https://registry.test/"}}},
		{"scope", "@corp:registry=https://npm.corp.test/\n//npm.corp.test/:_authToken=SECRET\n",
			[]npmrcEntry{{"@corp:registry", "https://npm.corp.test/"}}},
		{"comments", "; registry=https://no.test/\n# registry=https://no.test/\nregistry=https://yes.test/",
			[]npmrcEntry{{"registry", "https://yes.test/"}}},
		{"env reference", "registry=https://${MIRROR}/\n", []npmrcEntry{{"registry", "https://npm-mirror.test/"}}},
		{"unset env reference", "registry=https://${NOPE}x.test/\n", []npmrcEntry{{"registry", "https://x.test/"}}},
		{"other keys", "cache=/tmp/x\nstrict-ssl=false\nfoo:registry=https://no.test/\n@:registry=https://no.test/\n", nil},
		{"crlf", "registry=https://registry.test/\r\n", []npmrcEntry{{"registry", "https://registry.test/"}}},
		{"no equals", "registry\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := parseNpmrc([]byte(c.in), getenv); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestNpmEnvEntries(t *testing.T) {
	got := npmEnvEntries([]string{"NPM_CONFIG_REGISTRY=https://first.test/", "npm_config_registry=https://last.test/",
		"npm_config_@corp:registry=https://corp.test/", "npm_config_cache=/x", "OTHER=https://no.test/"})
	want := []npmrcEntry{{"@corp:registry", "https://corp.test/"}, {"registry", "https://last.test/"}, {"registry", "https://first.test/"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNpmAnswer(t *testing.T) {
	r, g := npmAnswer("registry=https://default.test/\nglobalconfig=/usr/etc/npmrc\n")
	if r != "https://default.test/" || g != "/usr/etc/npmrc" {
		t.Errorf("got %q %q", r, g)
	}
}

func TestGoProxyURLs(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   []string
		direct bool
	}{
		{"https://goproxy.test,direct", []string{"https://goproxy.test"}, true},
		{"https://a.test|https://b.test:8443/p", []string{"https://a.test", "https://b.test:8443/p"}, false},
		{"goproxy.test", []string{"https://goproxy.test"}, false},
		{"off", nil, false},
		{"direct", nil, true},
		{"file:///srv/mod,https://a.test", []string{"file:///srv/mod", "https://a.test"}, false},
		{"", nil, false},
	} {
		got, direct := goProxyURLs(c.in)
		if !reflect.DeepEqual(got, c.want) || direct != c.direct {
			t.Errorf("goProxyURLs(%q) = %q %v, want %q %v", c.in, got, direct, c.want, c.direct)
		}
	}
}

func TestGoSumDBURL(t *testing.T) {
	for in, want := range map[string]string{
		"sumdb.test":                            "https://sumdb.test",
		"sumdb.test+abcdef":                     "https://sumdb.test",
		"sumdb.test+abcdef https://mirror.test": "https://mirror.test",
		"sumdb.test+abcdef mirror.test/sumdb":   "https://mirror.test/sumdb",
		"off":                                   "",
		"":                                      "",
	} {
		if got := goSumDBURL(in); got != want {
			t.Errorf("goSumDBURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGoPrivateHosts(t *testing.T) {
	got := goPrivateHosts("git.corp.test/team/*, *.corp.test, corp, github.test/org,x?.test/y,")
	want := []string{"https://git.corp.test", "https://github.test"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParsePipConf(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     map[string][]string
	}{
		{"global", "[global]\nindex-url = https://pypi-mirror.test/simple\n",
			map[string][]string{"index-url": {"https://pypi-mirror.test/simple"}}},
		{"install over global", "[install]\nindex-url=https://b.test/simple\n[global]\nindex-url=https://a.test/simple\n",
			map[string][]string{"index-url": {"https://b.test/simple"}}},
		{"continuation lines", "[global]\nextra-index-url =\n    https://x.test/simple\n    https://y.test/simple\n# c\n",
			map[string][]string{"extra-index-url": {"https://x.test/simple", "https://y.test/simple"}}},
		{"underscore and colon", "[global]\nindex_url: https://a.test/simple\nFind-Links = /srv/wheels https://w.test/\n",
			map[string][]string{"index-url": {"https://a.test/simple"}, "find-links": {"/srv/wheels", "https://w.test/"}}},
		{"other sections", "[freeze]\nindex-url = https://no.test/\n[global]\ntimeout = 60\n", map[string][]string{}},
		{"key before any section", "index-url = https://no.test/\n", map[string][]string{}},
		{"broken header", "[global\nindex-url = https://no.test/\n", map[string][]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := parsePipConf([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestCargoReplacement(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string // nearest first
		want  string
		local bool
	}{
		{"none", []string{""}, "", false},
		{"mirror", []string{"[source.crates-io]\nreplace-with = 'm'\n[source.m]\nregistry = 'sparse+https://m.test/index/'\n"}, "sparse+https://m.test/index/", false},
		{"chain", []string{"[source.crates-io]\nreplace-with = 'a'\n[source.a]\nreplace-with = 'b'\n[source.b]\nregistry = 'https://b.test/git'\n"}, "https://b.test/git", false},
		{"vendored", []string{"[source.crates-io]\nreplace-with = 'v'\n[source.v]\ndirectory = 'vendor'\n"}, "", true},
		{"a registry", []string{"[source.crates-io]\nreplace-with = 'corp'\n[registries.corp]\nindex = 'sparse+https://corp.test/'\n"}, "sparse+https://corp.test/", false},
		{"project over home", []string{"[source.m]\nregistry = 'https://project.test/'\n",
			"[source.crates-io]\nreplace-with = 'm'\n[source.m]\nregistry = 'https://home.test/'\n"}, "https://project.test/", false},
		{"loop", []string{"[source.crates-io]\nreplace-with = 'a'\n[source.a]\nreplace-with = 'crates-io'\n"}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &cargoSources{replaceWith: map[string]string{}, registry: map[string]string{}, local: map[string]bool{},
				registries: map[string]string{}, from: map[string]string{}}
			for _, f := range c.files {
				conf, err := parseCargoConfig([]byte(f))
				if err != nil {
					t.Fatal(err)
				}
				s.add(conf, "f")
			}
			got, _, local := s.replacement()
			if got != c.want || local != c.local {
				t.Errorf("got %q %v, want %q %v", got, local, c.want, c.local)
			}
		})
	}
}

func FuzzParseNpmrc(f *testing.F) {
	f.Add("registry=https://registry.test/\n@a:registry = \"https://${X}/\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range parseNpmrc([]byte(s), func(string) string { return "x.test" }) {
			if !npmRegistryKey(e.Key) {
				t.Fatalf("kept key %q", e.Key)
			}
			checkHost(t, e.Value)
		}
	})
}

func FuzzParsePipConf(f *testing.F) {
	f.Add("[global]\nindex-url = https://a.test/simple\nextra-index-url =\n  https://b.test/\n")
	f.Fuzz(func(t *testing.T, s string) {
		for k, vs := range parsePipConf([]byte(s)) {
			found := false
			for _, p := range pipKeys {
				found = found || p == k
			}
			if !found {
				t.Fatalf("kept key %q", k)
			}
			for _, v := range vs {
				checkHost(t, v)
			}
		}
	})
}

func FuzzParseCargoConfig(f *testing.F) {
	f.Add("[source.crates-io]\nreplace-with = 'm'\n[source.m]\nregistry = 'sparse+https://m.test/'\n")
	f.Fuzz(func(t *testing.T, s string) {
		conf, err := parseCargoConfig([]byte(s))
		if err != nil {
			return
		}
		cs := &cargoSources{replaceWith: map[string]string{}, registry: map[string]string{}, local: map[string]bool{},
			registries: map[string]string{}, from: map[string]string{}}
		cs.add(conf, "f")
		u, _, _ := cs.replacement()
		checkHost(t, u)
	})
}

func FuzzGoValues(f *testing.F) {
	f.Add("https://a.test,direct|off", "sumdb.test+k https://b.test", "git.corp.test/*,x")
	f.Fuzz(func(t *testing.T, proxy, sumdb, private string) {
		urls, _ := goProxyURLs(proxy)
		for _, u := range urls {
			checkHost(t, u)
		}
		checkHost(t, goSumDBURL(sumdb))
		for _, u := range goPrivateHosts(private) {
			checkHost(t, u)
		}
	})
}

func FuzzHostOfURL(f *testing.F) {
	f.Add("sparse+https://user@x.test:8443/p")
	f.Fuzz(func(t *testing.T, s string) { checkHost(t, s) })
}

// checkHost: whatever a URL is, a host taken from it is a plain name or
// address and a port, never a pattern that widens the allowlist.
func checkHost(t *testing.T, raw string) {
	h, ok := hostOfURL(raw)
	if !ok {
		return
	}
	if h.Port == 0 || h.Name == "" || !validName(h.Name) {
		t.Fatalf("hostOfURL(%q) = %+v", raw, h)
	}
	for _, r := range h.Name {
		if r == '*' || r == '/' || r == ' ' || r == '@' {
			t.Fatalf("hostOfURL(%q) = %+v", raw, h)
		}
	}
}
