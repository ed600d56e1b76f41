package cachehint

import (
	"strings"
	"testing"
)

func TestGoBuildCache(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
		ok   bool
	}{
		{[]string{"HOME=/home/u"}, "/home/u/.cache/go-build", true},
		{[]string{"HOME=/home/u", "XDG_CACHE_HOME=/x/c"}, "/x/c/go-build", true},
		{[]string{"HOME=/home/u", "XDG_CACHE_HOME=/x/c", "GOCACHE=/g/"}, "/g", true},
		{[]string{"HOME=/home/u", "GOCACHE="}, "/home/u/.cache/go-build", true}, // empty: go's default
		{[]string{"HOME=/home/u", "GOCACHE=off"}, "", false},
		{[]string{"HOME=/home/u", "GOCACHE=rel/dir"}, "", false},
		{[]string{"HOME=/home/u", "XDG_CACHE_HOME=rel"}, "", false},
		{[]string{"HOME=/home/u", "XDG_CACHE_HOME="}, "/home/u/.cache/go-build", true},
		{[]string{"GOCACHE=/a", "GOCACHE=/b"}, "/a", true}, // the first, as getenv
		{[]string{"HOME="}, "", false},
		{nil, "", false},
	} {
		got, ok := GoBuildCache(c.env)
		if got != c.want || ok != c.ok {
			t.Errorf("GoBuildCache(%q) = %q, %v; want %q, %v", c.env, got, ok, c.want, c.ok)
		}
	}
}

func TestIsGoCompile(t *testing.T) {
	for prog, want := range map[string]bool{
		"/usr/local/go/pkg/tool/linux_amd64/compile":                                                       true,
		"/home/u/go/pkg/mod/golang.org/toolchain@v0.0.1-go1.26.0.linux-amd64/pkg/tool/linux_amd64/compile": true,
		"/usr/local/go/pkg/tool/linux_amd64/link":                                                          false,
		"/usr/bin/compile":     false,
		"compile":              false,
		"/usr/local/go/bin/go": false,
	} {
		if got := IsGoCompile(prog); got != want {
			t.Errorf("IsGoCompile(%q) = %v", prog, got)
		}
	}
}

func TestGoBuilds(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"go", "test", "./..."}, true},
		{[]string{"/usr/local/go/bin/go", "build"}, true},
		{[]string{"go", "vet"}, true},
		{[]string{"go", "run", "."}, true},
		{[]string{"go", "install", "x@latest"}, true},
		{[]string{"go", "version"}, false},
		{[]string{"go", "mod", "tidy"}, false},
		{[]string{"go"}, false},
		{[]string{"gofmt", "build"}, false},
		{[]string{"sh", "-c", "go test"}, false},
		{nil, false},
	} {
		if got := GoBuilds(c.argv); got != c.want {
			t.Errorf("GoBuilds(%q) = %v", c.argv, got)
		}
	}
}

func TestFleeting(t *testing.T) {
	places := []Place{
		{Path: "/tmp", Writable: true},
		{Path: "/home/u", Writable: true},                               // the empty home
		{Path: "/home/u/.cache/go-build", Writable: true, Lasts: true},  // a cache of jail's own
		{Path: "/home/u/proj", Writable: true, Lasts: true},             // the workspace
		{Path: "/home/u/proj/.git/hooks", Writable: false, Lasts: true}, // read-only inside
		{Path: "/home/u/ro", Writable: false},
	}
	for dir, want := range map[string]bool{
		"/home/u/.cache/go-build":     false,
		"/home/u/.cache/go-build/sub": false,
		"/home/u/.cache/go-buildx":    true, // not below the cache's mount
		"/home/u/.cache/other":        true,
		"/tmp/gocache":                true,
		"/home/u/proj/.cache":         false,
		"/home/u/proj/.git/hooks/x":   false, // not writable: go fails and says so
		"/home/u/ro/c":                false,
		"/var/cache/go":               false, // the read-only host
		"/home/uu/.cache/go-build":    false,
	} {
		if got := Fleeting(dir, places); got != want {
			t.Errorf("Fleeting(%q) = %v, want %v", dir, got, want)
		}
	}
	if !Fleeting("/x/y", []Place{{Path: "/", Writable: true}}) {
		t.Error("a writable tmpfs at / does not hold /x/y")
	}
	// The later of two mounts at one path is the one seen: the home's
	// tmpfs, then the home itself (--write ~ --allow-writable-home).
	if Fleeting("/home/u/.cache/go-build", []Place{{Path: "/home/u", Writable: true}, {Path: "/home/u", Writable: true, Lasts: true}}) {
		t.Error("the home bound over its tmpfs taken for the tmpfs")
	}
}

func TestGoNote(t *testing.T) {
	n := GoNote("/home/u/.cache/go-build", "/home/u", 212)
	for _, want := range []string{"go compiled 212 packages", "/home/u/.cache/go-build", "the next run compiles them again", "--profile go (-P go)"} {
		if !strings.Contains(n, want) {
			t.Errorf("note lacks %q: %s", want, n)
		}
	}
	if n := GoNote("/home/u/.cache/go-build", "/home/u", 1); !strings.Contains(n, "1 package into") || !strings.Contains(n, "compiles it again") {
		t.Errorf("one package: %s", n)
	}
	if n := GoNote("/tmp/gc", "/home/u", 0); !strings.Contains(n, "go builds into a cache") || !strings.Contains(n, "--cache go-build:/tmp/gc") || strings.Contains(n, "--profile") {
		t.Errorf("elsewhere, unseen: %s", n)
	}
	if strings.Contains(n, "\n") {
		t.Errorf("more than one line: %q", n)
	}
}
