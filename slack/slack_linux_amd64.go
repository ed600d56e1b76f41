package slack

// The entry jumps on to package prefault's.
import _ "github.com/jail-sandbox/jail/prefault"
