package credswap

import (
	"reflect"
	"testing"

	"github.com/jail-sandbox/jail/internal/jsongen"
)

var generatedFile = jsongen.File{
	Name: "zjson_linux.go", Package: "credswap", Path: "github.com/jail-sandbox/jail/credswap", Dir: "./credswap",
	Without: "the credential record is",
	Roots:   []jsongen.Root{{Name: "jsonRecord", Type: reflect.TypeFor[record]()}},
	Init:    "\trecordEncoder = jsonRecord\n", SumVar: "generatedJSON",
}

// The credential record is what a later start trusts to put credentials back: a
// field added without making the file again would be missing from it.
func TestJSONGenerated(t *testing.T) {
	if err := generatedFile.Check(generatedJSON); err != nil {
		t.Fatal(err)
	}
}

func TestRecordJSONSameAsMarshal(t *testing.T) {
	if recordEncoder == nil {
		t.Fatal("no generated encoder (zjson_linux.go)")
	}
	if err := jsongen.SameForSeeds(2000, marshalRecord); err != nil {
		t.Fatal(err)
	}
}

func FuzzRecordJSON(f *testing.F) {
	for _, s := range []uint64{0, 1, 42} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		if err := jsongen.SameAsMarshal(seed, marshalRecord); err != nil {
			t.Fatal(err)
		}
	})
}
