package gitguard

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// maxQuotedLines bounds the lines one quoted value may span (a quote never
// closed reads no further than this).
const maxQuotedLines = 64

// quotedAt reads the quoted value that begins s (its opening quote: ' or "
// as YAML, JSON and TOML write them, or TOML's triple quotes), continued on
// the lines after lines[i] when it does not close on its own, and returns
// its values: as the parsers read it (YAML's escapes and line folding,
// JSON's and TOML's escapes) and, when that differs, as written (more is
// protected, never less). rest is what follows the closing quote on line
// end. ok is false when it does not close.
//
// Why: lefthook reads `extends: ["hooks\x2fevil.yml"]` as hooks/evil.yml
// (lefthook 2.2.1, tried by hand); taken as written the file the host's
// lefthook runs stayed writable (leftovers19).
func quotedAt(lines []string, i int, s string) (vals []string, rest string, end int, ok bool) {
	q := s[:1]
	if strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, "'''") {
		q = s[:3]
	}
	text := s[len(q):]
	for end = i; ; {
		if n, after, found := closeQuote(text, q); found {
			raw := text[:n]
			vals = append(vals, decodeQuoted(raw, q)...)
			return vals, after, end, true
		}
		if end+1 >= len(lines) || end-i >= maxQuotedLines {
			return nil, "", end, false
		}
		end++
		text += "\n" + lines[end]
	}
}

// closeQuote finds q's closing quote in text: the length of the value
// before it, and what follows it.
func closeQuote(text, q string) (n int, after string, ok bool) {
	for j := 0; j < len(text); j++ {
		c := text[j]
		switch {
		case c == '\\' && q[0] == '"':
			j++ // an escaped character never closes
		case c == q[0] && len(q) == 1:
			if q == "'" && j+1 < len(text) && text[j+1] == '\'' {
				j++ // YAML's '' is a quote
				continue
			}
			return j, text[j+1:], true
		case c == q[0] && strings.HasPrefix(text[j:], q):
			// TOML: up to two quotes may end the value right before
			// its closing three.
			k := j
			for k < len(text) && text[k] == q[0] && k-j < 5 {
				k++
			}
			return k - 3, text[k:], true
		}
	}
	return 0, "", false
}

// decodeQuoted is the value raw, written between quotes q, as read, and as
// written when that differs.
func decodeQuoted(raw, q string) []string {
	v := raw
	switch q {
	case `"`:
		d, err := unescape(fold(raw, true), false)
		if err == nil {
			v = d
		}
	case "'":
		v = strings.ReplaceAll(fold(raw, false), "''", "'")
	case `"""`:
		d, err := unescape(tomlFirstLine(raw), true)
		if err == nil {
			v = d
		}
	case "'''":
		v = tomlFirstLine(raw)
	}
	var out []string
	for _, s := range []string{v, raw} {
		if s != "" && (len(out) == 0 || out[0] != s) {
			out = append(out, s)
		}
	}
	return out
}

// tomlFirstLine drops the line break right after a TOML multi-line
// string's opening quotes.
func tomlFirstLine(raw string) string {
	if r, ok := strings.CutPrefix(raw, "\r\n"); ok {
		return r
	}
	return strings.TrimPrefix(raw, "\n")
}

// fold joins a YAML quoted scalar's lines as YAML does: blanks around a
// line break dropped, a break read as a space, each empty line as a line
// break; in a double-quoted one, a break escaped by a backslash joins the
// lines with nothing.
func fold(raw string, double bool) string {
	if !strings.Contains(raw, "\n") {
		return raw
	}
	lines := strings.Split(raw, "\n")
	var b strings.Builder
	join, empty := false, false
	for k, l := range lines {
		l = strings.TrimRight(l, "\r")
		last := k == len(lines)-1
		if k > 0 {
			l = strings.TrimLeft(l, " \t")
			switch {
			case l == "" && !last:
				b.WriteByte('\n')
				empty = true
				continue
			case !empty && !join:
				b.WriteByte(' ')
			}
		}
		empty, join = false, false
		if double && !last && oddBackslashes([]byte(l)) {
			b.WriteString(l[:len(l)-1])
			join = true
			continue
		}
		if !last {
			l = strings.TrimRight(l, " \t")
		}
		b.WriteString(l)
	}
	return b.String()
}

