package ns

import (
	"reflect"
	"testing"
)

// Strings that are not UTF-8 (an error naming a file called "\xff", an
// exec'd command's name in the trail) cross the socket byte for byte: JSON
// turned each invalid byte into U+FFFD.
func TestSendRecvKeepsBytes(t *testing.T) {
	sup, child := pair(t)
	want := Message{Type: MsgError, Error: "open /ws/caf\xe9.txt: denied", Text: "\xff\xfe",
		Names: []string{"record:/x/\xc0\xaf"}, Info: map[string]string{"k\xff": "v\xed\xa0\x80"}}
	if err := child.Send(want); err != nil {
		t.Fatal(err)
	}
	got, files, err := sup.Recv()
	if err != nil || len(files) != 0 {
		t.Fatalf("Recv: %v, %d files", err, len(files))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", []any{got.Error, got.Text, got.Names, got.Info}, []any{want.Error, want.Text, want.Names, want.Info})
	}
}
