package procstat

import (
	"bytes"
	"testing"
)

func TestStatusField(t *testing.T) {
	const status = "Name:\tNSpid:\\t7\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t5244\n" +
		"NSpid:\t5244\t12\t1\nSigIgn:\t0000000000080000\nSeccomp:\t2\nSeccomp_filters:\t1\nEmpty:\n"
	for _, tt := range []struct {
		in, key, want string
		ok            bool
	}{
		{status, "NSpid", "5244\t12\t1", true},
		{status, "Pid", "5244", true},
		{status, "State", "S (sleeping)", true},
		{status, "Seccomp", "2", true}, // not Seccomp_filters, a longer key
		{status, "Seccomp_filters", "1", true},
		{status, "Empty", "", true},
		{status, "Sig", "", false}, // a prefix of a key is not the key
		{status, "Name", `NSpid:\t7`, true},
		{"Pid:\t1\nPid:\t2\n", "Pid", "1", true}, // the first line
		{"XPid:\t3\n", "Pid", "", false},
		{"Pid:\t9", "Pid", "9", true}, // no final newline
		{"Pid", "Pid", "", false},
		{"", "Pid", "", false},
	} {
		got, ok := StatusField([]byte(tt.in), tt.key)
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("StatusField(%q, %q) = %q, %v; want %q, %v", tt.in, tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzStatusField: a value found is what follows "key:" at a line's
// start, and holds no line break.
func FuzzStatusField(f *testing.F) {
	f.Add([]byte("Pid:\t5\nNSpid:\t5\t1\n"), "NSpid")
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		v, ok := StatusField(b, key)
		if !ok {
			if len(v) != 0 {
				t.Fatalf("a value without a field: %q", v)
			}
			return
		}
		if bytes.IndexByte(v, '\n') >= 0 {
			t.Fatalf("a value across lines: %q", v)
		}
		if !bytes.HasPrefix(b, []byte(key+":")) && !bytes.Contains(b, []byte("\n"+key+":")) {
			t.Fatalf("%q found in %q, not at a line's start", key, b)
		}
	})
}

// SignalDefault reads the two masks of a /proc/PID/status; anything else
// is not an answer.
func TestSignalDefault(t *testing.T) {
	tests := []struct {
		status  string
		dfl, ok bool
	}{
		{"Name:\tsleep\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n", true, true},
		{"SigIgn:\t0000000000080000\nSigCgt:\t0000000000000000\n", false, true}, // ignored (bit 19: signal 20)
		{"SigIgn:\t0000000000000000\nSigCgt:\t0000000000080000", false, true},   // caught, no final newline
		{"SigIgn:\t0000000000040000\nSigCgt:\t0000000000100000\n", true, true},  // SIGCONT, SIGTTIN: not SIGTSTP
		{"SigIgn:\t0000000000000000\n", false, false},                           // one mask
		{"SigIgn:\tzz\nSigCgt:\t0\n", false, false},                             // not hex
		{"Name:\tSigIgn:\\tffff\nSigIgn:\t0\nSigCgt:\t0\n", true, true},         // a name is not a line
		{"", false, false},
	}
	for _, tt := range tests {
		dfl, ok := SignalDefault([]byte(tt.status), 20)
		if dfl != tt.dfl || ok != tt.ok {
			t.Errorf("SignalDefault(%q, 20) = %v, %v; want %v, %v", tt.status, dfl, ok, tt.dfl, tt.ok)
		}
	}
}

func FuzzSignalDefault(f *testing.F) {
	f.Add([]byte("SigIgn:\t0000000000000000\nSigCgt:\t0000000000080000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dfl, ok := SignalDefault(b, 20)
		if dfl && !ok {
			t.Fatalf("default without both masks: %q", b)
		}
	})
}
