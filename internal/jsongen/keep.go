package jsongen

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
)

// The helpers below are for the tests of a package with generated
// encoders: that its file is what the types give now (File.Check), and
// that its encoders write json.Marshal's bytes (Fill, Same,
// SameAsMarshal).

// SumPlaceholder stands, in the source Generate returns, for the sha256
// the file records of its own source: the footer writes it as the quoted
// string "SUM-OF-SOURCE", and kept puts the sum in its place when it
// writes the file.
const SumPlaceholder = "SUM-OF-SOURCE"

// kept tells whether the generated file, which records recorded as the
// sum of the source it was made as, is what the types give now (src,
// with the placeholder). With JAIL_REGENERATE=1 in the environment it
// writes src to file instead, the sum in place. The sum, not the file,
// is compared: CI runs test binaries where the sources are not (as
// another user, from another directory). how is the command that makes
// the file again, for the error.
func kept(file string, src []byte, recorded, how string) error {
	sum := fmt.Sprintf("%x", sha256.Sum256(src))
	if os.Getenv("JAIL_REGENERATE") == "1" {
		quoted := []byte(`"` + SumPlaceholder + `"`)
		if bytes.Count(src, quoted) != 1 {
			return fmt.Errorf("jsongen: %s: the source has %d placeholders for its sum, not one", file, bytes.Count(src, quoted))
		}
		return os.WriteFile(file, bytes.Replace(src, quoted, []byte(`"`+sum+`"`), 1), 0o644)
	}
	if recorded == "" {
		return fmt.Errorf("no generated encoders (%s): %s", file, how)
	}
	if recorded != sum {
		return fmt.Errorf("%s is not the types' encoders (generated as %.12s, the types give %.12s): %s", file, recorded, sum, how)
	}
	return nil
}

// Same says how have (and herr) differ from json.Marshal's want (and
// werr): nil when the bytes are equal, or when both failed.
func Same(have []byte, herr error, want []byte, werr error) error {
	if (werr == nil) != (herr == nil) {
		return fmt.Errorf("error %v, json.Marshal's %v", herr, werr)
	}
	if werr != nil || bytes.Equal(have, want) {
		return nil
	}
	i := 0
	for i < len(have) && i < len(want) && have[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Errorf("not json.Marshal's bytes from byte %d:\nhave ...%s\nwant ...%s", i, have[lo:min(len(have), i+80)], want[lo:min(len(want), i+80)])
}

// fillStrings and fillFloats are where JSON encoders go wrong: every
// escape, invalid UTF-8, the line separators, the float forms' edges.
var fillStrings = []string{"", "a", "/home/u/.ssh", `<script>&amp;"q"\`, "\x00\x01\x1f\x7f", "\b\f\n\r\t", "\xff\xfe", "caf\u00e9 \u2028\u2029 \U0001F600", "a\xe2\x80", "=x=y"}

var fillFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-7, 1e-6, 123456789.125, 1e20, 1e21, 1e22, math.MaxFloat64, math.SmallestNonzeroFloat64}

// Fill sets every exported field of v (settable) from r: the strings,
// numbers and lengths above, nil and empty slices and maps, nil
// pointers, interfaces holding a string, an error or a map.
func Fill(r *rand.Rand, v reflect.Value) { fill(r, v, 0) }

func fill(r *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillStrings[r.IntN(len(fillStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch r.IntN(3) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(-int64(r.Uint64() >> (65 - v.Type().Bits())))
		default:
			v.SetInt(int64(r.Uint64() >> (65 - v.Type().Bits())))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if r.IntN(3) == 0 {
			v.SetUint(0)
		} else {
			v.SetUint(r.Uint64() >> (64 - v.Type().Bits()))
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(fillFloats[r.IntN(len(fillFloats))])
	case reflect.Pointer:
		if depth > 6 || r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch n := r.IntN(5); {
		case n == 0 || depth > 6:
			v.SetZero() // nil
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1) // empty or a few
			for i := 0; i < s.Len(); i++ {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := r.IntN(5); {
		case n == 0 || depth > 6:
			v.SetZero()
		default:
			m := reflect.MakeMapWithSize(v.Type(), n)
			for i := 0; i < n-1; i++ {
				k := reflect.New(v.Type().Key()).Elem()
				fill(r, k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	case reflect.Interface:
		switch r.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			if v.Type().NumMethod() == 0 {
				v.Set(reflect.ValueOf(fillStrings[r.IntN(len(fillStrings))]))
			}
		case 2:
			if reflect.TypeFor[error]().Implements(v.Type()) {
				v.Set(reflect.ValueOf(errors.New("scope: <none>")))
			}
		default:
			if v.Type().NumMethod() == 0 {
				v.Set(reflect.ValueOf(map[string]any{"n": 1.5, "s": []any{"x", nil}}))
			}
		}
	}
}

// Rand is the random source Fill takes for seed: one seed, one filling.
func Rand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// File is a package's generated file of encoders, as its tests describe
// it: Source makes it, Check compares it (or, with JAIL_REGENERATE=1,
// writes it).
type File struct {
	Name    string // in the package's directory: "zjson_linux.go"
	Package string // the package's name
	Path    string // its import path
	Dir     string // its directory for go test: "./audit"
	// Without says what json.Marshal writes when the file is gone (the
	// header's last words, with their verb): "the guard's record is".
	Without string
	Roots   []Root
	// Init are the statements of the file's init that hand the encoders
	// to the package; SumVar is the package's string variable that gets
	// the file's sum.
	Init   string
	SumVar string
}

// how is the command that makes f again.
func (f File) how() string {
	return "JAIL_REGENERATE=1 go test -run TestJSONGenerated " + f.Dir
}

// Source is f's source as the types are now, its sum a placeholder.
func (f File) Source() ([]byte, error) {
	header := "// Code generated by internal/jsongen (TestJSONGenerated); DO NOT EDIT.\n" +
		"// Made again with: " + f.how() + "\n" +
		"// (a field gone, and this file no longer builds: delete it first; without it\n" +
		"// " + f.Without + " json.Marshal's, as before.)\n\n"
	footer := "func init() {\n" + f.Init + "\t" + f.SumVar + " = \"" + SumPlaceholder + "\"\n}\n"
	return Generate(header, f.Package, f.Path, f.Roots, footer)
}

// Check is kept for f: recorded is the sum the package's file gave it.
func (f File) Check(recorded string) error {
	src, err := f.Source()
	if err != nil {
		return err
	}
	return kept(f.Name, src, recorded, f.how())
}

// SameAsMarshal fills a T from seed (the zero T for seed 0) and says how
// enc's bytes of it differ from json.Marshal's (nil: they do not).
func SameAsMarshal[T any](seed uint64, enc func(*T) ([]byte, error)) error {
	var v T
	if seed != 0 {
		Fill(Rand(seed), reflect.ValueOf(&v).Elem())
	}
	want, werr := json.Marshal(v)
	have, herr := enc(&v)
	if err := Same(have, herr, want, werr); err != nil {
		return fmt.Errorf("seed %d: %w", seed, err)
	}
	return nil
}

// SameForSeeds is SameAsMarshal for the seeds 0 to n-1: the first
// difference.
func SameForSeeds[T any](n uint64, enc func(*T) ([]byte, error)) error {
	for seed := uint64(0); seed < n; seed++ {
		if err := SameAsMarshal(seed, enc); err != nil {
			return err
		}
	}
	return nil
}
