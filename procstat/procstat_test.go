package procstat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// tail is fields 3..52 of a real line (kernel 6.x) with starttime (field
// 22) set to 4242.
const tail = "S 1 1234 1234 34816 1234 4194560 1042 0 0 0 3 1 0 0 20 0 1 0 4242 " +
	"9154560 1320 18446744073709551615 1 1 0 0 0 0 65536 3686404 1266761467 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func line(pid int, comm, rest string) []byte {
	return []byte(fmt.Sprintf("%d (%s) %s", pid, comm, rest))
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []byte
		want  Stat
		isErr bool
	}{
		{"plain", line(1234, "bash", tail), Stat{1234, "bash", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"space in comm", line(7, "tmux: server", tail), Stat{7, "tmux: server", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		// A name that imitates the fields after it: only the last ')' ends it.
		{"fake fields", line(7, "x) R 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9", tail), Stat{7, "x) R 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"parens", line(7, "(sd-pam)", tail), Stat{7, "(sd-pam)", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"only close paren", line(7, ")", tail), Stat{7, ")", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"newline in comm", line(7, "a\nb", tail), Stat{7, "a\nb", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"empty comm", line(7, "", tail), Stat{7, "", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"zombie", line(9, "z", "Z"+tail[1:]), Stat{9, "z", 'Z', 1, 1234, 1234, 4194560, 4242}, false},
		{"exactly 20 fields", line(9, "z", strings.Join(strings.Fields(tail)[:20], " ")), Stat{9, "z", 'S', 1, 1234, 1234, 4194560, 4242}, false},
		{"19 fields", line(9, "z", strings.Join(strings.Fields(tail)[:19], " ")), Stat{}, true},
		{"empty", nil, Stat{}, true},
		{"no parens", []byte("7 bash " + tail), Stat{}, true},
		{"close before open", []byte("7 )bash( " + tail), Stat{}, true},
		{"bad pid", line(-1, "x", tail), Stat{}, true},
		{"pid not a number", []byte("x (a) " + tail), Stat{}, true},
		{"bad starttime", line(7, "x", strings.Replace(tail, " 4242 ", " -1 ", 1)), Stat{}, true},
		{"bad ppid", line(7, "x", "S x"+tail[3:]), Stat{}, true},
		{"bad flags", line(7, "x", strings.Replace(tail, " 4194560 ", " -4 ", 1)), Stat{}, true},
		{"exiting", line(9, "x", strings.Replace(tail, " 4194560 ", " 4194564 ", 1)), Stat{9, "x", 'S', 1, 1234, 1234, 4194560 | PFExiting, 4242}, false},
		{"long state", line(7, "x", "SS"+tail[1:]), Stat{}, true},
		{"starttime overflow", line(7, "x", strings.Replace(tail, " 4242 ", " 18446744073709551616 ", 1)), Stat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.isErr {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("Parse(%q) = %+v, %v; want ErrFormat", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzParse: any input either fails with ErrFormat or yields a Stat whose
// comm sits in the line between '(' and the last ')'; never a panic.
func FuzzParse(f *testing.F) {
	f.Add(line(1, "init", tail))
	f.Add(line(2, "a) b (c", tail))
	f.Add([]byte("1 ("))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error not ErrFormat: %v", err)
			}
			return
		}
		if !strings.Contains(string(b), "("+s.Comm+")") {
			t.Fatalf("comm %q not in %q", s.Comm, b)
		}
	})
}

// FuzzParseComm: whatever name a process gives itself (any bytes, as
// prctl(PR_SET_NAME) allows), the start time read back is the kernel's,
// not one the name forged.
func FuzzParseComm(f *testing.F) {
	f.Add("bash", uint64(4242))
	f.Add("x) R 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9", uint64(0))
	f.Add(") ) )", uint64(1<<63))
	f.Add("a\nb\tc", uint64(17))
	f.Fuzz(func(t *testing.T, comm string, start uint64) {
		rest := strings.Replace(tail, " 4242 ", fmt.Sprintf(" %d ", start), 1)
		s, err := Parse(line(99, comm, rest))
		if err != nil {
			t.Fatalf("Parse with comm %q: %v", comm, err)
		}
		if s.Pid != 99 || s.Comm != comm || s.State != 'S' || s.PPid != 1 || s.StartTime != start {
			t.Fatalf("comm %q start %d: got %+v", comm, start, s)
		}
	})
}

// TestDescendants: parents before children, root itself left out, and a
// loop of parent links (pid reuse between reads) walked once.
func TestDescendants(t *testing.T) {
	all := []Stat{{Pid: 1}, {Pid: 10, PPid: 1}, {Pid: 11, PPid: 10}, {Pid: 12, PPid: 11}, {Pid: 13, PPid: 10}, {Pid: 20, PPid: 1}}
	if got := Descendants(all, 10); !slices.Equal(got, []int{11, 13, 12}) {
		t.Fatalf("Descendants(10) = %v, want [11 13 12]", got)
	}
	loop := []Stat{{Pid: 10, PPid: 12}, {Pid: 11, PPid: 10}, {Pid: 12, PPid: 11}}
	if got := Descendants(loop, 10); !slices.Equal(got, []int{11, 12}) {
		t.Fatalf("Descendants in a loop = %v, want [11 12]", got)
	}
	if got := Descendants(nil, 10); len(got) != 0 {
		t.Fatalf("Descendants(none) = %v", got)
	}
}
