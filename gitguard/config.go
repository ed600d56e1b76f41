package gitguard

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Entry is one variable of a git config file, as git itself reads it:
// Section and Key lowercased, Subsection as written (lowercased for the
// deprecated [section.subsection] form), Value after unquoting and escapes.
// NoValue is a key written without '=' (boolean true).
type Entry struct {
	Section    string
	Subsection string
	// HasSub: the name had a subsection (possibly empty: [x ""]).
	HasSub  bool
	Key     string
	Value   string
	NoValue bool
	Line    int
}

// Name is the dotted name git uses: section[.subsection].key.
func (e Entry) Name() string {
	if e.HasSub {
		return e.Section + "." + e.Subsection + "." + e.Key
	}
	if e.Section == "" {
		return e.Key // a variable before any section header
	}
	return e.Section + "." + e.Key
}

// ErrConfig is wrapped by ParseConfig errors: git itself would refuse the
// file ("bad config line N").
var ErrConfig = errors.New("bad git config")

// ErrNotStrict is wrapped by ParseConfigStrict errors: git may read the file,
// but it uses syntax jail does not accept in a config the agent wrote.
var ErrNotStrict = errors.New("config syntax outside the strict subset")

// maxConfig bounds what is parsed (git has no limit; jail refuses more).
const maxConfig = 1 << 20

// ParseConfig reads a config file the way git 2.39's config.c does
// (git_parse_source, get_base_var, get_extended_base_var, get_value,
// parse_value): a UTF-8 BOM is skipped, "\r\n" is a newline, '#' and ';'
// start comments outside quotes, a section header may be followed by a
// variable on the same line, a backslash-newline continues a value, unknown
// escapes are errors, whitespace outside quotes is folded to one space per
// character and dropped at both ends, names are [A-Za-z][A-Za-z0-9-]*.
// On error the entries before the bad line are returned with it.
func ParseConfig(data []byte) ([]Entry, error) {
	p := &cparser{data: data, line: 1}
	return p.parse()
}

// ParseConfigStrict accepts the plain subset git itself writes: one
// "[section]" or `[section "sub"]` header or one "key = value" per line,
// comments on lines of their own, no continuation lines, no deprecated
// dotted headers, no keys before the first section, no NUL, no lone CR, valid
// UTF-8. A file in this subset means the same to git and to ParseConfig.
func ParseConfigStrict(data []byte) ([]Entry, error) {
	if len(data) > maxConfig {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrNotStrict, maxConfig)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, fmt.Errorf("%w: not plain UTF-8 text", ErrNotStrict)
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if bytes.IndexByte(l, '\r') >= 0 {
			return nil, fmt.Errorf("%w: line %d: carriage return", ErrNotStrict, i+1)
		}
		t := bytes.TrimLeft(l, " \t")
		switch {
		case len(t) == 0, t[0] == '#', t[0] == ';':
		case t[0] == '[':
			// The header ends the line (whitespace or a comment may follow).
			end := headerEnd(t)
			if end < 0 {
				return nil, fmt.Errorf("%w: line %d: header", ErrNotStrict, i+1)
			}
			rest := bytes.TrimLeft(t[end:], " \t")
			if len(rest) > 0 && rest[0] != '#' && rest[0] != ';' {
				return nil, fmt.Errorf("%w: line %d: text after a section header", ErrNotStrict, i+1)
			}
			name := t[1:end]
			if q := bytes.IndexByte(name, '"'); q >= 0 {
				name = name[:q]
			}
			if bytes.IndexByte(bytes.TrimRight(name, " \t"), '.') >= 0 {
				return nil, fmt.Errorf("%w: line %d: dotted section header", ErrNotStrict, i+1)
			}
		default:
			if bytes.HasSuffix(bytes.TrimRight(l, " \t"), []byte("\\")) && oddBackslashes(bytes.TrimRight(l, " \t")) {
				return nil, fmt.Errorf("%w: line %d: continuation line", ErrNotStrict, i+1)
			}
		}
	}
	es, err := ParseConfig(data)
	if err != nil {
		return es, err
	}
	for _, e := range es {
		if e.Section == "" {
			return nil, fmt.Errorf("%w: line %d: variable outside a section", ErrNotStrict, e.Line)
		}
	}
	return es, nil
}

