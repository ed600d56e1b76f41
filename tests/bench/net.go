package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
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

	gibps := func(r result) (float64, error) {
		ns, err := field(r.out, "ns")
		if err != nil {
			return 0, err
		}
		if n, err := field(r.out, "bytes"); err != nil || int64(n) != size {
			return 0, fmt.Errorf("downloaded %v of %d bytes (%v)", n, size, err)
		}
		return float64(size) / (1 << 30) / (ns / 1e9), nil
	}
	// CPU per GiB, both ends and (through jail) the supervisor and its
	// relay: the sender is this process's server, the receiver the probe
	// (with jail, everything jail ran). On a loaded machine it is steadier
	// than the rate, and it says what the rate can reach on 2 cores.
	var cpu [2][]float64
	both := func(i int) func(result) (float64, error) {
		return func(r result) (float64, error) {
			v, err := gibps(r)
			if err == nil && r.rusage != nil {
				c := time.Duration(r.rusage.Utime.Nano()+r.rusage.Stime.Nano()) + r.self
				cpu[i] = append(cpu[i], c.Seconds()/(float64(size)/(1<<30)))
			}
			return v, err
		}
	}
	s, err := alternate(b.ws, b.pick(1, 3), []variant{
		{name: "direct", argv: []string{b.probe, "get", direct}, value: both(0)},
		{name: "through jail", argv: b.jailArgv(flags, b.probe, "get", proxied), value: both(1)},
	})
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d MiB download", size>>20)
	b.add(row{"net", what + ", direct", med(s[0]), p90(s[0]), "GiB/s", ""})
	b.add(row{"net", what + ", through jail", med(s[1]), p90(s[1]), "GiB/s", ratio(med(s[1]), med(s[0]), "direct (target >= 0.8)")})
	for i := range cpu {
		cpu[i] = cpu[i][len(cpu[i])/(b.pick(1, 3)+1):] // drop the warm-up round
	}
	b.add(row{"net", what + ", CPU per GiB, direct", med(cpu[0]), p90(cpu[0]), "s", "sender + receiver"})
	b.add(row{"net", what + ", CPU per GiB, through jail", med(cpu[1]), p90(cpu[1]), "s",
		ratio(med(cpu[1]), med(cpu[0]), "direct (sender + jail + receiver)")})

	// Connection setup: every try's own figure, pooled over the rounds.
	n := strconv.Itoa(b.pick(100, 300))
	var lat [2][]float64
	collect := func(i int) func(result) (float64, error) {
		return func(r result) (float64, error) {
			xs, err := allFields(r.out, "ns")
			lat[i] = append(lat[i], xs...)
			return 0, err
		}
	}
	if _, err := alternate(b.ws, b.pick(1, 3), []variant{
		{name: "direct", argv: []string{b.probe, "ping", direct, n}, value: collect(0)},
		{name: "through jail", argv: b.jailArgv(flags, b.probe, "ping", proxied, n), value: collect(1)},
	}); err != nil {
		return err
	}
	// The warm-up round was collected too: drop it by keeping the tail.
	for i := range lat {
		lat[i] = lat[i][len(lat[i])/(b.pick(1, 3)+1):]
	}
	b.add(row{"net", "connect + 1-byte echo, direct", med(lat[0]), quantile(lat[0], 0.99), "ms", "(p90 column: p99)"})
	b.add(row{"net", "connect + 1-byte echo, through jail", med(lat[1]), quantile(lat[1], 0.99), "ms",
		fmt.Sprintf("(p90 column: p99) overhead p50 %+.3f ms, p99 %+.3f ms", med(lat[1])-med(lat[0]), quantile(lat[1], 0.99)-quantile(lat[0], 0.99))})

	res, err := run(b.ws, b.jailArgv(flags, b.probe, "dns", name, n, strings.Join(hostResolvers(), ","))...)
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

// serve answers one command byte per connection (control bytes, see the
// probe): 0x01 sends size bytes and closes, 0x02 echoes the byte, 0x03 holds
// the connection until the peer closes.
func serve(ln net.Listener, size int64) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
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
			case 0x02:
				c.Write(cmd[:])
				io.Copy(io.Discard, c)
			case 0x03:
				io.Copy(io.Discard, c)
			}
		}()
	}
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
