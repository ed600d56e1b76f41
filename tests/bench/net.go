package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// net: egress through jail's proxy to a loopback server (allowed by name, pin
// and IP rule) vs the same probe run directly on the host: 1 GiB download,
// connection setup p50/p99, DNS answer p50, supervisor memory with 1,000 flows.
func (b *bench) net() error {
	size := int64(b.pick(256, 1024)) << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	go serve(ln, size)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	const name = "n.bench.test"
	flags := []string{"--allow-domain", name + ":" + port, "--add-host", name + ":127.0.0.1", "--allow-ip", "127.0.0.1/32:" + port}
	direct, proxied := "127.0.0.1:"+port, name+":"+port
	if _, err := run(b.ws, b.jailArgv(flags, b.probe, "ping", proxied, "1")...); err != nil {
		return fmt.Errorf("egress through jail does not work yet: %v", err)
	}

	rate := func(size int64, unit float64) func(result) (float64, error) {
		return func(r result) (float64, error) {
			ns, err := field(r.out, "ns")
			if err != nil {
				return 0, err
			}
			if n, err := field(r.out, "bytes"); err != nil || int64(n) != size {
				return 0, fmt.Errorf("downloaded %v of %d bytes (%v)", n, size, err)
			}
			return float64(size) / unit / (ns / 1e9), nil
		}
	}
	gibps := rate(size, 1<<30)
	// The variants, alternated: direct (one TCP connection on loopback); a
	// plain splice relay in a process of its own (two TCP connections on
	// loopback and a relaying process, no checks: the least any relaying
	// proxy costs here, against which the direct baseline's fairness is
	// judged); the probe in jail with --net host (the sandbox's own cost:
	// seccomp, namespaces, no proxy); jail's proxy; and with JAIL_BIN_B set,
	// a second jail binary (an A/B of a change in one run).
	relayAddr, relayCPU, stopRelay, err := b.startRelay(ln.Addr().String())
	if err != nil {
		return err
	}
	defer stopRelay()
	type target struct {
		name, addr, jail string
		flags            []string
		helper           func() time.Duration // CPU of a helper process so far
	}
	targets := []target{
		{name: "direct", addr: direct},
		{name: "plain splice relay (no jail)", addr: relayAddr, helper: relayCPU},
		{name: "jail --net host (no proxy)", addr: direct, jail: b.jail, flags: []string{"--net", "host"}},
		{name: "through jail", addr: proxied, jail: b.jail, flags: flags},
	}
	if jb := os.Getenv("JAIL_BIN_B"); jb != "" {
		targets = append(targets, target{name: "through jail B (" + filepath.Base(jb) + ")", addr: proxied, jail: jb, flags: flags})
	}
	argv := func(t target, mode string, args ...string) []string {
		cmd := append([]string{b.probe, mode, t.addr}, args...)
		if t.jail == "" {
			return cmd
		}
		jb := *b
		jb.jail = t.jail
		return jb.jailArgv(t.flags, cmd...)
	}
	rounds := b.pick(1, 3)
	if r, err := strconv.Atoi(os.Getenv("JAIL_BENCH_NET_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	// CPU of a run: the probe's (with jail, everything jail ran), this
	// process's meanwhile (the server) and the helper's since its last run
	// (it is idle in between). On a loaded machine CPU is steadier than
	// time, and it says what the rate can reach on 2 cores.
	helperLast := make([]time.Duration, len(targets))
	runCPU := func(i int, r result) time.Duration {
		c := r.self
		if r.rusage != nil {
			c += time.Duration(r.rusage.Utime.Nano() + r.rusage.Stime.Nano())
		}
		if h := targets[i].helper; h != nil {
			now := h()
			c += now - helperLast[i]
			helperLast[i] = now
		}
		return c
	}
	for i, t := range targets {
		if t.helper != nil {
			helperLast[i] = t.helper()
		}
	}
	isJail := func(t target) bool { return t.addr == proxied }
	// tail drops the warm-up round's share of samples pooled over rounds.
	tail := func(xs []float64) []float64 { return xs[len(xs)/(rounds+1):] }

	cpu := make([][]float64, len(targets))
	var vs []variant
	for i, t := range targets {
		vs = append(vs, variant{name: t.name, argv: argv(t, "get"), value: func(r result) (float64, error) {
			v, err := gibps(r)
			cpu[i] = append(cpu[i], runCPU(i, r).Seconds()/(float64(size)/(1<<30)))
			return v, err
		}})
	}
	s, err := alternate(b.ws, rounds, vs)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d MiB download", size>>20)
	for i, t := range targets {
		note := ""
		if i > 0 {
			note = ratio(med(s[i]), med(s[0]), "direct")
		}
		if isJail(t) {
			note += " (target >= 0.8); " + ratio(med(s[i]), med(s[1]), "plain relay")
		}
		b.add(row{"net", what + ", " + t.name, med(s[i]), p90(s[i]), "GiB/s", note})
	}
	for i, t := range targets {
		c := tail(cpu[i])
		note := "sender + receiver"
		if i > 0 {
			note = ratio(med(c), med(tail(cpu[0])), "direct")
		}
		b.add(row{"net", what + ", CPU per GiB, " + t.name, med(c), p90(c), "s", note})
	}

	// The same through a fast Internet link's rate (the server paces its
	// sending): what a download from a real registry sees, where the relay's
	// CPU is not the limit. Not the goal's measure, which stays the above.
	vs = vs[:0]
	var pacedIdx []int
	for i, t := range targets {
		if i == 0 || t.addr == proxied {
			pacedIdx = append(pacedIdx, i)
			vs = append(vs, variant{name: t.name, argv: argv(t, "get-paced"), value: rate(size/4, 1<<20)})
		}
	}
	ps, err := alternate(b.ws, rounds, vs)
	if err != nil {
		return err
	}
	for k, i := range pacedIdx {
		note := fmt.Sprintf("server paced at %d MiB/s", pacedRate>>20)
		if k > 0 {
			note = ratio(med(ps[k]), med(ps[0]), "direct at the same pace")
		}
		b.add(row{"net", fmt.Sprintf("%d MiB paced download, %s", size>>22, targets[i].name), med(ps[k]), p90(ps[k]), "MiB/s", note})
	}

	// Connection setup: every try's own figure, pooled over the rounds. CPU
	// per connection, all processes involved: a run of n connections less a
	// run of one (the start and exit of the probe, or of jail), over n-1.
	n := b.pick(100, 300)
	lat := make([][]float64, len(targets))
	ccpu := make([][]float64, len(targets))
	fixed := make([][]float64, len(targets))
	vs = vs[:0]
	for i, t := range targets {
		vs = append(vs, variant{name: t.name, argv: argv(t, "ping", strconv.Itoa(n)), value: func(r result) (float64, error) {
			xs, err := allFields(r.out, "ns")
			lat[i] = append(lat[i], xs...)
			ccpu[i] = append(ccpu[i], float64(runCPU(i, r).Microseconds()))
			return 0, err
		}}, variant{name: t.name + ", one connection", argv: argv(t, "ping", "1"), value: func(r result) (float64, error) {
			fixed[i] = append(fixed[i], float64(runCPU(i, r).Microseconds()))
			return 0, nil
		}})
	}
	if _, err := alternate(b.ws, rounds, vs); err != nil {
		return err
	}
	perConn := make([]float64, len(targets))
	for i := range lat {
		lat[i] = tail(lat[i])
		perConn[i] = (med(tail(ccpu[i])) - med(tail(fixed[i]))) / float64(n-1)
	}
	for i, t := range targets {
		note := "(p90 column: p99)"
		if i > 0 {
			note += fmt.Sprintf(" overhead p50 %+.3f ms, p99 %+.3f ms", med(lat[i])-med(lat[0]), quantile(lat[i], 0.99)-quantile(lat[0], 0.99))
		}
		if isJail(t) {
			note += " (target p50 <= +0.2 ms)"
		}
		b.add(row{"net", "connect + 1-byte echo, " + t.name, med(lat[i]), quantile(lat[i], 0.99), "ms", note})
	}
	for i := range targets {
		note := "all processes, less a run of one connection"
		if i > 0 {
			note = fmt.Sprintf("%+.0f µs vs direct", perConn[i]-perConn[0])
		}
		b.add(row{"net", "CPU per connection, " + targets[i].name, perConn[i], nanF, "µs", note})
	}

	if err := b.greetings(flags, n, rounds, "127.0.0.1:0", ""); err != nil {
		return err
	}
	// The same on MySQL's port, which the proxy knows as server-first
	// before any flow (netproxy's wellKnownServerFirst): a run's first
	// connection too is dialled at once. Skipped when the port is taken.
	if err := b.greetings(flags, n, rounds, "127.0.0.1:3306", " (well-known port 3306)"); err != nil {
		if !errors.Is(err, syscall.EADDRINUSE) && !errors.Is(err, syscall.EACCES) {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: greeting rows on port 3306 skipped: %v\n", err)
	}

	res, err := run(b.ws, b.jailArgv(flags, b.probe, "dns", name, strconv.Itoa(n), strings.Join(hostResolvers(), ","))...)
	if err != nil {
		return err
	}
	dns, err := allFields(res.out, "ns")
	if err != nil {
		return err
	}
	b.add(row{"net", "DNS A query inside, allowed name", med(dns), quantile(dns, 0.99), "ms", "(p90 column: p99) target p50 < 1 ms"})

	rss0, err := b.flowsRSS(flags, proxied, 0)
	if err != nil {
		return err
	}
	rss, err := b.flowsRSS(flags, proxied, 1000)
	if err != nil {
		return err
	}
	b.add(row{"net", "supervisor VmRSS, 0 open flows", rss0, nanF, "MiB", ""})
	b.add(row{"net", "supervisor VmRSS, 1000 open flows", rss, nanF, "MiB", fmt.Sprintf("%.1f KiB/flow", (rss-rss0)*1024/1000)})
	return nil
}

// greetings: connections to a server that speaks first (SMTP, MySQL, FTP),
// whose client sends nothing until the server's greeting, direct and
// through jail. The proxy dials a flow for a name only after the client's
// first bytes, or after FirstByteWait (200 ms) of silence; it learns such a
// destination on its first flow and dials later ones at once (netproxy's
// serverfirst.go). So each run's first connection is reported apart from
// the rest.
func (b *bench) greetings(flags []string, n, rounds int, listen, label string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	go serveGreeting(ln)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	const name = "g.bench.test"
	gflags := append(append([]string(nil), flags...), "--allow-domain", name+":"+port, "--add-host", name+":127.0.0.1", "--allow-ip", "127.0.0.1/32:"+port)
	type target struct{ name, jail, addr string }
	targets := []target{{"direct", "", "127.0.0.1:" + port}, {"through jail", b.jail, name + ":" + port}}
	if jb := os.Getenv("JAIL_BIN_B"); jb != "" {
		targets = append(targets, target{"through jail B (" + filepath.Base(jb) + ")", jb, name + ":" + port})
	}
	lat := make([][]float64, len(targets))
	first := make([][]float64, len(targets))
	var vs []variant
	for i, t := range targets {
		argv := []string{b.probe, "greeting", t.addr, strconv.Itoa(n)}
		if t.jail != "" {
			jb := *b
			jb.jail = t.jail
			argv = jb.jailArgv(gflags, argv...)
		}
		vs = append(vs, variant{name: t.name, argv: argv, value: func(r result) (float64, error) {
			xs, err := allFields(r.out, "ns")
			if err == nil {
				first[i] = append(first[i], xs[0])
				lat[i] = append(lat[i], xs[1:]...)
			}
			return 0, err
		}})
	}
	if _, err := alternate(b.ws, rounds, vs); err != nil {
		return err
	}
	for i, t := range targets {
		xs := lat[i][len(lat[i])/(rounds+1):] // less the warm-up round's
		note := "(p90 column: p99) each run's later connections"
		if i > 0 {
			note += fmt.Sprintf("; overhead p50 %+.3f ms", med(xs)-med(lat[0][len(lat[0])/(rounds+1):]))
		}
		b.add(row{"net", "connect + server's greeting" + label + ", " + t.name, med(xs), quantile(xs, 0.99), "ms", note})
	}
	for i, t := range targets {
		note := ""
		if i > 0 && label == "" {
			note = "FirstByteWait; the proxy learns the destination on it"
		} else if i > 0 {
			note = "a port the proxy knows as server-first before any flow"
		}
		b.add(row{"net", "connect + server's greeting" + label + ", first of a run, " + t.name, med(first[i]), p90(first[i]), "ms", note})
	}
	return nil
}

// serveGreeting answers every connection with a greeting first, as an SMTP
// or MySQL server does, then reads until the client closes.
func serveGreeting(ln net.Listener) {
	acceptEach(ln, func(c net.Conn) {
		io.WriteString(c, "220 bench greeting\r\n")
		io.Copy(io.Discard, c)
	})
}

// acceptEach serves every connection ln accepts with h on a goroutine of its
// own, closing it after, until ln is closed.
func acceptEach(ln net.Listener, h func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			h(c)
		}()
	}
}

// flowsRSS runs `probe hold ADDR N` in jail and reads the supervisor's VmRSS
// (MiB) once all N connections are open.
func (b *bench) flowsRSS(flags []string, addr string, n int) (float64, error) {
	argv := b.jailArgv(flags, b.probe, "hold", addr, strconv.Itoa(n))
	cmd := command(argv)
	cmd.Dir = b.ws
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("probe said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			return 0, fmt.Errorf("hold %d flows: %v: %s", n, err, lastLine(stderr.String()))
		}
	case <-time.After(60 * time.Second):
		return 0, fmt.Errorf("hold %d flows: not ready after 60 s", n)
	}
	kb, ok := procStatusKB(cmd.Process.Pid, "VmRSS")
	if !ok {
		return 0, fmt.Errorf("no VmRSS for jail pid %d", cmd.Process.Pid)
	}
	return kb / 1024, nil
}

