//go:build !linux

package landlocktest

import "errors"

func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	return "error: " + err.Error()
}

func do(op Op) error { return errors.New("landlocktest: Linux only") }
