package policy

import "testing"

func TestParseCache(t *testing.T) {
	cases := []struct {
		in, name, path string
		bad            bool
	}{
		{in: "~/.cache/go-build", name: DefaultCacheName, path: "~/.cache/go-build"},
		{in: "go:~/go/pkg/mod", name: "go", path: "~/go/pkg/mod"},
		{in: "/var/cache/x", name: DefaultCacheName, path: "/var/cache/x"},
		{in: "node:/opt/cache", name: "node", path: "/opt/cache"},
		{in: "~/a:b", name: DefaultCacheName, path: "~/a:b"}, // a colon after a slash is the path's
		{in: "relative/dir", bad: true},                      // never relative to the workspace
		{in: "go:relative", bad: true},
		{in: "~", bad: true},
		{in: "/", bad: true},
		{in: "", bad: true},
		{in: "~/../etc", bad: true},
		{in: "/a/../../b", bad: true},
		{in: "Go:~/x", bad: true}, // names are lower case
		{in: "go:", bad: true},
	}
	for _, c := range cases {
		name, path, err := ParseCache(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseCache(%q) = %q, %q; want an error", c.in, name, path)
			}
			continue
		}
		if err != nil || name != c.name || path != c.path {
			t.Errorf("ParseCache(%q) = %q, %q, %v; want %q, %q", c.in, name, path, err, c.name, c.path)
		}
	}
}

func TestCheckRefusesBadCache(t *testing.T) {
	p := Policy{TmpSize: 1 << 20, AuditMaxSize: MinAuditMaxSize, Cache: []string{"build"}}
	if err := p.Check(); err == nil {
		t.Fatal("a relative cache path passed Check")
	}
}
