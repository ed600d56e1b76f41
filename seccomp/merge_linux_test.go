package seccomp

import (
	"os"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// strongest is what the kernel makes of two filters' results: the one
// whose action is the most severe, the lowest as a signed 32-bit number
// (seccomp_run_filters; on a tie the filter attached last, run first).
func strongest(last, first uint32) uint32 {
	if int32(first&unix.SECCOMP_RET_ACTION_FULL) < int32(last&unix.SECCOMP_RET_ACTION_FULL) {
		return first
	}
	return last
}

// The merged filter (deny list and exec audit in one program) answers every
// system call, on every arch and with every argument pattern the deny list
// looks at, exactly as the two filters do together, for each way the deny
// list is built: built in, with ptrace, with a user's policy replacing its
// body (whose LOG and ALLOW also meet the exec audit). Emulated, so
// each input is checked without a kernel.
func TestMergedFilterSameAsTwo(t *testing.T) {
	info, native, err := nativeArch()
	if err != nil {
		t.Skip(err)
	}
	full, err := os.ReadFile("testdata/full.json")
	if err != nil {
		t.Fatal(err)
	}
	user, err := ParsePolicy("full.json", full)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := ParsePolicy("log.json", []byte(`{"default_action": "log", "syscalls": [{"names": ["execveat"], "action": "errno"}, {"names": ["getpid"], "action": "allow"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	notify, err := buildNotify()
	if err != nil {
		t.Fatal(err)
	}
	var inputs [][]byte
	args := [][]uint64{nil,
		{0, unix.TIOCSTI}, {0, 1<<32 | unix.TIOCSTI}, {0, unix.TCGETS},
		{unix.AF_INET, unix.SOCK_RAW}, {unix.AF_INET, unix.SOCK_STREAM}, {unix.AF_INET, unix.SOCK_DGRAM}, {unix.AF_UNIX, unix.SOCK_STREAM}, {unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, {unix.AF_PACKET, unix.SOCK_DGRAM},
		{unix.CLONE_NEWUSER}, {unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD)}, {0x0008}, {0xffffffff},
		{0xffffff9c, 0, 0, 0, unix.AT_EMPTY_PATH},
	}
	for nr := uint32(0); nr < 600; nr++ {
		for _, a := range args {
			inputs = append(inputs, seccompInput(nr, native, a...))
		}
		inputs = append(inputs, seccompInput(nr|x32Bit, native), seccompInput(nr, unix.AUDIT_ARCH_I386), seccompInput(nr, unix.AUDIT_ARCH_ARM))
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"built in", Config{}},
		{"ptrace", Config{AllowPtrace: true}},
		{"no inet, no unix", Config{NoInet: true, NoUnix: true}},
		{"replace", Config{Extra: user, Replace: true}},
		{"replace, log", Config{Extra: logs, Replace: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			deny, err := buildDeny(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			merged, ok, err := mergeNotify(deny)
			if err != nil || !ok {
				t.Fatalf("not merged: %v, %v", ok, err)
			}
			dvm, _ := bpf.NewVM(deny)
			nvm, _ := bpf.NewVM(notify)
			mvm, err := bpf.NewVM(merged)
			if err != nil {
				t.Fatalf("merged program: %v", err)
			}
			notified := 0
			for _, in := range inputs {
				d, _ := dvm.Run(in)
				n, _ := nvm.Run(in)
				m, err := mvm.Run(in)
				if err != nil {
					t.Fatal(err)
				}
				if want := strongest(uint32(n), uint32(d)); uint32(m) != want {
					t.Fatalf("input %x: merged %#x, the two filters %#x (deny %#x, notify %#x)", in[:24], m, want, d, n)
				}
				if uint32(m) == retNotify {
					notified++
				}
			}
			if notified == 0 {
				t.Fatal("no input notified: the comparison proves nothing")
			}
			execve, _ := info.nr("execve")
			if m, _ := mvm.Run(seccompInput(uint32(execve), native)); uint32(m) != retNotify && c.name != "replace" {
				t.Errorf("execve: %#x, want USER_NOTIF", m)
			}
		})
	}
}

// Programs whose result the merge cannot follow keep the two filters.
func TestMergeRefusesWhatItCannotFollow(t *testing.T) {
	for name, prog := range map[string][]bpf.Instruction{
		"ret a":    {bpf.LoadAbsolute{Off: 0, Size: 4}, bpf.RetA{}},
		"notifies": {bpf.RetConstant{Val: retNotify}},
		"raw":      {bpf.RawInstruction{Op: 0x06, K: retAllow}},
	} {
		if _, ok, err := mergeNotify(prog); ok || err != nil {
			t.Errorf("%s: merged (%v, %v)", name, ok, err)
		}
	}
}
