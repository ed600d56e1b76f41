package sandbox

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/jail-sandbox/jail/internal/jsongen"
)

// checkDecodeFar fails t when decodeFar takes b and reads it otherwise
// than json.Unmarshal does (or takes what json.Unmarshal refuses).
func checkDecodeFar(t *testing.T, b []byte) (ok bool) {
	t.Helper()
	have, ok := decodeFar(b)
	if !ok {
		return false
	}
	var want farRecord
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("decodeFar took %q, which json.Unmarshal refuses: %v", b, err)
	}
	if !reflect.DeepEqual(have, want) {
		t.Fatalf("decodeFar read %q as\n%#v\njson.Unmarshal as\n%#v", b, have, want)
	}
	return true
}

// Every record the encoder writes is read by decodeFar, as json.Unmarshal
// reads it, but for names with an escape (those go to json.Unmarshal).
func TestDecodeFarReadsWhatIsWritten(t *testing.T) {
	taken := 0
	for seed := uint64(0); seed < 2000; seed++ {
		var r farRecord
		if seed > 0 {
			jsongen.Fill(jsongen.Rand(seed), reflect.ValueOf(&r).Elem())
		}
		r.Gen = map[string]uint64{"2049": seed, "64768": 1} // written so by farWriting: never nil
		b, err := marshalFar(&r)
		if err != nil {
			t.Fatal(err)
		}
		if checkDecodeFar(t, b) {
			taken++
		}
	}
	if taken < 500 {
		t.Fatalf("decodeFar took %d of 2000 written records: the fast path is not taken", taken)
	}
	for _, b := range []string{
		`{"gen":{}}`,
		`{"gen":{"1":2},"writers":[{"dev":1,"pid":2,"tick":3}],"left":[{"name":"/run/a.sock","inos":[],"dev":1,"gen":2}]}`,
	} {
		if !checkDecodeFar(t, []byte(b)) {
			t.Errorf("decodeFar refused %s", b)
		}
	}
	for _, b := range []string{
		`{"gen":null}`,          // Unmarshal's: a nil map
		`{"gen":{"a":01}}`,      // not JSON
		`{"gen":{"a":1.5}}`,     // Unmarshal's error
		`{"gen":{"a\u0062":1}}`, // an escape
		`{"gen":{"a":-1}}`,      // a sign
		`{"gen":{},"writers":[{"dev":1,"pid":9223372036854775808,"tick":3}]}`,  // over an int
		`{"gen":{},"left":[{"name":"x","inos":[4294967296],"dev":1,"gen":2}]}`, // over a uint32
		`{"gen":{},"left":[{"name":"x","inos":null,"dev":1,"gen":2}]}`,
		`{"gen":{}} `,             // a space
		`{"gen":{},"writers":[]}`, // never written so (omitempty)
		"{\"gen\":{\"\xff\":1}}",  // not UTF-8: Unmarshal changes it
	} {
		if checkDecodeFar(t, []byte(b)) {
			t.Errorf("decodeFar took %s: json.Unmarshal's to read", b)
		}
	}
}

func FuzzDecodeFar(f *testing.F) {
	f.Add([]byte(`{"gen":{"1":2},"writers":[{"dev":1,"pid":2,"tick":3}],"left":[{"name":"/run/a.sock","inos":[7,8],"dev":1,"gen":2}]}`))
	f.Add([]byte(`{"gen":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeFar(t, b) })
}
