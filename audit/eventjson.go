package audit

import (
	"encoding/json"

	"github.com/jail-sandbox/jail/internal/jsonenc"
)

// eventEncoding holds the encoders zjson.go generates (package jsongen)
// for the events every run writes: the start event's head, each exec and
// the exit. A run's supervisor is a fresh process, where encoding/json
// would first build each event's encoder by reflection on the path to the
// agent's start (issue 16).
type eventEncoding struct {
	start func([]byte, *Start) ([]byte, error)
	exec  func([]byte, *Exec) ([]byte, error)
	exit  func([]byte, *Exit) ([]byte, error)
}

// eventEncoders is set by zjson.go's init, nil without the file (removed
// to be made again when a type no longer fits it: TestJSONGenerated);
// generatedJSON is the sha256 of the source it was generated as.
var (
	eventEncoders *eventEncoding
	generatedJSON string
)

// marshalEvent is json.Marshal(ev), by the generated encoders for the
// events that have one. An error of theirs (a value JSON has no form
// for) is json.Marshal's own, which is what is returned then.
func marshalEvent(ev any) ([]byte, error) {
	e := eventEncoders
	if e == nil {
		return json.Marshal(ev)
	}
	switch v := ev.(type) {
	case Start:
		return jsonenc.Marshal(e.start, 512, &v)
	case Exec:
		return jsonenc.Marshal(e.exec, 256, &v)
	case Exit:
		return jsonenc.Marshal(e.exit, 256, &v)
	}
	return json.Marshal(ev)
}

// WarmEvents builds encoding/json's encoders of the start, exec and exit
// events ahead of their first use, when they are not generated (without
// zjson.go): once per process, by reflection. Safe from any goroutine;
// it writes nothing.
func WarmEvents() {
	if eventEncoders == nil {
		_, _ = json.Marshal(Start{})
		_, _ = json.Marshal(Exec{Argv: []string{"true"}})
		_, _ = json.Marshal(Exit{})
	}
}
