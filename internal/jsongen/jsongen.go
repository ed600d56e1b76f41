// Package jsongen writes Go source that encodes given types to JSON byte
// for byte as encoding/json's Marshal does, without reflection at run
// time: one function a struct type, made from the types by reflection
// when the source is generated. A start marshals its policy and plan
// (60 KB under an agent's profile) once, in a fresh process, where
// Marshal first builds its encoders by reflection: 1-2.5 ms of the
// supervisor's CPU beside the agent's start (issue 16).
//
// Only what Marshal does the same way in every context is generated:
// structs (an untagged embedded struct's fields in its place), strings,
// booleans, integers, float64,
// byte slices, slices, maps with string keys, pointers, types with a
// value-receiver MarshalText (its text as a string, as Marshal writes
// it) and types with a value-receiver MarshalJSON (encoded by Marshal
// itself: they are small, time.Time). Interfaces are Marshal's too.
// Anything else (an embedded pointer, two fields of one name at any
// depth, which Marshal settles by depth and tags, a ",string" or
// "omitzero" option, a
// pointer-receiver marshaler, whose use depends on addressability) is an
// error: the caller then keeps Marshal for that type. The generated
// source is checked against the types by its package's tests (up to
// date, and equal output on random values).
package jsongen

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"go/format"
	"reflect"
	"sort"
	"strings"
)

