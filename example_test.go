//go:build linux

package jail_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// A sandbox started once runs many commands, each with its own stdio and
// exit status.
func Example() {
	p := policy.Default() // no network, the working directory writable
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close() // kills it (it would die with this program anyway)

	out, err := sb.Command("echo", "hello from the sandbox").Output()
	fmt.Printf("%s%v\n", out, err)

	err = sb.Command("sh", "-c", "exit 3").Run()
	fmt.Println(jail.ExitCode(err))

	cmd := sb.Command("tr", "a-z", "A-Z")
	cmd.Stdin = strings.NewReader("stdin too\n")
	out, _ = cmd.Output()
	fmt.Print(string(out))
	// Output:
	// hello from the sandbox
	// <nil>
	// 3
	// STDIN TOO
}

// A command's context ends it: it is killed, the sandbox lives on.
func ExampleSandbox_CommandContext() {
	p := policy.Default()
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = sb.CommandContext(ctx, "sleep", "60").Run()
	var ee *jail.ExitError
	fmt.Println(errors.As(err, &ee), ee.Signal)
	out, _ := sb.Command("echo", "still running").Output()
	fmt.Print(string(out))
	// Output:
	// true 9
	// still running
}

// A named sandbox is reachable by name from any process of the same user
// (here, the same one; `jail exec NAME -- COMMAND` from a shell), and its
// kill reason is in its audit trail.
func ExampleOpen() {
	p := policy.Default()
	name := fmt.Sprintf("example-%d", os.Getpid())
	sb, err := jail.Start(context.Background(), &p, jail.Options{Name: name})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()

	other, err := jail.Open(name)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := other.Command("hostname").Output()
	fmt.Print(string(out))

	_ = other.Kill("the example is done")
	code, _ := sb.Wait(context.Background())
	fmt.Println(code)
	events, _ := sb.Events()
	for _, e := range events {
		if e.Type == "kill" && strings.Contains(string(e.Raw), "the example is done") {
			fmt.Println("kill reason recorded")
		}
	}
	// Output:
	// jail
	// 137
	// kill reason recorded
}