// pacedRate is the paced download's rate: a fast Internet link, at which
// the relay's CPU cost is not what limits the download.
const pacedRate = 256 << 20 // bytes per second

// serve answers one command byte per connection (control bytes, see the
// probe): 0x01 sends size bytes and closes, 0x02 echoes the byte, 0x03 holds
// the connection until the peer closes, 0x04 sends size/4 bytes at pacedRate.
func serve(ln net.Listener, size int64) {
	acceptEach(ln, func(c net.Conn) {
		var cmd [1]byte
		if _, err := io.ReadFull(c, cmd[:]); err != nil {
			return
		}
		switch cmd[0] {
		case 0x01:
			buf := make([]byte, 256<<10)
			for left := size; left > 0; left -= int64(len(buf)) {
				if _, err := c.Write(buf[:min(left, int64(len(buf)))]); err != nil {
					return
				}
			}
		case 0x04:
			buf := make([]byte, 256<<10)
			start := time.Now()
			for sent := int64(0); sent < size/4; sent += int64(len(buf)) {
				if ahead := time.Duration(sent*int64(time.Second)/pacedRate) - time.Since(start); ahead > 0 {
					time.Sleep(ahead)
				}
				if _, err := c.Write(buf[:min(size/4-sent, int64(len(buf)))]); err != nil {
					return
				}
			}
		case 0x02:
			c.Write(cmd[:])
			io.Copy(io.Discard, c)
		case 0x03:
			io.Copy(io.Discard, c)
		}
	})
}