// Root is a type to generate an encoder for, and the encoder's name: the
// generated function is func Name(b []byte, v *T) ([]byte, error).
type Root struct {
	Name string
	Type reflect.Type
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

type gen struct {
	pkgPath  string            // the generated file's package
	imports  map[string]string // import path -> name used
	names    map[string]string // name used -> import path
	funcs    map[reflect.Type]string
	order    []reflect.Type
	body     bytes.Buffer
	needEnc  bool
	needJSON bool
	needSort bool
}

// Generate returns the source of package pkgName (import path pkgPath)
// with an encoder for each root and for every struct type they reach.
// header is written above the package clause (the generated-code line
// and how to regenerate), footer after the encoders (where the package
// takes them up).
func Generate(header, pkgName, pkgPath string, roots []Root, footer string) ([]byte, error) {
	g := &gen{pkgPath: pkgPath, imports: map[string]string{}, names: map[string]string{}, funcs: map[reflect.Type]string{}}
	for _, r := range roots {
		if r.Type.Kind() != reflect.Struct {
			return nil, fmt.Errorf("jsongen: root %s: not a struct", r.Type)
		}
		g.funcs[r.Type] = r.Name
		g.order = append(g.order, r.Type)
	}
	for i := 0; i < len(g.order); i++ {
		if err := g.structFunc(g.order[i]); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	out.WriteString(header)
	fmt.Fprintf(&out, "package %s\n\nimport (\n", pkgName)
	if g.needJSON {
		out.WriteString("\t\"encoding/json\"\n")
	}
	if g.needSort {
		out.WriteString("\t\"slices\"\n")
	}
	out.WriteString("\t\"strconv\"\n\n")
	if g.needEnc {
		out.WriteString("\t\"github.com/jail-sandbox/jail/internal/jsonenc\"\n")
	}
	paths := make([]string, 0, len(g.imports))
	for p := range g.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		name := g.imports[p]
		if name == p[strings.LastIndex(p, "/")+1:] {
			fmt.Fprintf(&out, "\t%q\n", p)
		} else {
			fmt.Fprintf(&out, "\t%s %q\n", name, p)
		}
	}
	out.WriteString(")\n\n")
	out.WriteString("var _ = strconv.AppendInt\n\n")
	out.Write(g.body.Bytes())
	out.WriteString(footer)
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("jsongen: format: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// typeName is t as the generated file names it.
func (g *gen) typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + g.typeName(t.Elem())
	case reflect.Slice:
		if t.Name() == "" {
			return "[]" + g.typeName(t.Elem())
		}
	case reflect.Map:
		if t.Name() == "" {
			return "map[" + g.typeName(t.Key()) + "]" + g.typeName(t.Elem())
		}
	}
	if t.Name() == "" {
		return t.String() // an unnamed basic or interface type
	}
	if t.PkgPath() == "" || t.PkgPath() == g.pkgPath {
		return t.Name()
	}
	return g.importName(t) + "." + t.Name()
}

// importName is the name the file imports t's package by.
func (g *gen) importName(t reflect.Type) string {
	p := t.PkgPath()
	if n, ok := g.imports[p]; ok {
		return n
	}
	base, _, _ := strings.Cut(t.String(), ".")
	base = strings.TrimLeft(base, "*[]")
	n := base
	for i := 2; ; i++ {
		if _, taken := g.names[n]; !taken && n != "json" && n != "jsonenc" && n != "strconv" && n != "slices" {
			break
		}
		n = fmt.Sprintf("%s%d", base, i)
	}
	g.imports[p], g.names[n] = n, p
	return n
}

// funcFor is the name of struct type t's encoder, queued to be written.
func (g *gen) funcFor(t reflect.Type) string {
	if n, ok := g.funcs[t]; ok {
		return n
	}
	n := "json"
	for _, part := range strings.FieldsFunc(t.String(), func(r rune) bool { return r == '.' || r == '/' || r == '-' }) {
		n += strings.ToUpper(part[:1]) + part[1:]
	}
	for taken := true; taken; {
		taken = false
		for _, v := range g.funcs {
			if v == n {
				n += "_"
				taken = true
			}
		}
	}
	g.funcs[t] = n
	g.order = append(g.order, t)
	return n
}

// field is a struct field as Marshal encodes it.
type field struct {
	goName    string
	key       string // `"name":`, escaped as Marshal writes it
	omitEmpty bool
	typ       reflect.Type
}

// fields is Marshal's field list of t: its exported fields in order,
// with an untagged embedded struct's fields in its place (Marshal's
// order by index sequence). What Marshal would settle by depth and tags
// (one name twice, at any depth) is refused, as are embedded pointers,
// tagged embedded structs and embedded types with a marshaler of their
// own (promoted to t, which is then not encoded field by field).
func (g *gen) fields(t reflect.Type) ([]field, error) {
	var out []field
	if err := g.appendFields(&out, t, t, "", map[string]bool{}); err != nil {
		return nil, err
	}
	return out, nil
}

func (g *gen) appendFields(out *[]field, root, t reflect.Type, prefix string, seen map[string]bool) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous {
			if tag == "-" {
				continue
			}
			ft := f.Type
			switch {
			case ft.Kind() != reflect.Struct:
				return fmt.Errorf("jsongen: %s.%s%s: embedded fields other than structs are not generated", root, prefix, f.Name)
			case tag != "":
				return fmt.Errorf("jsongen: %s.%s%s: a tagged embedded struct is not generated", root, prefix, f.Name)
			case ft.Implements(marshalerType) || ft.Implements(textMarshalerType) ||
				reflect.PointerTo(ft).Implements(marshalerType) || reflect.PointerTo(ft).Implements(textMarshalerType):
				return fmt.Errorf("jsongen: %s.%s%s: an embedded type with a marshaler is not generated", root, prefix, f.Name)
			case !f.IsExported() && t.PkgPath() != g.pkgPath:
				// Named in the generated file by its field name, which
				// another package cannot write.
				return fmt.Errorf("jsongen: %s.%s%s: an unexported embedded type of another package is not generated", root, prefix, f.Name)
			}
			if err := g.appendFields(out, root, ft, prefix+f.Name+".", seen); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		} else if !validName(name) {
			return fmt.Errorf("jsongen: %s.%s%s: tag name %q is not one Marshal takes as it is", root, prefix, f.Name, name)
		}
		omit := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omit = true
			default:
				return fmt.Errorf("jsongen: %s.%s%s: option %q is not generated", root, prefix, f.Name, o)
			}
		}
		if seen[name] {
			return fmt.Errorf("jsongen: %s: two fields named %q", root, name)
		}
		seen[name] = true
		k, _ := json.Marshal(name)
		*out = append(*out, field{goName: prefix + f.Name, key: string(k) + ":", omitEmpty: omit, typ: f.Type})
	}
	return nil
}