// unescape decodes the escapes of a double-quoted value: YAML's set, which
// holds JSON's and TOML's (tomlML: a TOML multi-line string, where a
// backslash at a line's end drops the break and the blanks after it).
func unescape(s string, tomlML bool) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for j := 0; j < len(s); j++ {
		if s[j] != '\\' {
			b.WriteByte(s[j])
			continue
		}
		if j+1 >= len(s) {
			return "", strconv.ErrSyntax
		}
		j++
		if tomlML {
			if t := strings.TrimLeft(s[j:], " \t"); strings.HasPrefix(t, "\n") || strings.HasPrefix(t, "\r\n") {
				j = len(s) - len(strings.TrimLeft(t, " \t\r\n")) - 1
				continue
			}
		}
		if r, ok := map[byte]string{'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
			'r': "\r", 'e': "\x1b", ' ': " ", '"': `"`, '/': "/", '\\': `\`, 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029"}[s[j]]; ok {
			b.WriteString(r)
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[j]]
		if width == 0 || j+1+width > len(s) {
			return "", strconv.ErrSyntax
		}
		n, err := strconv.ParseUint(s[j+1:j+1+width], 16, 32)
		if err != nil {
			return "", err
		}
		j += width
		r := rune(n)
		// JSON writes a character past U+FFFF as two \u escapes.
		if utf16.IsSurrogate(r) && strings.HasPrefix(s[j+1:], `\u`) && len(s) >= j+7 {
			if lo, err := strconv.ParseUint(s[j+3:j+7], 16, 32); err == nil {
				if c := utf16.DecodeRune(r, rune(lo)); c != '\uFFFD' {
					r = c
					j += 6
				}
			}
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

// blockScalarAt reads a YAML block scalar whose header (| or >, with its
// chomping and indentation indicators) ends lines[i], parent the indentation
// of the node it belongs to: its lines are those below, more indented, and
// empty ones between. It returns the values (with trailing line breaks
// stripped, and as its chomping keeps them when that differs) and the last
// line read; ok is false when header is no block scalar's.
//
// Why: lefthook 2.2.1 reads `- >-` or `- |-` with the name on the next line
// (tried by hand); taken as a name, ">-" left the file writable
// (leftovers19).
func blockScalarAt(lines []string, i int, header string, parent int) (vals []string, end int, ok bool) {
	if header == "" || header[0] != '|' && header[0] != '>' || strings.Trim(header[1:], "+-123456789") != "" {
		return nil, i, false
	}
	var raw []string
	m := -1 // the first line's indentation: the text's, unless the header says
	for end = i; end+1 < len(lines); end++ {
		l := strings.TrimRight(lines[end+1], "\r")
		if strings.TrimSpace(l) == "" {
			raw = append(raw, "")
			continue
		}
		if indent(l) <= parent {
			break
		}
		if m < 0 {
			m = indent(l)
		}
		raw = append(raw, l)
	}
	// Trailing empty lines are no part of the text (chomping's).
	kept := len(raw)
	for kept > 0 && raw[kept-1] == "" {
		kept--
	}
	trail := len(raw) - kept
	end -= trail
	raw = raw[:kept]
	indents := []int{m}
	if j := strings.IndexAny(header, "123456789"); j >= 0 {
		// An explicit indentation: relative to the parent node's, which a
		// line reader knows only roughly (a list item's is past its "-"):
		// both read.
		indents = append(indents, parent+int(header[j]-'0'))
	}
	for _, m := range indents {
		body := make([]string, 0, len(raw))
		for _, l := range raw {
			if len(l) >= m && strings.TrimLeft(l[:m], " \t") == "" {
				l = l[m:]
			} else {
				l = strings.TrimLeft(l, " \t")
			}
			body = append(body, l)
		}
		text := strings.Join(body, "\n")
		if header[0] == '>' {
			text = foldBlock(body)
		}
		if text == "" {
			continue
		}
		add := []string{text}
		switch {
		case strings.Contains(header, "+"):
			add = append(add, text+strings.Repeat("\n", trail+1))
		case !strings.Contains(header, "-"):
			add = append(add, text+"\n")
		}
		for _, v := range add {
			if !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
	}
	return vals, end, true
}

// foldBlock joins a folded block scalar's lines (its indentation gone): a
// line break between two lines of text is a space, each empty line a line
// break, and lines indented further keep their breaks.
func foldBlock(ls []string) string {
	var b strings.Builder
	empties, text, prevMore := 0, false, false
	for _, l := range ls {
		if l == "" {
			empties++
			continue
		}
		more := l[0] == ' ' || l[0] == '\t'
		switch {
		case !text:
			b.WriteString(strings.Repeat("\n", empties))
		case empties > 0:
			b.WriteString(strings.Repeat("\n", empties))
		case more || prevMore:
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
		b.WriteString(l)
		empties, text, prevMore = 0, true, more
	}
	return b.String()
}
