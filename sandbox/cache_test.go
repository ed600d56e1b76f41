package sandbox

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

func TestCacheMounts(t *testing.T) {
	home := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "xdg")
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + xdg}
	cases := []struct {
		name    string
		pol     policy.Policy
		binds   []ns.Mount
		src     string // want Source of the first mount ("" = Path)
		target  string
		wantErr string
	}{
		{name: "profile's", pol: policy.Policy{Cache: []string{"go:~/.cache/go-build"}},
			src: filepath.Join(xdg, "jail/cache/go/home/.cache/go-build"), target: filepath.Join(home, ".cache/go-build")},
		{name: "flag's", pol: policy.Policy{Cache: []string{"~/.npm"}},
			src: filepath.Join(xdg, "jail/cache/default/home/.npm"), target: filepath.Join(home, ".npm")},
		{name: "outside home", pol: policy.Policy{Cache: []string{"rust:/opt/cargo"}},
			src: filepath.Join(xdg, "jail/cache/rust/root/opt/cargo"), target: "/opt/cargo"},
		{name: "host-caches", pol: policy.Policy{Cache: []string{"go:~/go/pkg/mod"}, HostCaches: true},
			src: "", target: filepath.Join(home, "go/pkg/mod")},
		{name: "inside a visible path", pol: policy.Policy{Cache: []string{"go:~/.cache/go-build"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, ".cache"), Why: "write"}}, wantErr: "already visible"},
		{name: "the workspace itself", pol: policy.Policy{Cache: []string{"~/ws/node_modules/.cache"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, "ws"), Why: "workspace"}}, wantErr: "already visible"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := cacheMounts(&c.pol, env, home, c.binds)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("cacheMounts = %v, %v", got, err)
			}
			m := got[0]
			if m.Kind != ns.KindBind || m.Path != c.target || m.Source != c.src || !m.Dir {
				t.Errorf("mount = %+v, want bind %s from %q", m, c.target, c.src)
			}
		})
	}
}