// validName: a tag name made only of what Marshal's isValidTag allows.
func validName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c > 127:
		default:
			return false
		}
	}
	return s != ""
}

func (g *gen) structFunc(t reflect.Type) error {
	fs, err := g.fields(t)
	if err != nil {
		return err
	}
	name := g.funcs[t]
	fmt.Fprintf(&g.body, "// %s appends v as encoding/json's Marshal writes a %s.\nfunc %s(b []byte, v *%s) ([]byte, error) {\n", name, t, name, g.typeName(t))
	g.body.WriteString("\tvar err error\n\t_ = err\n\tb = append(b, '{')\n")
	for _, f := range fs {
		x := "v." + f.goName
		if f.omitEmpty {
			cond, err := g.nonEmpty(f.typ, x)
			if err != nil {
				return fmt.Errorf("jsongen: %s.%s: %w", t, f.goName, err)
			}
			fmt.Fprintf(&g.body, "\tif %s {\n", cond)
		}
		if e, ok := g.simple(f.typ, x, fmt.Sprintf("append(b, %q...)", f.key)); ok {
			// One line: the key, the value, the comma.
			fmt.Fprintf(&g.body, "\tb = append(%s, ',')\n", e)
		} else {
			fmt.Fprintf(&g.body, "\tb = append(b, %q...)\n\t{\n", f.key)
			if err := g.value(f.typ, x, 1, true); err != nil {
				return fmt.Errorf("jsongen: %s.%s: %w", t, f.goName, err)
			}
			g.body.WriteString("\t}\n\tb = append(b, ',')\n")
		}
		if f.omitEmpty {
			g.body.WriteString("\t}\n")
		}
	}
	g.needEnc = true
	g.body.WriteString("\treturn jsonenc.EndObject(b), nil\n}\n\n")
	return nil
}

// simple is the expression appending x (of type t) to the bytes expression
// to, where x is one that needs no statement of its own: a string, a
// boolean, an integer, a []string, a []byte.
func (g *gen) simple(t reflect.Type, x, to string) (string, bool) {
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return "", false
	}
	switch t.Kind() {
	case reflect.String:
		g.needEnc = true
		return fmt.Sprintf("jsonenc.String(%s, string(%s))", to, x), true
	case reflect.Bool:
		g.needEnc = true
		return fmt.Sprintf("jsonenc.Bool(%s, bool(%s))", to, x), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("strconv.AppendInt(%s, int64(%s), 10)", to, x), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("strconv.AppendUint(%s, uint64(%s), 10)", to, x), true
	case reflect.Slice:
		if t.Elem() == reflect.TypeFor[string]() {
			g.needEnc = true
			return fmt.Sprintf("jsonenc.Strings(%s, %s)", to, x), true
		}
		if e := t.Elem(); e.Kind() == reflect.Uint8 && !reflect.PointerTo(e).Implements(marshalerType) && !reflect.PointerTo(e).Implements(textMarshalerType) {
			// Marshal's base64, as for any byte kind without a marshaler.
			g.needEnc = true
			return fmt.Sprintf("jsonenc.Bytes(%s, []byte(%s))", to, x), true
		}
	}
	return "", false
}

// nonEmpty is the condition under which Marshal writes an omitempty field
// of type t (its isEmptyValue, negated).
func (g *gen) nonEmpty(t reflect.Type, x string) (string, error) {
	switch t.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return "len(" + x + ") != 0", nil
	case reflect.Bool:
		return x, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return x + " != 0", nil
	case reflect.Interface, reflect.Pointer:
		return x + " != nil", nil
	case reflect.Struct:
		return "true", nil // never empty
	}
	return "", fmt.Errorf("omitempty on a %s", t.Kind())
}

