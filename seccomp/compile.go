package seccomp

// The policy compiler: a user's --seccomp policy (go-seccomp-bpf's JSON
// format) into BPF, with the same instructions go-seccomp-bpf v1.6.0
// emits. It is a port of that library's Policy.Assemble and Program
// (github.com/elastic/go-seccomp-bpf, filter.go and assembler.go,
// Copyright Elasticsearch B.V., Apache License 2.0), kept here so the
// library is not linked into jail: its arch package builds the syscall
// maps of every architecture in package init, 3-8 ms of every jail
// process's start (the supervisor, init and each `jail exec`), to serve a
// flag most runs never use. The library stays a test dependency:
// TestCompileMatchesLibrary and FuzzCompileMatchesLibrary compare this
// compiler's output with the library's, instruction for instruction, and
// TestGenerated compares the syscall tables and the built-in program.

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/bpf"
)

// Action is what a matching syscall gets (SECCOMP_RET_*); the values are
// the kernel's (and go-seccomp-bpf's).
type Action uint32

// The actions of a policy file. ActionErrno is EPERM.
const (
	ActionKillThread  Action = 0x00000000
	ActionKillProcess Action = 0x80000000
	ActionTrap        Action = 0x00030000
	ActionErrno       Action = 0x00050000
	ActionTrace       Action = 0x7ff00000
	ActionLog         Action = 0x7ffc0000
	ActionAllow       Action = 0x7fff0000
)

const (
	errnoEPERM  = 1
	errnoENOSYS = 38
)

// actionNames in the order Unpack tries them (the names are distinct, so
// the order decides nothing).
var actionNames = [...]struct {
	a    Action
	name string
}{
	{ActionKillThread, "kill_thread"}, {ActionKillProcess, "kill_process"}, {ActionTrap, "trap"},
	{ActionErrno, "errno"}, {ActionTrace, "trace"}, {ActionLog, "log"}, {ActionAllow, "allow"},
}

// Unpack sets a from its name (case-insensitive).
func (a *Action) Unpack(s string) error {
	s = strings.ToLower(s)
	for _, n := range actionNames {
		if n.name == s {
			*a = n.a
			return nil
		}
	}
	return fmt.Errorf("invalid action: %v", s)
}

func (a Action) String() string {
	for _, n := range actionNames {
		if n.a == a {
			return n.name
		}
	}
	return "unknown"
}

func (a Action) named() bool { return a.String() != "unknown" }

// Policy is a seccomp policy in go-seccomp-bpf's form (a file's
// default_action, syscalls: [{names, names_with_args, action}]): groups of
// syscalls, each with an action, and the action for everything else.
type Policy struct {
	DefaultAction Action
	Syscalls      []SyscallGroup
}

// SyscallGroup is one group: names matched unconditionally, names matched
// when all of one set of argument conditions hold, and the action.
type SyscallGroup struct {
	Names               []string
	NamesWithConditions []NameWithConditions
	Action              Action
}

// NameWithConditions is a syscall matched when all its conditions hold; a
// syscall listed twice in a group matches when either set holds.
type NameWithConditions struct {
	Name       string
	Conditions []Condition
}

// Condition compares one 64-bit argument (0..5) with Value.
type Condition struct {
	Argument  uint32
	Operation Operation
	Value     uint64
}

// Operation is a comparison of a Condition.
type Operation string

// The operations of a policy file.
const (
	Equal          Operation = "Equal"
	NotEqual       Operation = "NotEqual"
	GreaterThan    Operation = "GreaterThan"
	LessThan       Operation = "LessThan"
	GreaterOrEqual Operation = "GreaterOrEqual"
	LessOrEqual    Operation = "LessOrEqual"
	BitsSet        Operation = "BitsSet"
	BitsNotSet     Operation = "BitsNotSet"
)

// Operations lists every Operation.
var Operations = []Operation{Equal, NotEqual, GreaterThan, LessThan, GreaterOrEqual, LessOrEqual, BitsSet, BitsNotSet}

