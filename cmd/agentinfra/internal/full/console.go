package full

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/console"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/httpguard"
)

// DefaultConsoleAddr is where `console` listens by default: loopback, a
// free port.
const DefaultConsoleAddr = "127.0.0.1:0"

// consoleExposes says what anyone who reaches a console can do.
const consoleExposes = "who opens a link can approve or reject your agents' requests (and add policy rules), pause and stop sessions, create, start and stop agents, and change tasks' status, over plain HTTP"

// ConsoleOptions is what `console` runs with.
type ConsoleOptions struct {
	IO     *cli.IOStreams
	Env    func(context.Context) (*supervisionEnv, error)
	Fleet  func() (fleet.Backend, error)
	Getenv func(string) string

	Addr        string
	AllowRemote bool
	NoQR        bool
	// Ready, when set, gets the first link once the console listens (tests).
	Ready func(url string)
}

func NewCmdConsole(f *Factory, runF func(context.Context, *ConsoleOptions) error) *cobra.Command {
	o := &ConsoleOptions{IO: f.IO, Env: f.supervision, Fleet: f.fleetOf, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "console",
		Short: "A web page for the inbox, the sessions, the fleet and the task board",
		Long: `Serves the workspace's console: one page where you see and steer every agent —
the approval inbox (approve, approve always, reject with a reason), the
supervised sessions with their live logs (pause, resume, stop), the fleet
(create, start, stop agents) and the task board (the matrix by status; move a
card to change its status). Everything updates live, and every action goes
through the same services as the CLI (the same checks, the same audit log),
as you ($AGENTINFRA_USER, else your login name).

It listens on loopback, on a free port unless --addr says which, and prints a
link with a one-time token (and its QR code on a terminal): opening it signs
that browser in with a session cookie, and the link stops working. The page's
"Open on another device" makes a new link. To reach it from a phone, listen on
an address the phone reaches with --addr and --allow-remote (anyone who
reaches it with a link acts as you; prefer an SSH tunnel or a VPN).
See docs/console.md.`,
		Example: `  agentinfra console
  agentinfra console --addr 127.0.0.1:7788
  agentinfra console --addr 192.168.1.20:7788 --allow-remote   # a phone on this network`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := httpguard.CheckAddr("--addr", o.Addr, o.AllowRemote, "and opens a link could approve your agents' requests, start and stop agents and change tasks"); err != nil {
				return cli.UsageErrorf("%v", err)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return consoleRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Addr, "addr", DefaultConsoleAddr, "listen on HOST:PORT (loopback unless --allow-remote; port 0 picks a free one)")
	cmd.Flags().BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --addr: "+consoleExposes)
	cmd.Flags().BoolVar(&o.NoQR, "no-qr", false, "print the link without its QR code")
	return cmd
}

func consoleRun(ctx context.Context, o *ConsoleOptions) error {
	debug.SetGCPercent(100) // a long-lived server: main's one-shot setting does not fit
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	fl, err := o.Fleet()
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "warning: the fleet page is empty: %v\n", err)
		fl = nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := console.New(ctx, console.Options{Workspace: env.ws, Supervision: env.svc, Fleet: fl, User: env.user.Name, Getenv: o.Getenv})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (pick another --addr)", o.Addr, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	base := "http://" + net.JoinHostPort(host, port)
	if !httpguard.IsLoopbackHost(host) {
		fmt.Fprintf(o.IO.ErrOut, "warning: the console listens on %s, not loopback: %s.\n", ln.Addr(), consoleExposes)
	}
	link := srv.Link(base)
	fmt.Fprintf(o.IO.Out, "agentinfra console for %s, as %s:\n\n  %s\n\nThe link works once (within 15 minutes); the page's \"Open on another device\" makes another. Ctrl-C stops the console.\n",
		env.ws.Root, env.user.Name, link)
	if o.IO.IsTTY && !o.NoQR {
		if qr, err := console.TerminalQR(link); err == nil {
			fmt.Fprintf(o.IO.Out, "\n%s", qr)
		}
	}
	if o.Ready != nil {
		o.Ready(link)
	}
	return console.Serve(ctx, ln, srv)
}