// value writes the statements appending x (of type t) to b; addr: x is
// a variable (&x is valid), not a map's element.
func (g *gen) value(t reflect.Type, x string, depth int, addr bool) error {
	w := func(format string, a ...any) { fmt.Fprintf(&g.body, "\t"+format+"\n", a...) }
	if t.Implements(marshalerType) {
		// A value receiver: Marshal calls it wherever the value is. Its
		// own encoding (with its compaction and escaping) is taken.
		g.needJSON = true
		w("if m, err := json.Marshal(%s); err != nil {\nreturn b, err\n} else {\nb = append(b, m...)\n}", x)
		return nil
	}
	if t.Implements(textMarshalerType) {
		// Marshal writes the text as a string (after a nil pointer's
		// null), escaped as any string.
		g.needEnc = true
		if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
			w("if %s == nil {\nb = append(b, \"null\"...)\n} else", x)
		}
		w("if m, err := %s.MarshalText(); err != nil {\nreturn b, err\n} else {\nb = jsonenc.String(b, string(m))\n}", x)
		return nil
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) {
		return fmt.Errorf("%s: a pointer-receiver marshaler (Marshal uses it only where the value is addressable)", t)
	}
	if e, ok := g.simple(t, x, "b"); ok {
		w("b = %s", e)
		return nil
	}
	switch t.Kind() {
	case reflect.Float64:
		g.needEnc = true
		w("if b, err = jsonenc.Float64(b, float64(%s)); err != nil {\nreturn b, err\n}", x)
	case reflect.Interface:
		g.needJSON = true
		w("if %s == nil {\nb = append(b, \"null\"...)\n} else if m, err := json.Marshal(%s); err != nil {\nreturn b, err\n} else {\nb = append(b, m...)\n}", x, x)
	case reflect.Pointer:
		w("if %s == nil {\nb = append(b, \"null\"...)\n} else {", x)
		if err := g.value(t.Elem(), "(*"+x+")", depth+1, true); err != nil {
			return err
		}
		w("}")
	case reflect.Struct:
		fn := g.funcFor(t)
		p := "&" + x
		if !addr {
			// A map's element is no variable: a copy.
			v := fmt.Sprintf("s%d", depth)
			w("%s := %s", v, x)
			p = "&" + v
		}
		w("if b, err = %s(b, %s); err != nil {\nreturn b, err\n}", fn, p)
	case reflect.Slice: // of anything simple does not take
		i := fmt.Sprintf("i%d", depth)
		w("if %s == nil {\nb = append(b, \"null\"...)\n} else {\nb = append(b, '[')", x)
		w("for %s := range %s {", i, x)
		if err := g.value(t.Elem(), x+"["+i+"]", depth+1, true); err != nil {
			return err
		}
		w("b = append(b, ',')\n}")
		g.needEnc = true
		w("b = jsonenc.EndArray(b)\n}")
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalerType) {
			return fmt.Errorf("%s: only string keys are generated", t)
		}
		g.needSort, g.needEnc = true, true
		k, ks, m := fmt.Sprintf("k%d", depth), fmt.Sprintf("ks%d", depth), fmt.Sprintf("m%d", depth)
		w("if %s == nil {\nb = append(b, \"null\"...)\n} else {", x)
		w("%s := %s", m, x)
		w("%s := make([]string, 0, len(%s))\nfor %s := range %s {\n%s = append(%s, string(%s))\n}\nslices.Sort(%s)", ks, m, k, m, ks, ks, k, ks)
		w("b = append(b, '{')\nfor _, %s := range %s {\nb = jsonenc.String(b, %s)\nb = append(b, ':')", k, ks, k)
		if err := g.value(t.Elem(), m+"["+g.keyConv(t.Key(), k)+"]", depth+1, false); err != nil {
			return err
		}
		w("b = append(b, ',')\n}\nb = jsonenc.EndObject(b)\n}")
	default:
		return fmt.Errorf("%s: kind %s is not generated", t, t.Kind())
	}
	return nil
}

// keyConv converts string k back to map key type t.
func (g *gen) keyConv(t reflect.Type, k string) string {
	if t.Name() == "string" && t.PkgPath() == "" {
		return k
	}
	return g.typeName(t) + "(" + k + ")"
}
