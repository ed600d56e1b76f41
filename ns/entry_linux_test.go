package ns

import "testing"

// The lean init's entry (cmd/jail-init/entry_linux_amd64.s) holds these
// three names as bytes: a change here must be made there too, within its
// 16- and 10-byte buffers (NUL included).
func TestEntryArgs(t *testing.T) {
	if EntryArg0 != "jail:init-entry" || InitArg0 != "jail:init" {
		t.Fatalf("EntryArg0 %q, InitArg0 %q: entry_linux_amd64.s compares and execs \"jail:init-entry\" and \"jail:init\"; change both places", EntryArg0, InitArg0)
	}
	// Its exec-less start names init with prctl(PR_SET_NAME, "jail-init").
	if InitComm != "jail-init" {
		t.Fatalf("InitComm %q: entry_linux_amd64.s names init \"jail-init\" when it does not exec it; change both places", InitComm)
	}
}

// writeMaps' text is the kernel's: one "inside outside count" line per
// range, as Go's fork wrote it.
func TestFormatMaps(t *testing.T) {
	uids, _ := idMaps(true)
	if got := formatMaps(uids); got != "0 65534 1\n" {
		t.Errorf("rootful uid map %q", got)
	}
	if got := formatMaps(nil); got != "" {
		t.Errorf("no map: %q", got)
	}
}