// Unpack sets o from its name (case-insensitive).
func (o *Operation) Unpack(s string) error {
	s = strings.ToLower(s)
	for _, name := range Operations {
		if strings.ToLower(string(name)) == s {
			*o = name
			return nil
		}
	}
	return fmt.Errorf("invalid operation: %v", s)
}

// Assemble compiles the policy for the native architecture.
func (p *Policy) Assemble() ([]bpf.Instruction, error) {
	a, err := archNative()
	if err != nil {
		return nil, err
	}
	return p.assembleFor(a)
}

// assembleFor compiles the policy for arch a: the arch check (a foreign
// arch gets the default action; jail's own prefix kills it before this
// runs), x32 numbers refused with ENOSYS, each group in order, the
// default action.
func (p *Policy) assembleFor(a *archInfo) ([]bpf.Instruction, error) {
	if !p.DefaultAction.named() {
		return nil, fmt.Errorf("invalid default_action value %d", p.DefaultAction)
	}
	if len(p.Syscalls) == 0 {
		return nil, errors.New("syscalls must not be empty")
	}
	prog := newProgram()
	for i := range p.Syscalls {
		if err := p.Syscalls[i].assemble(&prog, a); err != nil {
			return nil, err
		}
	}
	prog.ret(p.DefaultAction)
	instructions, err := prog.assemble()
	if err != nil {
		return nil, err
	}
	// x32 numbers carry bit 30 under the same AUDIT_ARCH: refused, or a
	// deny-list would be bypassed through the x32 ABI.
	var x32Filter []bpf.Instruction
	if a.Audit == auditArchX86_64 {
		x32Filter = []bpf.Instruction{
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
			bpf.RetConstant{Val: uint32(ActionErrno) | errnoENOSYS},
		}
	}
	program := make([]bpf.Instruction, 0, len(x32Filter)+len(instructions)+5)
	program = append(program, bpf.LoadAbsolute{Off: offArch, Size: 4})
	jumpN := len(x32Filter) + len(instructions)
	if jumpN <= 255 {
		program = append(program, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.Audit, SkipTrue: uint8(jumpN)})
	} else {
		program = append(program, bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.Audit, SkipTrue: 1})
		program = append(program, bpf.Jump{Skip: uint32(jumpN)})
	}
	program = append(program, bpf.LoadAbsolute{Off: offNr, Size: 4})
	program = append(program, x32Filter...)
	program = append(program, instructions...)
	return program, nil
}

// syscallConds is one syscall number of a group and its condition sets
// (none: unconditional).
type syscallConds struct {
	num   uint32
	conds [][]Condition
}

func findSyscall(list []syscallConds, num uint32) *syscallConds {
	for i := range list {
		if list[i].num == num {
			return &list[i]
		}
	}
	return nil
}

