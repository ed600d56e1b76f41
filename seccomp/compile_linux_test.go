package seccomp

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/net/bpf"
)

// libSame fails unless compile.go and go-seccomp-bpf give p the same
// program, or both refuse it.
func libSame(t *testing.T, what string, p *Policy) []bpf.Instruction {
	t.Helper()
	ours, err1 := p.Assemble()
	lib, err2 := toLib(p).Assemble()
	switch {
	case (err1 == nil) != (err2 == nil):
		t.Fatalf("%s: compile.go err %v, go-seccomp-bpf err %v", what, err1, err2)
	case err1 != nil:
		return nil
	}
	if a, b := rawOf(t, ours), rawOf(t, lib); !equalRaw(a, b) {
		t.Fatalf("%s: programs differ:\n%s", what, diffRaw(a, b))
	}
	return ours
}

// TestCompileMatchesLibrary: the policy compiler that replaced
// go-seccomp-bpf in the binary emits the library's instructions for the
// policy files, every operation, several condition sets, long jumps (a
// group of hundreds of syscalls, conditions whose targets are out of a
// jump's reach) and the policies the library refuses.
func TestCompileMatchesLibrary(t *testing.T) {
	info, err := archNative()
	if err != nil {
		t.Skip(err)
	}
	for _, f := range []string{"testdata/extend-tighten.json", "testdata/deny-keyctl.json", "testdata/full.json"} {
		p, err := LoadPolicyFile(f)
		if err != nil {
			t.Fatal(err)
		}
		libSame(t, f, p)
	}
	var all []string
	for _, e := range info.table {
		all = append(all, e.name)
	}
	for _, act := range []Action{ActionAllow, ActionErrno, ActionKillProcess, ActionKillThread, ActionTrap, ActionLog} {
		libSame(t, "all syscalls "+act.String(), &Policy{DefaultAction: ActionAllow, Syscalls: []SyscallGroup{{Names: all, Action: act}}})
	}
	for _, op := range Operations {
		for _, v := range []uint64{0, 1, 0xffffffff, 1 << 32, 0xffffffff00000000, 0x123456789} {
			p := &Policy{DefaultAction: ActionErrno, Syscalls: []SyscallGroup{
				{NamesWithConditions: []NameWithConditions{
					{Name: "socket", Conditions: []Condition{{Argument: 0, Operation: op, Value: v}, {Argument: 5, Operation: Equal, Value: 7}}},
					{Name: "socket", Conditions: []Condition{{Argument: 2, Operation: op, Value: v}}},
					{Name: "ioctl", Conditions: []Condition{{Argument: 1, Operation: op, Value: v}}},
				}, Action: ActionAllow},
				{Names: []string{"read", "write"}, Action: ActionAllow},
			}}
			libSame(t, fmt.Sprintf("%s %#x", op, v), p)
		}
	}
	// Long jumps: hundreds of conditional syscalls before a shared action,
	// then groups after them.
	var ncs []NameWithConditions
	for _, n := range all[:120] {
		ncs = append(ncs, NameWithConditions{Name: n, Conditions: []Condition{{Argument: 1, Operation: GreaterThan, Value: 1 << 33}, {Argument: 2, Operation: BitsNotSet, Value: 3}}})
	}
	long := libSame(t, "long conditional group", &Policy{DefaultAction: ActionAllow, Syscalls: []SyscallGroup{
		{NamesWithConditions: ncs, Action: ActionErrno},
		{Names: all[120:300], Action: ActionLog},
		{Names: all[300:], Action: ActionTrap},
	}})
	ja := 0
	for _, in := range long {
		if _, ok := in.(bpf.Jump); ok {
			ja++
		}
	}
	if len(long) < 512 || ja == 0 {
		t.Errorf("long conditional group: %d instructions, %d long jumps: the long-jump path was not exercised", len(long), ja)
	}
	// Refused by both.
	for what, p := range map[string]*Policy{
		"no groups":   {DefaultAction: ActionAllow},
		"bad default": {DefaultAction: 12345, Syscalls: []SyscallGroup{{Names: []string{"read"}, Action: ActionErrno}}},
		"unknown":     {DefaultAction: ActionAllow, Syscalls: []SyscallGroup{{Names: []string{"mount2"}, Action: ActionErrno}}},
		"duplicate":   {DefaultAction: ActionAllow, Syscalls: []SyscallGroup{{Names: []string{"read", "read"}, Action: ActionErrno}}},
		"argument 6":  {DefaultAction: ActionAllow, Syscalls: []SyscallGroup{{NamesWithConditions: []NameWithConditions{{Name: "read", Conditions: []Condition{{Argument: 6, Operation: Equal}}}}, Action: ActionErrno}}},
		"cond and unconditional": {DefaultAction: ActionAllow, Syscalls: []SyscallGroup{{Names: []string{"read"},
			NamesWithConditions: []NameWithConditions{{Name: "read", Conditions: []Condition{{Argument: 0, Operation: Equal}}}}, Action: ActionErrno}}},
	} {
		if _, err := p.Assemble(); err == nil {
			t.Errorf("%s: accepted", what)
		}
		libSame(t, what, p)
	}
}

// FuzzCompileMatchesLibrary: any policy built from the input (syscalls
// from the native table, any operation, value and action) compiles to the
// library's program, or is refused by both.
func FuzzCompileMatchesLibrary(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{6, 200, 1, 0, 2, 0x80, 1, 2, 3, 4, 5, 6, 7, 8})
	if b, err := os.ReadFile("testdata/full.json"); err == nil {
		f.Add(b)
	}
	info, err := archNative()
	if err != nil {
		f.Skip(err)
	}
	acts := []Action{ActionAllow, ActionErrno, ActionKillProcess, ActionKillThread, ActionTrap, ActionLog, ActionTrace, 12345}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		p := &Policy{DefaultAction: acts[next()%len(acts)]}
		for g := next() % 6; g > 0; g-- {
			grp := SyscallGroup{Action: acts[next()%len(acts)]}
			for n := next() % 40; n > 0; n-- {
				name := info.table[(next()<<8|next())%len(info.table)].name
				if next()%2 == 0 {
					grp.Names = append(grp.Names, name)
					continue
				}
				var conds []Condition
				for c := next()%3 + 1; c > 0; c-- {
					v := uint64(next())<<56 | uint64(next())<<32 | uint64(next())<<8 | uint64(next())
					conds = append(conds, Condition{Argument: uint32(next() % 7), Operation: Operations[next()%len(Operations)], Value: v})
				}
				grp.NamesWithConditions = append(grp.NamesWithConditions, NameWithConditions{Name: name, Conditions: conds})
			}
			p.Syscalls = append(p.Syscalls, grp)
		}
		libSame(t, "fuzz", p)
	})
}
