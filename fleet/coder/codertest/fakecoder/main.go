// Command fakecoder runs the fake Coder deployment of the tests
// (fleet/coder/codertest) by hand, on loopback, so that `agentinfra agent
// list --backend coder` and the MCP tools can be tried and measured
// without a Coder deployment:
//
//	go run ./fleet/coder/codertest/fakecoder --token T --workspaces 50
//
// It prints CODER_URL=... and CODER_SESSION_TOKEN=... lines (ready for
// `eval` or `export`) on stdout and serves until interrupted. Its clock
// moves every --step (default 1 s): a new workspace's build goes pending →
// running → succeeded in two steps and its agent is ready one step later;
// an agent given a task answers it one step after that.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/internal/httpguard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakecoder:", err)
		stop()
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// presets are the roles of every template, the first the default.
var presets = []string{"Coder", "Operator", "Reviewer"}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakecoder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen on HOST:PORT (loopback only; port 0 picks a free one)")
	token := fs.String("token", "", "the session token it accepts (default: a random one, printed)")
	templates := fs.Int("templates", 1, "templates (projects), each with the presets "+fmt.Sprint(presets)+" and an \"AI Prompt\" parameter")
	workspaces := fs.Int("workspaces", 3, "ready workspaces (agents) owned by the token's user")
	foreign := fs.Int("foreign", 2, "ready workspaces owned by someone else (bob), which only a query without owner:me lists")
	step := fs.Duration("step", time.Second, "how often the clock moves builds, agents and tasks one step on")
	agentMetadata := fs.Bool("agent-metadata", false, "give each workspace Coder agent metadata (branch, pull request)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !httpguard.IsLoopbackHost(host) {
		return fmt.Errorf("%w: --addr %q: give a loopback HOST:PORT such as 127.0.0.1:0 (the fake accepts any client that has the token)", errUsage, *addr)
	}
	if *templates < 1 || *workspaces < 0 || *foreign < 0 || *step <= 0 {
		return fmt.Errorf("%w: --templates must be at least 1, --workspaces and --foreign not negative, --step positive", errUsage)
	}
	opts := []codertest.Option{codertest.WithAddr(*addr), codertest.WithStartTime(time.Now())}
	if *token != "" {
		opts = append(opts, codertest.WithToken(*token))
	}
	srv, err := codertest.Start(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := seed(srv, *templates, *workspaces, *foreign, *agentMetadata); err != nil {
		return err
	}
	srv.RunClock(*step)
	fmt.Fprintf(stdout, "CODER_URL=%s\nCODER_SESSION_TOKEN=%s\n", srv.URL, srv.Token)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	fmt.Fprintf(stderr, "fakecoder: %d workspaces of %s (+%d of bob) on %d templates at %s; the clock moves every %s; Ctrl-C stops it\n",
		*workspaces, srv.Owner, *foreign, *templates, srv.URL, *step)
	<-ctx.Done()
	return nil
}

// seed adds the templates and the workspaces, spread over templates and
// presets in turn.
func seed(srv *codertest.Server, templates, workspaces, foreign int, agentMetadata bool) error {
	names := []string{"agents"} // codertest.Start's own template
	for i := 2; i <= templates; i++ {
		n := fmt.Sprintf("agents-%d", i)
		srv.AddTemplate(n, fmt.Sprintf("Agents %d", i), presets...)
		names = append(names, n)
	}
	for i := 0; i < workspaces; i++ {
		tmpl := names[i%len(names)]
		preset := presets[(i/len(names))%2] // the first template has two presets only
		name := fmt.Sprintf("agent-%d", i+1)
		if _, err := srv.AddReadyWorkspace("me", name, tmpl, preset); err != nil {
			return err
		}
		if agentMetadata {
			if err := srv.SetAgentMetadata(name,
				item("branch", "Branch", "agent/"+name),
				item("pull_request", "Pull request", fmt.Sprint(800+i))); err != nil {
				return err
			}
		}
	}
	for i := 1; i <= foreign; i++ {
		if _, err := srv.AddReadyWorkspace("bob", fmt.Sprintf("bob-%d", i), names[0], ""); err != nil {
			return err
		}
	}
	return nil
}

func item(key, display, value string) coder.WorkspaceAgentMetadata {
	return coder.WorkspaceAgentMetadata{
		Description: coder.WorkspaceAgentMetadataDescription{Key: key, DisplayName: display, Script: "echo " + value, Interval: 10, Timeout: 1},
		Result:      coder.WorkspaceAgentMetadataResult{Value: value},
	}
}
