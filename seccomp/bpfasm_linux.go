package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// asm is a tiny forward-label assembler for the hand-written parts of the
// filters (go-seccomp-bpf has no argument masks or low-32-bit compares).
type asm struct {
	info   *archInfo // the arch whose syscall numbers sys returns
	ins    []bpf.Instruction
	fix    []fixup
	labels map[string]int
	err    error // the first name sys did not find
}

// sys returns the number of syscall name on a's arch, from its table
// (zsyscalls.go), not from the build's unix.SYS_*, so that the filter of
// another arch can be built and run in a BPF VM here (the arm64 filter
// is tested on amd64). A name the table lacks fails assemble.
func (a *asm) sys(name string) uint32 {
	n, ok := a.info.nr(name)
	if !ok && a.err == nil {
		a.err = fmt.Errorf("seccomp: no syscall %q on %s: %w", name, a.info.Name, ErrUnsupportedArch)
	}
	return uint32(n)
}

type fixup struct {
	at       int
	jt, jf   string // "" = next instruction
	uncondit bool
}

func (a *asm) ld(off uint32) {
	a.ins = append(a.ins, bpf.LoadAbsolute{Off: off, Size: 4})
}

func (a *asm) and(v uint32) {
	a.ins = append(a.ins, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: v})
}

func (a *asm) jmp(cond bpf.JumpTest, v uint32, jt, jf string) {
	a.fix = append(a.fix, fixup{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, bpf.JumpIf{Cond: cond, Val: v})
}

func (a *asm) ja(l string) {
	a.fix = append(a.fix, fixup{at: len(a.ins), jt: l, uncondit: true})
	a.ins = append(a.ins, bpf.Jump{})
}

func (a *asm) ret(v uint32) { a.ins = append(a.ins, bpf.RetConstant{Val: v}) }

func (a *asm) label(l string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[l] = len(a.ins)
}

func (a *asm) assemble() ([]bpf.Instruction, error) {
	if a.err != nil {
		return nil, a.err
	}
	skip := func(at int, l string) (int, error) {
		if l == "" {
			return 0, nil
		}
		to, ok := a.labels[l]
		if !ok || to <= at {
			return 0, fmt.Errorf("seccomp: bpf label %q missing or backwards", l)
		}
		return to - at - 1, nil
	}
	for _, f := range a.fix {
		t, err := skip(f.at, f.jt)
		if err != nil {
			return nil, err
		}
		if f.uncondit {
			a.ins[f.at] = bpf.Jump{Skip: uint32(t)}
			continue
		}
		e, err := skip(f.at, f.jf)
		if err != nil {
			return nil, err
		}
		if t > 255 || e > 255 {
			return nil, fmt.Errorf("seccomp: bpf jump too long at %d", f.at)
		}
		j := a.ins[f.at].(bpf.JumpIf)
		j.SkipTrue, j.SkipFalse = uint8(t), uint8(e)
		a.ins[f.at] = j
	}
	return a.ins, nil
}
