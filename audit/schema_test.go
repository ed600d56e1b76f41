package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// docs/audit-schema.md has an example line of every type; each parses,
// decodes strictly into its struct, and documents every field of that struct.
func TestSchemaDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/audit-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]any{TypeStart: &Start{}, TypeExec: &Exec{}, TypeDNS: &DNS{}, TypeNet: &Net{},
		TypeDeny: &Deny{}, TypeLimit: &Limit{}, TypeSignal: &Signal{}, TypeKill: &Kill{},
		TypeTimeout: &Timeout{}, TypeExit: &Exit{}, TypeDropped: &Dropped{}, TypeQuarantine: &Quarantine{}, TypeUnmasked: &Unmasked{}, TypeNotice: &Notice{}, TypeAgent: &Agent{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, `{"ts"`) {
			continue
		}
		n++
		rec, err := ParseLine(n, []byte(line))
		if err != nil {
			t.Fatalf("doc example %d: %v", n, err)
		}
		seen[rec.Type] = true
		v, ok := structs[rec.Type]
		if !ok {
			t.Fatalf("doc example of unknown type %q", rec.Type)
		}
		// Strict decode: every key in the example is a field of the struct.
		obj := map[string]json.RawMessage{}
		json.Unmarshal([]byte(line), &obj)
		for _, k := range reserved {
			delete(obj, k)
		}
		rest, _ := json.Marshal(obj)
		dec := json.NewDecoder(bytes.NewReader(rest))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("doc example %s: %v", rec.Type, err)
		}
	}
	structs["kernel (fields only)"] = &Kernel{}
	seen["kernel (fields only)"] = true
	for typ, v := range structs {
		if !seen[typ] {
			t.Errorf("docs/audit-schema.md has no example %s line", typ)
		}
		rt := reflect.TypeOf(v).Elem()
		for i := 0; i < rt.NumField(); i++ {
			tag := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
			if !bytes.Contains(doc, []byte("`"+tag+"`")) {
				t.Errorf("field %s.%s (%q) is not documented", rt.Name(), rt.Field(i).Name, tag)
			}
		}
	}
	if !bytes.Contains(doc, []byte(GenesisPrev)) || !bytes.Contains(doc, []byte("schema version 1")) {
		t.Error("doc lacks the genesis constant or the schema version")
	}
}
