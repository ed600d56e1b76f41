package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// PollInterval is how often --follow looks for new lines.
const PollInterval = 200 * time.Millisecond

// CLIOptions is what `jail audit` was asked for (package main parses the
// command line; this package runs it).
type CLIOptions struct {
	Follow, JSON, Verify bool
	// Types keeps only events of these types (empty: all).
	Types []string
	// File is the trail, "-" for standard input.
	File string
	// Poll is how often Follow looks for new lines (0: PollInterval).
	Poll time.Duration
}

// Check refuses combinations that make no sense, with what to do.
func (o CLIOptions) Check() error {
	switch {
	case o.File == "":
		return errors.New("needs a FILE (the trail), or - for standard input")
	case o.Verify && (o.Follow || o.JSON || len(o.Types) > 0):
		return errors.New("--verify takes no other flag")
	case o.Follow && o.File == "-":
		return errors.New("--follow needs a file, not standard input")
	}
	for _, t := range o.Types {
		if !slices.Contains(Types, t) {
			return fmt.Errorf("--type %s: want one of %s", t, strings.Join(Types, ", "))
		}
	}
	return nil
}

// RunCLI runs `jail audit` and returns its exit status: 0 fine, 1 broken
// or unreadable trail. --follow stops at an exit event, SIGINT, SIGTERM or
// when ctx is done.
func RunCLI(ctx context.Context, o CLIOptions, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.Poll == 0 {
		o.Poll = PollInterval
	}
	c := &cliOpts{follow: o.Follow, json: o.JSON, verify: o.Verify, types: map[string]bool{}, file: o.File, poll: o.Poll}
	for _, t := range o.Types {
		c.types[t] = true
	}
	return run(ctx, c, stdout, stderr)
}

type cliOpts struct {
	follow, json, verify bool
	types                map[string]bool
	file                 string
	poll                 time.Duration
}

func run(ctx context.Context, o *cliOpts, stdout, stderr io.Writer) int {
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
	if res.Lines == 0 && !res.Truncated {
		// jail's first write is the start event: an empty file is no trail
		// it finished, or one whose lines were all taken out.
		fmt.Fprintf(stdout, "warning: no line at all: jail writes a start event first; this is not a trail it wrote, or it was emptied\n")
	}
	if !res.Ended && res.Lines > 0 {
		fmt.Fprintf(stdout, "warning: no exit event: the run is live, jail was killed, or the tail was cut; compare the head with a copy kept elsewhere (audit-syslog)\n")
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
