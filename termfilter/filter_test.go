package termfilter

import (
	"bytes"
	"strings"
	"testing"
)

const (
	esc = "\x1b"
	bel = "\x07"
	st  = "\x1b\\"
)

func filter(t testing.TB, o Options, in string) (string, map[string]int) {
	t.Helper()
	var b bytes.Buffer
	f, err := New(&b, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	return b.String(), f.Dropped()
}

// filterSplit writes in one byte at a time.
func filterSplit(t testing.TB, o Options, in string) string {
	t.Helper()
	var b bytes.Buffer
	f, _ := New(&b, o)
	for i := 0; i < len(in); i++ {
		f.Write([]byte{in[i]})
	}
	return b.String()
}

type tcase struct {
	name string
	in   string
	want string // "=" means unchanged
	drop string // substring of a dropped kind, "" for none
}

var passCases = []tcase{
	{"plain text", "hello, world\r\n", "=", ""},
	{"utf-8 text", "héllo — “quotes” 日本語 🎉\n", "=", ""},
	{"C0 controls", "a\tb\bc\rd\ne\x07f\x00g\x0e\x0f", "=", ""},
	{"SGR", esc + "[1;31mred" + esc + "[0m", "=", ""},
	{"SGR truecolour colons", esc + "[38:2::255:128:0m" + esc + "[48;2;0;0;0m", "=", ""},
	{"cursor moves", esc + "[H" + esc + "[10;20H" + esc + "[2A" + esc + "[K" + esc + "[2J", "=", ""},
	{"scroll region", esc + "[1;24r" + esc + "[S" + esc + "[T", "=", ""},
	{"alternate screen", esc + "[?1049h" + esc + "[?1049l", "=", ""},
	{"bracketed paste", esc + "[?2004h" + esc + "[?2004l", "=", ""},
	{"mouse and focus", esc + "[?1000h" + esc + "[?1006h" + esc + "[?1004h", "=", ""},
	{"synchronized output", esc + "[?2026h" + esc + "[?2026l", "=", ""},
	{"cursor style and visibility", esc + "[5 q" + esc + "[?25l" + esc + "[?25h", "=", ""},
	{"kitty keyboard", esc + "[>1u" + esc + "[<u" + esc + "[?u" + esc + "[=1;1u", "=", ""},
	{"device attributes", esc + "[c" + esc + "[>c" + esc + "[0c", "=", ""},
	{"cursor position report", esc + "[6n" + esc + "[5n" + esc + "[?6n", "=", ""},
	{"DECRQM", esc + "[?2026$p" + esc + "[4$p", "=", ""},
	{"XTVERSION", esc + "[>0q", "=", ""},
	{"title stack", esc + "[22;0t" + esc + "[23;0t" + esc + "[22t", "=", ""},
	{"DECSC DECRC keypad", esc + "7" + esc + "8" + esc + "=" + esc + ">", "=", ""},
	{"index reverse index", esc + "D" + esc + "M" + esc + "E", "=", ""},
	{"charsets", esc + "(0qqq" + esc + "(B" + esc + ")0" + esc + "#8", "=", ""},
	{"RIS", esc + "c", "=", ""},
	{"title BEL", esc + "]0;my title" + bel, "=", ""},
	{"title ST", esc + "]2;vim — main.go" + st, "=", ""},
	{"icon name", esc + "]1;icon" + bel, "=", ""},
	{"C0 inside CSI executes", esc + "[1\r;31m", "\r" + esc + "[1;31m", ""},
	{"DECSET many", esc + "[?1;25;1049h", "=", ""},
	{"modify other keys", esc + "[>4;2m", "=", ""},
	{"modify other keys query (xterm)", esc + "[?4m", "=", ""},
	{"modify other keys query (Gemini CLI)", esc + "[>4;?m", "=", ""},
	{"xterm SGR push", esc + "[#p" + esc + "[#q", "=", ""},
	// Colour queries: the answer is the terminal's colour. Every agent CLI
	// asks for the background (Codex and Copilot CLI for the foreground
	// and the palette too).
	{"OSC 11 background query", esc + "]11;?" + st, "=", ""},
	{"OSC 10 and 11 in one", esc + "]10;?;?" + bel, "=", ""},
	{"OSC 4 palette query", esc + "]4;1;?" + bel + esc + "]4;0;?;15;?" + st, "=", ""},
}

var dropCases = []tcase{
	{"OSC 52 write BEL", "a" + esc + "]52;c;aGVsbG8=" + bel + "b", "ab", "OSC 52"},
	{"OSC 52 write ST", "a" + esc + "]52;c;aGVsbG8=" + st + "b", "ab", "OSC 52"},
	{"OSC 52 read", esc + "]52;c;?" + bel, "", "OSC 52"},
	{"OSC 50 font", esc + "]50;?" + bel, "", "OSC 50"},
	{"OSC 1337 file", esc + "]1337;File=name=eA==;inline=1:AAAA" + bel, "", "OSC 1337"},
	{"OSC 1337 user var", esc + "]1337;SetUserVar=x=eQ==" + st, "", "OSC 1337"},
	{"OSC 46 log file", esc + "]46;/home/u/.bashrc" + bel, "", "OSC 46"},
	{"OSC 3 X property", esc + "]3;WM_NAME=x" + bel, "", "OSC 3"},
	{"OSC 4 set", esc + "]4;1;#ff0000" + bel, "", "OSC 4"},
	{"OSC 4 query and set in one", esc + "]4;1;?;2;red" + bel, "", "OSC 4"},
	{"OSC 4 query without an index", esc + "]4;?" + bel, "", "OSC 4"},
	{"OSC 4 query, index too long", esc + "]4;0001;?" + bel, "", "OSC 4"},
	{"OSC 11 query with more", esc + "]11;?x" + st, "", "OSC 11"},
	{"OSC 11 empty", esc + "]11;" + st, "", "OSC 11"},
	{"OSC 10 set", esc + "]10;#ffffff" + bel, "", "OSC 10"},
	{"OSC 10 query then set", esc + "]10;?;#000000" + bel, "", "OSC 10"},
	{"OSC 11 query, too many", esc + "]11" + strings.Repeat(";?", 17) + bel, "", "OSC 11"},
	{"OSC 11 query past the string limit", esc + "]11;" + strings.Repeat("?;", 3000) + "?" + bel, "", "OSC 11"},
	{"OSC 104 reset, no params", esc + "]104" + bel, "", "OSC 104"},
	{"OSC 8 hyperlink", esc + "]8;;https://evil.example/" + st + "text" + esc + "]8;;" + st, "text", "OSC 8"},
	{"OSC 7 cwd", esc + "]7;file://host/tmp" + bel, "", "OSC 7"},
	{"OSC 9 notify", esc + "]9;pwned" + bel, "", "OSC 9"},
	{"OSC 777 notify", esc + "]777;notify;t;b" + bel, "", "OSC 777"},
	{"OSC 133 shell integration", esc + "]133;A" + bel, "", "OSC 133"},
	{"OSC 633 vscode", esc + "]633;E;rm -rf ~" + bel, "", "OSC 633"},
	{"OSC 5113 kitty file", esc + "]5113;ac=send" + st, "", "OSC 5113"},
	{"OSC 60 feature query", esc + "]60" + bel, "", "OSC 60"},
	{"OSC L icon (dtterm)", esc + "]Lpwn" + st, "", "not numbered"},
	{"OSC l title (dtterm)", esc + "]lpwn" + st, "", "not numbered"},
	{"DECRQSS", esc + "P$qm" + st, "", "DCS"},
	{"XTGETTCAP", esc + "P+q544e" + st, "", "DCS"},
	{"DECUDK", esc + "P0;1|17/6563686f2070776e0a" + st, "", "DCS"},
	{"tmux passthrough", esc + "Ptmux;" + esc + esc + "]52;c;eA==" + bel + st, "", "DCS"},
	{"sixel", esc + "Pq#0;2;0;0;0#0~~" + st, "", "DCS"},
	{"kitty graphics APC", esc + "_Gf=100;AAAA" + st, "", "APC"},
	{"PM", esc + "^privacy" + st, "", "PM"},
	{"SOS", esc + "Xstring" + st, "", "SOS"},
	{"screen title", esc + "kwindow" + st, "", "ESC k"},
	{"title report", esc + "[21t", "", "title report"},
	{"icon report", esc + "[20t", "", "title report"},
	{"window size report", esc + "[18t", "", "CSI t"},
	{"iconify", esc + "[2t", "", "CSI t"},
	{"resize", esc + "[8;100;200t", "", "CSI t"},
	{"XTSMTITLE", esc + "[>2t", "", "XTSMTITLE"},
	{"XTRMTITLE", esc + "[>2T", "", "XTRMTITLE"},
	{"media copy", esc + "[5i", "", "media copy"},
	{"media copy private", esc + "[?5i", "", "media copy"},
	{"DECRQCRA", esc + "[1;1;1;1;24;80*y", "", "checksum"},
	{"DECCKSR", esc + "[?63;1n", "", "DECCKSR"},
	{"DECRQPSR", esc + "[1$w", "", "DECRQPSR"},
	{"DECRQTSR", esc + "[1$u", "", "state report"},
	{"DECRQLP", esc + "[1'|", "", "DECRQLP"},
	{"status line", esc + "[2$~" + esc + "[1$}", "", "status line"},
	{"DECTID", esc + "[5,q", "", "DECTID"},
	{"linux setterm", esc + "[9;1]", "", "setterm"},
	{"VT52", esc + "[?2l", "", "VT52"},
	{"keyboard lock", esc + "[2h", "", "keyboard lock"},
	{"DECID", esc + "Z", "", "DECID"},
	{"DOCS out of UTF-8", esc + "%@", "", "ESC %"},
	{"S8C1T", esc + " G", "", "ESC SP"},
	{"ENQ", "a\x05b", "ab", "ENQ"},
	{"malformed CSI", esc + "[1;?2h", "", "malformed"},
	{"a marker inside a key modifier set", esc + "[>4;?2m", "", "malformed"},
	{"a marker inside a key modifier query", esc + "[>?;?m", "", "malformed"},
	{"key modifier query, another final", esc + "[>4;?h", "", "malformed"},
	{"C1 CSI 8-bit in UTF-8 (invalid byte)", "\x9b21t", "\uFFFD21t", ""},
	{"C1 CSI as UTF-8", "\u009b21t", "", "title report"},
	{"C1 OSC as UTF-8", "\u009d52;c;eA==\u0007x", "x", "OSC 52"},
	{"C1 DCS as UTF-8", "\u0090$qm\u001b\\x", "x", "DCS"},
	{"C1 SGR as UTF-8 passes 7-bit", "\u009b1m", esc + "[1m", ""},
	{"ESC breaks OSC", esc + "]52;c;eA==" + esc + "[1mx", esc + "[1mx", "OSC 52"},
	{"CAN aborts OSC", esc + "]52;c;eA==\x18x", "x", "OSC 52"},
	{"title sanitized", esc + "]0;a\x01b\u0085c\x7fd" + bel, esc + "]0;abcd" + bel, ""},
	{"invalid utf-8", "a\xff\xfeb", "a\uFFFD\uFFFDb", ""},
}

func TestFilterTable(t *testing.T) {
	for _, set := range [][]tcase{passCases, dropCases} {
		for _, c := range set {
			t.Run(c.name, func(t *testing.T) {
				want := c.want
				if want == "=" {
					want = c.in
				}
				got, drops := filter(t, Options{}, c.in)
				if got != want {
					t.Errorf("out %q, want %q", got, want)
				}
				if split := filterSplit(t, Options{}, c.in); split != got {
					t.Errorf("byte by byte %q, whole %q", split, got)
				}
				found := false
				for k := range drops {
					if c.drop != "" && strings.Contains(k, c.drop) {
						found = true
					}
				}
				if c.drop == "" && len(drops) > 0 {
					t.Errorf("dropped %v, want nothing dropped", drops)
				}
				if c.drop != "" && !found {
					t.Errorf("dropped %v, want a kind containing %q", drops, c.drop)
				}
			})
		}
	}
}

func TestFilterAllowClasses(t *testing.T) {
	cases := []struct {
		allow   []string
		in, out string
	}{
		{[]string{Clipboard}, esc + "]52;c;aGVsbG8=" + bel, "="},
		{[]string{Clipboard}, esc + "]52;c;?" + bel, ""},                                  // reads never
		{[]string{Clipboard}, esc + "]52;c;not base64!" + bel, ""},                        // refused content
		{[]string{Clipboard}, esc + "]52;c;" + strings.Repeat("QUFB", 100000) + bel, "="}, // 400 KB
		{[]string{Hyperlinks}, esc + "]8;;https://example.com/" + st + "x" + esc + "]8;;" + st, "="},
		{[]string{Hyperlinks}, esc + "]8;;https://example.com/\u00e9" + st, ""},
		{[]string{Notify}, esc + "]9;done\x01!" + bel, esc + "]9;done!" + bel},
		{[]string{Colors}, esc + "]11;?" + st, "="},
		{[]string{Colors}, esc + "]104" + bel, esc + "]104;" + bel},
		{[]string{Cwd}, esc + "]7;file://h/tmp" + bel, "="},
		{[]string{Hyperlinks}, esc + "]52;c;eA==" + bel, ""}, // one class does not open another
		{[]string{All}, esc + "P$qm" + st + esc + "]52;c;?" + bel + "\x05\x9b", "="},
	}
	for _, c := range cases {
		want := c.out
		if want == "=" {
			want = c.in
		}
		got, _ := filter(t, Options{Allow: c.allow}, c.in)
		if got != want {
			t.Errorf("allow %v: %.80q -> %.80q, want %.80q", c.allow, c.in, got, want)
		}
		if split := filterSplit(t, Options{Allow: c.allow}, c.in); split != got {
			t.Errorf("allow %v: byte by byte differs for %.80q", c.allow, c.in)
		}
	}
	if _, err := New(nil, Options{Allow: []string{"clipbaord"}}); err == nil {
		t.Error("unknown class accepted")
	}
}

func TestFilterEightBit(t *testing.T) {
	o := Options{EightBit: true}
	cases := []struct{ in, out string }{
		{"caf\xe9 \xa0\xff", "="},   // Latin-1 text passes
		{"\x9b21t", ""},             // raw C1 CSI: title report
		{"\x9b1mx", esc + "[1mx"},   // raw C1 CSI SGR, as 7-bit
		{"\x9d52;c;eA==\x9cx", "x"}, // raw OSC ... ST
		{"\x90$qm\x9cx", "x"},       // raw DCS
		{"\xe2\x80\x94", "\xe2"},    // UTF-8 here holds C1 controls: removed
		{esc + "]0;t\x85i\xe9" + bel, esc + "]0;ti\xe9" + bel},
		{"\x85", esc + "E"}, // NEL
	}
	for _, c := range cases {
		want := c.out
		if want == "=" {
			want = c.in
		}
		got, _ := filter(t, o, c.in)
		if got != want {
			t.Errorf("%q -> %q, want %q", c.in, got, want)
		}
		if split := filterSplit(t, o, c.in); split != got {
			t.Errorf("%q: byte by byte %q, whole %q", c.in, split, got)
		}
	}
}

// Bounded: an unterminated string does not hold memory or output forever;
// an over-long CSI is dropped.
func TestFilterBounds(t *testing.T) {
	var b bytes.Buffer
	f, _ := New(&b, Options{})
	f.Write([]byte(esc + "]0;"))
	for i := 0; i < 100; i++ {
		f.Write(bytes.Repeat([]byte("x"), 1000))
	}
	if cap(f.sbuf) > 2*maxString {
		t.Errorf("string buffer grew to %d", cap(f.sbuf))
	}
	f.Write([]byte("\nvisible again\n"))
	if !strings.Contains(b.String(), "visible again") {
		t.Errorf("output never resumed after an unterminated OSC: %q", b.String())
	}
	if strings.Contains(b.String(), "xxx") || strings.Contains(b.String(), esc) {
		t.Errorf("the dropped title leaked: %.100q", b.String())
	}

	b.Reset()
	f, _ = New(&b, Options{})
	f.Write([]byte(esc + "[" + strings.Repeat("1;", 5000) + "mok"))
	if b.String() != "ok" {
		t.Errorf("long CSI: %.80q", b.String())
	}
	if len(f.seq) > maxSeq+2 {
		t.Errorf("CSI buffer grew to %d", len(f.seq))
	}
	// Distinct kinds are bounded too.
	f, _ = New(&b, Options{})
	for i := 1000; i < 3000; i++ {
		f.Write([]byte(esc + "]" + strings.Repeat("9", 1) + itoa(i) + ";x" + bel))
	}
	if n := len(f.Dropped()); n > maxKinds {
		t.Errorf("%d kinds counted", n)
	}
}

func itoa(i int) string {
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// Split anywhere: a UTF-8 character or a sequence cut between writes
// comes out as if written whole.
func TestFilterSplitEverywhere(t *testing.T) {
	in := "héllo " + esc + "[1;31m日本" + esc + "]0;tït" + bel + "🎉" + esc + "]52;c;eA==" + st + "\u009b2J" + esc + "[21t" + "end"
	whole, _ := filter(t, Options{}, in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var b bytes.Buffer
			f, _ := New(&b, Options{})
			f.Write([]byte(in[:i]))
			f.Write([]byte(in[i:j]))
			f.Write([]byte(in[j:]))
			if b.String() != whole {
				t.Fatalf("split at %d,%d: %q, want %q", i, j, b.String(), whole)
			}
		}
	}
}

// The CSI length bound is one bound: a sequence at its edge is passed or
// dropped the same whether it came in one write (the fast path, which
// scans the parameters in place) or cut anywhere (held byte by byte). The
// fast path took two parameter bytes more than the held one: a 255- or
// 256-byte parameter string passed whole and was dropped when split
// (FuzzFilter, session 39).
func TestFilterCSIBoundSplit(t *testing.T) {
	for _, n := range []int{maxSeq - 4, maxSeq - 3, maxSeq - 2, maxSeq - 1, maxSeq, maxSeq + 1} {
		in := esc + "[" + strings.Repeat("0", n) + "A" + "ok"
		whole, _ := filter(t, Options{}, in)
		if want := n <= maxSeq-2; strings.HasPrefix(whole, esc) != want {
			t.Errorf("%d parameter bytes: passed %v, want %v (%.20q)", n, !want, want, whole)
		}
		for i := 0; i <= len(in); i++ {
			var b bytes.Buffer
			f, _ := New(&b, Options{})
			f.Write([]byte(in[:i]))
			f.Write([]byte(in[i:]))
			if b.String() != whole {
				t.Fatalf("%d parameter bytes, split at %d: %.20q, whole: %.20q", n, i, b.String(), whole)
			}
		}
	}
}

// A DCS, an APC, a CSI t and an OSC are named by their kind; queries and
// vim's probe are Quiet and left out of Summary, the rest stay in it.
func TestDroppedKinds(t *testing.T) {
	cases := []struct {
		in, kind string
		quiet    bool
	}{
		{esc + "Pzz" + st, "DCS zz (vim's xterm compatibility probe)", true},
		{esc + "Pzzz" + st, "DCS (device control string)", false},
		{esc + "P$q q" + st, "DCS DECRQSS (a setting query)", true},
		{esc + "P$qm" + st, "DCS DECRQSS (a setting query)", true},
		{esc + "P+q544e;524742" + st, "DCS XTGETTCAP (a terminfo query)", true},
		{esc + "P0;1|17/6563686f2070776e0a" + st, "DCS DECUDK (function key definitions)", false},
		{esc + "Pq#0;2;0;0;0#0~~" + st, "DCS sixel image", false},
		{esc + "P0;0;8q\"1;1;4;4#0~~" + st, "DCS sixel image", false},
		{esc + "Ptmux;" + esc + esc + "]52;c;eA==" + bel + st, "DCS tmux passthrough", false},
		{esc + "P1000p" + st, "DCS (device control string)", false},
		{"\x90$qm\x9c", "DCS DECRQSS (a setting query)", true}, // 8-bit form
		{esc + "P" + st, "DCS (device control string)", false},
		// Claude Code's probes at start: kitty graphics, the cell's
		// size, its program status OSC.
		{esc + "_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA" + st, "APC kitty graphics (a support query)", true},
		{esc + "_Ga=T,f=100;iVBORw0KGgo=" + st, "APC kitty graphics", false},
		{esc + "_Gi=1,s=1,v=1,f=24,t=d,a=q;AAAA" + st, "APC kitty graphics (a support query)", true},
		// Control data longer than what is kept: not taken for a query.
		{esc + "_Gi=1,s=1,v=1,f=24,t=d,m=0,q=2,C=1,X=1,Y=1,z=1,x=0,y=0,w=1,h=1,c=1,r=1,a=q;AAAA" + st, "APC kitty graphics", false},
		{esc + "_junk" + st, "APC (application program command)", false},
		{esc + "[16t", "CSI t (a size or state query)", true},
		{esc + "[14;2t", "CSI t (a size or state query)", true},
		{esc + "[18t", "CSI t (a size or state query)", true},
		{esc + "[8;50;100t", "CSI t (window operation or report)", false},
		{esc + "[3;0;0t", "CSI t (window operation or report)", false},
		{esc + "]7501;?" + bel, "OSC 7501 (a query)", true},
		{esc + "]7501;?x" + bel, "OSC 7501", false},
		{esc + "]11;#000000" + st, "OSC 11 (colours)", false}, // --allow-terminal colors lets it through
		{esc + "]4;1;red" + st, "OSC 4 (colours)", false},
		// A reset leaves the user's colours: the sets are dropped too.
		{esc + "]111" + st, "OSC 111 (a colour reset)", true},
		{esc + "]110" + bel, "OSC 110 (a colour reset)", true},
		{esc + "]104;1;2" + bel, "OSC 104 (a colour reset)", true},
		{esc + "]1337;?" + bel, "OSC 1337 (a query)", true},
		// opencode's probes at start: kitty's notification support,
		// iTerm2's capabilities.
		{esc + "]99;i=opentui-notifications:p=?;" + st, "OSC 99 (a notification support query)", true},
		{esc + "]99;i=1:p=?;body" + st, "OSC 99 (notification)", false},
		{esc + "]99;p=title;hello" + st, "OSC 99 (notification)", false},
		{esc + "]1337;Capabilities" + st, "OSC 1337 (a capability query)", true},
		{esc + "]1337;ReportCellSize" + bel, "OSC 1337 (a capability query)", true},
		{esc + "]1337;CapabilitiesX" + bel, "OSC 1337 (iTerm2: files, variables)", false},
		{esc + "]1337;File=inline=1:QUFB" + bel, "OSC 1337 (iTerm2: files, variables)", false},
	}
	for _, c := range cases {
		var b bytes.Buffer
		f, _ := New(&b, Options{EightBit: strings.HasPrefix(c.in, "\x90")})
		f.Write([]byte(c.in))
		d := f.Dropped()
		intro := c.kind[:3]
		same := 0
		for k, n := range d {
			if strings.HasPrefix(k, intro) {
				same += n
			}
		}
		if same != 1 || d[c.kind] != 1 || b.Len() != 0 {
			t.Errorf("%q: dropped %v, out %q; want one %q", c.in, d, b.String(), c.kind)
		}
		if Quiet(c.kind) != c.quiet {
			t.Errorf("%q: Quiet %v, want %v", c.kind, !c.quiet, c.quiet)
		}
		if s := f.Summary(); strings.Contains(s, intro) == c.quiet {
			t.Errorf("%q: summary %q", c.in, s)
		}
	}
}

// Lift names the classes that would have let some of what was dropped
// through, and whether they cover all of it; a clipboard read, which no
// class lets through, is not the clipboard class's.
func TestFilterLift(t *testing.T) {
	for _, c := range []struct {
		in      string
		allow   []string
		classes string
		all     bool
	}{
		{esc + "]11;#000" + st + esc + "]10;?" + st, nil, "colors", true},
		{esc + "]11;?" + st + esc + "]111" + st, nil, "", false}, // a query passes, a reset is Quiet
		{esc + "]99;i=1:p=?;" + st, nil, "", false},              // a support query: Quiet, nothing to lift
		{esc + "]99;i=1;done" + st, nil, "notify", true},
		{esc + "]8;;https://x.example/" + st + "x" + esc + "]8;;" + st + esc + "]11;#000" + st, nil, "hyperlinks,colors", true},
		{esc + "]8;;https://x.example/" + st + esc + "]110" + st, nil, "hyperlinks", true},
		{esc + "]8;;https://x.example/" + st + esc + "_Ga=T;AAAA" + st, nil, "hyperlinks", false},
		{esc + "]52;c;?" + bel, nil, "", false},
		{esc + "]52;c;eA==" + bel, nil, "clipboard", true},
		{esc + "]52;c;?" + bel, []string{Clipboard}, "", false},
		{esc + "[16t" + esc + "Pzz" + st + esc + "]11;#000" + st, nil, "colors", true}, // Quiet kinds do not count
		{esc + "[16t", nil, "", false},
		{esc + "]11;#000" + st, []string{Hyperlinks}, "colors", true},
	} {
		var b bytes.Buffer
		f, _ := New(&b, Options{Allow: c.allow})
		f.Write([]byte(c.in))
		classes, all := f.Lift()
		if strings.Join(classes, ",") != c.classes || all != c.all {
			t.Errorf("%q (allow %v): lift %q all %v, want %q %v (dropped %v)", c.in, c.allow, classes, all, c.classes, c.all, f.Dropped())
		}
	}
}

func TestFilterSummary(t *testing.T) {
	var b bytes.Buffer
	f, _ := New(&b, Options{})
	f.Write([]byte(esc + "]52;c;eA==" + bel + esc + "]52;c;eA==" + bel + esc + "[21t"))
	s := f.Summary()
	if !strings.HasPrefix(s, "OSC 52 (clipboard) x2") || !strings.Contains(s, "title report") {
		t.Errorf("summary %q", s)
	}
}
