package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const usage = `usage: jail audit [--follow] [--json] [--type T]... [--verify] FILE

  (no flag)   print a summary: command, duration, exit, counts, commands,
              network destinations, denials, limits, chain verification
  --follow    print events as they are written, until an exit event or ^C
  --json      print raw JSON lines instead of readable ones
  --type T    only events of type T (repeatable, or comma-separated):
              ` + "start exec dns net deny limit signal kill timeout exit dropped" + `
  --verify    check the hash chain only; exit 0 if intact, 1 if broken
FILE may be - for standard input (not with --follow).
Exit status: 0 fine, 1 broken or unreadable trail, 2 usage error.
`

// PollInterval is how often --follow looks for new lines.
const PollInterval = 200 * time.Millisecond

type cliOpts struct {
	follow, json, verify bool
	types                map[string]bool
	file                 string
	poll                 time.Duration
}

type typeList map[string]bool

func (t typeList) String() string { return "" }
func (t typeList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			t[s] = true
		}
	}
	return nil
}

// Main implements `jail audit`; args are the words after "audit". It
// returns the exit status: 0 fine, 1 broken or unreadable trail, 2 usage.
// --follow stops at an exit event, SIGINT or SIGTERM.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdout, stderr, PollInterval)
}

func parseArgs(args []string, stderr io.Writer) (*cliOpts, bool) {
	o := &cliOpts{types: map[string]bool{}}
	fs := flag.NewFlagSet("jail audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.follow, "follow", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.verify, "verify", false, "")
	fs.Var(typeList(o.types), "type", "")
	var files []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stderr, usage)
				return nil, false
			}
			fmt.Fprintf(stderr, "jail audit: %v\n%s", err, usage)
			return nil, false
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		files = append(files, rest[0]) // allow flags after FILE too
		rest = rest[1:]
	}
	switch {
	case len(files) != 1:
		fmt.Fprintf(stderr, "jail audit: want exactly one FILE, got %d\n%s", len(files), usage)
		return nil, false
	case o.verify && (o.follow || o.json || len(o.types) > 0):
		fmt.Fprintf(stderr, "jail audit: --verify takes no other flag\n%s", usage)
		return nil, false
	case o.follow && files[0] == "-":
		fmt.Fprintf(stderr, "jail audit: --follow needs a file, not standard input\n%s", usage)
		return nil, false
	}
	o.file = files[0]
	return o, true
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, poll time.Duration) int {
	o, ok := parseArgs(args, stderr)
	if !ok {
		return 2
	}
	o.poll = poll
	if o.follow {
		return follow(ctx, o, stdout, stderr)
	}
	var in io.Reader = os.Stdin
	if o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			fmt.Fprintf(stderr, "jail audit: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	switch {
	case o.verify:
		return verifyCmd(in, o.file, stdout, stderr)
	case o.json || len(o.types) > 0:
		return list(in, o, stdout, stderr)
	}
	s, err := Summarize(in)
	if err != nil {
		fmt.Fprintf(stderr, "jail audit: %v\n", err)
		return 1
	}
	if err := s.Write(stdout, o.file); err != nil {
		fmt.Fprintf(stderr, "jail audit: %v\n", err)
		return 1
	}
	if !s.Verify.OK {
		return 1
	}
	return 0
}

func verifyCmd(in io.Reader, name string, stdout, stderr io.Writer) int {
	res, err := Verify(in)
	var ve *VerifyError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(stdout, "%s: %v\n", name, err)
		for _, p := range res.Problems[1:] {
			fmt.Fprintf(stdout, "  also line %d: %s\n", p.Line, p.Reason)
		}
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "jail audit: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: chain verified: %d lines, seq 1-%d, head %s\n", name, res.Lines, res.LastSeq, res.Head)
	if res.Truncated {
		fmt.Fprintf(stdout, "warning: final line incomplete (jail was killed mid-write); it is not covered\n")
	}
	if !res.Ended && res.Lines > 0 {
		fmt.Fprintf(stdout, "warning: no exit event: the run is live, jail was killed, or the tail was cut; compare the head with a copy kept elsewhere (--audit-syslog)\n")
	}
	return 0
}

// list prints matching events, raw (--json) or readable, one per line.
func list(in io.Reader, o *cliOpts, stdout, stderr io.Writer) int {
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	rd := NewReader(in)
	status := 0
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return status
		}
		var le *LineError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "jail audit: %s: %v\n", o.file, le)
			status = 1
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "jail audit: %v\n", err)
			return 1
		}
		emitRecord(bw, rec, o)
	}
}

func emitRecord(w io.Writer, rec *Record, o *cliOpts) {
	if len(o.types) > 0 && !o.types[rec.Type] {
		return
	}
	if o.json {
		w.Write(rec.Raw)
		io.WriteString(w, "\n")
		return
	}
	io.WriteString(w, FormatRecord(rec)+"\n")
}

// follow tails a live trail by polling, verifying the chain as it goes.
func follow(ctx context.Context, o *cliOpts, stdout, stderr io.Writer) int {
	f, err := os.Open(o.file)
	if err != nil {
		fmt.Fprintf(stderr, "jail audit: %v\n", err)
		return 1
	}
	defer f.Close()
	chain := NewChain()
	var pending []byte
	buf := make([]byte, 64<<10)
	line, status := 0, 0
	for {
		n, err := f.Read(buf)
		pending = append(pending, buf[:n]...)
		ended := false
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			raw := pending[:i]
			line++
			rec, perr := ParseLine(line, raw)
			if p := chain.Add(line, raw, rec, perr); p != nil {
				fmt.Fprintf(stderr, "jail audit: %s: chain broken at line %d: %s\n", o.file, p.Line, p.Reason)
				status = 1
			}
			if rec != nil {
				emitRecord(stdout, rec, o)
				ended = ended || rec.Type == TypeExit
			}
			pending = pending[i+1:]
		}
		if len(pending) > MaxLineBytes {
			line++
			fmt.Fprintf(stderr, "jail audit: %s: line %d: %v\n", o.file, line, ErrLineTooLong)
			return 1
		}
		if ended {
			return status
		}
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintf(stderr, "jail audit: %v\n", err)
			return 1
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return status
			case <-time.After(o.poll):
			}
		}
	}
}