func (g *SyscallGroup) resolve(a *archInfo) ([]syscallConds, error) {
	var (
		list     []syscallConds
		problems []string
	)
	for _, name := range g.Names {
		num, ok := a.nr(name)
		if !ok {
			problems = append(problems, fmt.Sprintf("found unknown syscalls for arch %v: %v", a.Name, name))
			continue
		}
		if findSyscall(list, uint32(num)) == nil {
			list = append(list, syscallConds{num: uint32(num)})
		} else {
			problems = append(problems, fmt.Sprintf("found duplicate syscall %v", name))
		}
	}
	for _, nc := range g.NamesWithConditions {
		num, ok := a.nr(nc.Name)
		if !ok {
			problems = append(problems, fmt.Sprintf("found unknown syscalls for arch %v: %v", a.Name, nc.Name))
			continue
		}
		var bad []string
		for _, c := range nc.Conditions {
			if c.Argument > 5 {
				bad = append(bad, fmt.Sprintf("argument must be between 0 and 5 (inclusive), but is %v", c.Argument))
			}
		}
		if len(bad) > 0 {
			problems = append(problems, bad...)
			continue
		}
		check := findSyscall(list, uint32(num))
		switch {
		case check == nil:
			list = append(list, syscallConds{num: uint32(num), conds: [][]Condition{nc.Conditions}})
		case len(check.conds) == 0:
			problems = append(problems, fmt.Sprintf("found conditional and unconditional check: %v", nc.Name))
		default:
			check.conds = append(check.conds, nc.Conditions)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return list, nil
}

func (g *SyscallGroup) assemble(p *program, a *archInfo) error {
	if len(g.Names)+len(g.NamesWithConditions) == 0 {
		return nil
	}
	list, err := g.resolve(a)
	if err != nil {
		return err
	}
	action := p.newLabel()    // a syscall of this group matched
	nextGroup := p.newLabel() // none did
	for i, s := range list {
		s.assemble(p, i < len(list)-1, action, nextGroup)
	}
	p.setLabel(action)
	p.ret(g.Action)
	p.setLabel(nextGroup)
	return nil
}

// The argument words of seccomp_data on a little-endian machine (both
// arches jail supports): the low half first.
func argHi(i uint32) uint32 { return offArgLo(int(i)) + 4 }

func (s syscallConds) assemble(p *program, moreSyscalls bool, action, end label) {
	if len(s.conds) == 0 {
		if moreSyscalls {
			p.jmpIfTrue(bpf.JumpEqual, s.num, action)
		} else {
			p.jmpIf(bpf.JumpEqual, s.num, action, end)
		}
		return
	}
	nextSyscall := p.nextLabel(moreSyscalls, end)
	p.jmpIfTrue(bpf.JumpNotEqual, s.num, nextSyscall)
	// Condition sets are OR'ed, the conditions of one set AND'ed; each
	// 64-bit comparison is made of two 32-bit ones.
	for j, conds := range s.conds {
		moreConds := j < len(s.conds)-1
		nextCond := p.nextLabel(moreConds, nextSyscall)
		for i, c := range conds {
			moreArgs := i < len(conds)-1
			nextArg := p.nextLabel(moreArgs, action)
			hi, lo := uint32(c.Value>>32), uint32(c.Value)
			p.ld(argHi(c.Argument))
			switch c.Operation {
			case Equal:
				p.jmpIfTrue(bpf.JumpNotEqual, hi, nextCond)
				p.ld(offArgLo(int(c.Argument)))
				p.jmpIf(bpf.JumpEqual, lo, nextArg, nextCond)
			case NotEqual:
				p.jmpIfTrue(bpf.JumpNotEqual, hi, nextArg)
				p.ld(offArgLo(int(c.Argument)))
				p.jmpIf(bpf.JumpNotEqual, lo, nextArg, nextCond)
			case GreaterThan, GreaterOrEqual, LessThan, LessOrEqual:
				hiCond, loCond := bpf.JumpGreaterThan, bpf.JumpGreaterThan
				switch c.Operation {
				case GreaterOrEqual:
					loCond = bpf.JumpGreaterOrEqual
				case LessThan:
					hiCond, loCond = bpf.JumpLessThan, bpf.JumpLessThan
				case LessOrEqual:
					hiCond, loCond = bpf.JumpLessThan, bpf.JumpLessOrEqual
				}
				p.jmpIfTrue(hiCond, hi, nextArg)
				p.jmpIfTrue(bpf.JumpNotEqual, hi, nextCond)
				p.ld(offArgLo(int(c.Argument)))
				p.jmpIf(loCond, lo, nextArg, nextCond)
			case BitsSet:
				p.jmpIfTrue(bpf.JumpBitsSet, hi, nextArg)
				p.ld(offArgLo(int(c.Argument)))
				p.jmpIf(bpf.JumpBitsSet, lo, nextArg, nextCond)
			case BitsNotSet:
				p.jmpIfTrue(bpf.JumpBitsSet, hi, nextCond)
				p.ld(offArgLo(int(c.Argument)))
				p.jmpIf(bpf.JumpBitsNotSet, lo, nextArg, nextCond)
			}
			if moreArgs {
				p.setLabel(nextArg)
			}
		}
		if moreConds {
			p.setLabel(nextCond)
		}
	}
	if moreSyscalls {
		p.setLabel(nextSyscall)
	}
}

// program is go-seccomp-bpf's label assembler: forward jumps only; a
// conditional jump further than 255 instructions gets a copy of its target
// (a return) or an unconditional long jump inserted within reach.
type program struct {
	ins    []bpf.Instruction
	jumps  []pendingJump
	labels map[label][]int
	next   label
}

type label int

type pendingJump struct {
	index         int
	trueL, falseL label
}

func newProgram() program { return program{labels: map[label][]int{}, next: 1} }

func (p *program) newLabel() label {
	p.next++
	return p.next
}

func (p *program) nextLabel(more bool, end label) label {
	if more {
		return p.newLabel()
	}
	return end
}

func (p *program) setLabel(l label) { p.labels[l] = append(p.labels[l], len(p.ins)) }

func (p *program) jmpIfTrue(cond bpf.JumpTest, val uint32, t label) {
	next := p.newLabel()
	p.jmpIf(cond, val, t, next)
	p.setLabel(next)
}

func (p *program) jmpIf(cond bpf.JumpTest, val uint32, t, f label) {
	p.jumps = append(p.jumps, pendingJump{index: len(p.ins), trueL: t, falseL: f})
	p.ins = append(p.ins, bpf.JumpIf{Cond: cond, Val: val})
}

func (p *program) ret(a Action) {
	if a == ActionErrno {
		a |= errnoEPERM
	}
	p.ins = append(p.ins, bpf.RetConstant{Val: uint32(a)})
}

func (p *program) ld(off uint32) { p.ins = append(p.ins, bpf.LoadAbsolute{Off: off, Size: 4}) }

func (p *program) assemble() ([]bpf.Instruction, error) {
	for _, j := range p.jumps {
		inst := p.ins[j.index].(bpf.JumpIf)
		skip, err := p.resolve(j, j.trueL)
		if err != nil {
			return nil, err
		}
		inst.SkipTrue = skip
		if skip, err = p.resolve(j, j.falseL); err != nil {
			return nil, err
		}
		inst.SkipFalse = skip
		if inst.SkipTrue == 0 && inst.SkipFalse == 0 {
			return nil, errors.New("useless jump found")
		}
		p.ins[j.index] = inst
	}
	return p.ins, nil
}

func (p *program) skipN(j pendingJump, l label) int { return p.labels[l][0] - j.index - 1 }

func (p *program) resolve(j pendingJump, l label) (uint8, error) {
	dest := p.labels[l]
	skip := p.skipN(j, l)
	for skip < 0 {
		dest = dest[1:]
		if len(dest) == 0 {
			return 0, errors.New("backward jumps are not supported")
		}
		p.labels[l] = dest
		skip = p.skipN(j, l)
	}
	if skip > 255 {
		after := j
		for _, k := range p.jumps {
			if k.index < j.index+255 {
				after = k
			}
		}
		target := p.ins[dest[0]]
		if _, ok := target.(bpf.RetConstant); !ok {
			target = bpf.Jump{Skip: uint32(skip - after.index)}
		}
		at := p.insertAfter(after.index, target)
		p.labels[l] = append([]int{at}, dest...)
		skip = p.skipN(j, l)
	}
	return uint8(skip), nil
}

func (p *program) insertAfter(index int, inst bpf.Instruction) int {
	index++
	p.ins = append(p.ins[:index+1], p.ins[index:]...)
	p.ins[index] = inst
	for i := range p.jumps {
		if p.jumps[i].index >= index {
			p.jumps[i].index++
		}
	}
	for _, v := range p.labels {
		for i := range v {
			if v[i] >= index {
				v[i]++
			}
		}
	}
	return index
}