// headerEnd returns the index just after the closing ']' of a header line,
// honouring a quoted subsection with \" and \\ escapes, or -1.
func headerEnd(t []byte) int {
	inq := false
	for i := 1; i < len(t); i++ {
		switch c := t[i]; {
		case inq && c == '\\':
			i++
		case c == '"':
			inq = !inq
		case !inq && c == ']':
			return i + 1
		}
	}
	return -1
}

func oddBackslashes(l []byte) bool {
	n := 0
	for i := len(l) - 1; i >= 0 && l[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

type cparser struct {
	data []byte
	pos  int
	line int
	eof  bool
}

const eofNL = -2

// next is git's get_next_char: "\r\n" -> '\n'; EOF reads as '\n' with eof set.
func (p *cparser) next() int {
	if p.pos >= len(p.data) {
		p.eof = true
		p.line++
		return '\n'
	}
	c := int(p.data[p.pos])
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// isspace is git's sane_ctype GIT_SPACE: tab, LF, CR, space (not VT, FF).
func isspace(c int) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isalpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isalnum(c int) bool { return isalpha(c) || c >= '0' && c <= '9' }
func iskeychar(c int) bool {
	return isalnum(c) || c == '-'
}
func lower(c int) byte {
	if c >= 'A' && c <= 'Z' {
		return byte(c + 'a' - 'A')
	}
	return byte(c)
}

func (p *cparser) parse() ([]Entry, error) {
	if len(p.data) > maxConfig {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrConfig, maxConfig)
	}
	var out []Entry
	var section, sub string
	hasSub := false
	comment := false
	bom := []byte("\xef\xbb\xbf")
	bomAt := 0
	for {
		c := p.next()
		if bom != nil && bomAt < len(bom) {
			if !p.eof && c == int(bom[bomAt]) {
				bomAt++
				continue
			}
			if bomAt != 0 {
				return out, p.err("partial byte order mark")
			}
			bom = nil
		}
		if c == '\n' {
			if p.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment || isspace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			var err error
			section, sub, hasSub, err = p.header()
			if err != nil {
				return out, err
			}
			continue
		}
		if !isalpha(c) {
			return out, p.err("a variable name must start with a letter")
		}
		e := Entry{Section: section, Subsection: sub, HasSub: hasSub, Line: p.line}
		key := []byte{lower(c)}
		for {
			c = p.next()
			if p.eof || !iskeychar(c) {
				break
			}
			key = append(key, lower(c))
		}
		for c == ' ' || c == '\t' {
			c = p.next()
		}
		e.Key = string(key)
		if i := strings.IndexByte(e.Subsection, 0); i >= 0 {
			// git keeps "section.sub.key" in a C string: a NUL in the
			// subsection ends the whole name there, so
			// [core "fsmonitor\0"] x = CMD is core.fsmonitor = CMD to git.
			e.Section, e.Subsection, e.HasSub, e.Key = splitName(e.Section + "." + e.Subsection[:i])
		}
		if c != '\n' {
			if c != '=' {
				return out, p.err("expected '=' after " + e.Key)
			}
			v, ok := p.value()
			if !ok {
				return out, p.err("bad value of " + e.Key)
			}
			e.Value = v
		} else {
			e.NoValue = true
		}
		out = append(out, e)
		if p.eof {
			return out, nil
		}
	}
}

func (p *cparser) err(what string) error {
	return fmt.Errorf("%w: line %d: %s", ErrConfig, p.line, what)
}

// header is get_base_var + get_extended_base_var, after the '['.
func (p *cparser) header() (section, sub string, hasSub bool, err error) {
	var name []byte
	for {
		c := p.next()
		if p.eof {
			return "", "", false, p.err("unterminated section header")
		}
		if c == ']' {
			break
		}
		if isspace(c) {
			s, err := p.extended(c)
			if err != nil {
				return "", "", false, err
			}
			// An empty base name (`[ "x"]`) is accepted by git too; no
			// key can match it.
			return splitDotted(string(name), s, true)
		}
		if !iskeychar(c) && c != '.' {
			return "", "", false, p.err("bad character in section name")
		}
		name = append(name, lower(c))
	}
	if len(name) == 0 {
		return "", "", false, p.err("empty section name")
	}
	return splitDotted(string(name), "", false)
}

// splitName splits a full variable name the way git's lookups see it:
// section up to the first dot, key after the last, subsection between.
func splitName(full string) (sec, sub string, hasSub bool, key string) {
	i, j := strings.IndexByte(full, '.'), strings.LastIndexByte(full, '.')
	if i < 0 {
		return full, "", false, ""
	}
	if i == j {
		return full[:i], "", false, full[i+1:]
	}
	return full[:i], full[i+1 : j], true, full[j+1:]
}

// splitDotted applies git's rule that a dotted base name "a.b.c" means
// section "a", subsection "b.c" (the deprecated [a.b] form, lowercased).
// With an extended subsection, git builds "a.b" + "." + sub: the section is
// still up to the first dot.
func splitDotted(name, ext string, hasExt bool) (string, string, bool, error) {
	sec, rest, dotted := strings.Cut(name, ".")
	switch {
	case dotted && hasExt:
		return sec, rest + "." + ext, true, nil
	case dotted:
		return sec, rest, true, nil
	case hasExt:
		return sec, ext, true, nil
	}
	return sec, "", false, nil
}

func (p *cparser) extended(c int) (string, error) {
	for {
		if c == '\n' {
			return "", p.err("incomplete section header")
		}
		c = p.next()
		if !isspace(c) {
			break
		}
	}
	if c != '"' {
		return "", p.err(`a subsection must be in "quotes"`)
	}
	var sub []byte
	for {
		c = p.next()
		if c == '\n' {
			return "", p.err("incomplete section header")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c == '\n' {
				return "", p.err("incomplete section header")
			}
		}
		sub = append(sub, byte(c))
	}
	if p.next() != ']' {
		return "", p.err("expected ']' after the subsection")
	}
	return string(sub), nil
}

// value is parse_value: it consumes the rest of the line (and continuation
// lines); ok is false where git returns NULL (an open quote at the end of the
// line, an unknown escape).
func (p *cparser) value() (string, bool) {
	var v []byte
	quote, comment := false, false
	space := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			// git keeps the value in a C string: a NUL ends it there.
			if i := bytes.IndexByte(v, 0); i >= 0 {
				v = v[:i]
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isspace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		if c == '\\' {
			c = p.next()
			switch c {
			case '\n':
				// A continuation line (at EOF git reads the fake '\n'
				// here, then ends the value on the next read).
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, byte(c))
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, byte(c))
	}
}

// FormatConfig writes entries in the plain form git writes, which
// ParseConfigStrict accepts and ParseConfig reads back to the same entries.
// Entries that cannot be written so (a name outside [A-Za-z][A-Za-z0-9-]*, a
// subsection with a newline or NUL, a value with NUL) are skipped and
// returned as dropped.
func FormatConfig(es []Entry) (out []byte, dropped []Entry) {
	var b bytes.Buffer
	cur := ""
	for _, e := range es {
		// Only names git itself would have lowercased (a key forged through a
		// NUL keeps its case, and git's lookups do not find it).
		if !validName(e.Section) || !validName(e.Key) || !isalpha(int(e.Key[0])) ||
			strings.ToLower(e.Section) != e.Section || strings.ToLower(e.Key) != e.Key ||
			strings.ContainsAny(e.Subsection, "\n\r\x00") || strings.ContainsAny(e.Value, "\r\x00") ||
			!utf8.ValidString(e.Subsection) || !utf8.ValidString(e.Value) {
			dropped = append(dropped, e)
			continue
		}
		h := "[" + e.Section + "]"
		if e.HasSub {
			h = "[" + e.Section + ` "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e.Subsection) + `"]`
		}
		if h != cur {
			b.WriteString(h + "\n")
			cur = h
		}
		if e.NoValue {
			fmt.Fprintf(&b, "\t%s\n", e.Key)
			continue
		}
		fmt.Fprintf(&b, "\t%s = %s\n", e.Key, quoteValue(e.Value))
	}
	return b.Bytes(), dropped
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !iskeychar(int(s[i])) {
			return false
		}
	}
	return true
}

// quoteValue writes a value as git reads it back: bare when it is made of
// characters that mean nothing to the parser (the form git itself writes),
// else quoted, where only '\\', '"', newline, tab and backspace need escapes
// and whitespace and '#;' are kept as they are.
func quoteValue(v string) string {
	bare := v != ""
	for i := 0; i < len(v) && bare; i++ {
		c := v[i]
		bare = isalnum(int(c)) || strings.IndexByte("._/:@+*,=~^%-", c) >= 0
	}
	if bare {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