// startRelay runs `probe relay dst` (a process of its own, as jail's
// supervisor is) and returns its address and a function that reads its CPU
// time so far; stop ends it.
func (b *bench) startRelay(dst string) (addr string, cpu func() time.Duration, stop func(), err error) {
	cmd := exec.Command(b.probe, "relay", dst)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return "", nil, nil, err
	}
	stop = func() { stdin.Close(); cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr=")
	if err != nil || !ok {
		stop()
		return "", nil, nil, fmt.Errorf("probe relay said %q (%v)", line, err)
	}
	cpu = func() time.Duration { return procCPU(cmd.Process.Pid) }
	return addr, cpu, stop, nil
}

// procCPU is a process's user+system time from /proc/PID/stat.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * time.Second / 100 // USER_HZ
}

// hostResolvers lists the host's nameservers, which the DNS probe must not use.
func hostResolvers() []string {
	data, _ := os.ReadFile("/etc/resolv.conf")
	var ns []string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "nameserver" {
			ns = append(ns, f[1])
		}
	}
	return ns
}

// allFields returns every "name=" figure in out, in ms.
func allFields(out, name string) ([]float64, error) {
	var xs []float64
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, err
			}
			xs = append(xs, x/1e6)
		}
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("no %s= in probe output", name)
	}
	return xs, nil
}
