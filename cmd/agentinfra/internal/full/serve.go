package full

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/mcpserver"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// serveVersion is announced to MCP clients.
var serveVersion = "dev"

// ServeOptions is what `serve` runs with.
type ServeOptions struct {
	IO        *cli.IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string

	// Addr is the --http address; "" serves stdio.
	Addr        string
	AllowRemote bool
	// TokenFile is --token-file ("": the default file,
	// httpguard.DefaultTokenFile); NoToken is --no-token.
	TokenFile string
	NoToken   bool
	// PrintToken is --print-token: print the token of TokenFile and exit.
	PrintToken bool
	Toolsets   []string
	LogLevel   slog.Level
	// Hosts are the supervised agents' hosts on Coder, whose pending
	// requests list_pending_approvals lists too.
	Hosts func(context.Context) []supervision.HostEntry
}

func NewCmdServe(f *Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv, Hosts: func(ctx context.Context) []supervision.HostEntry {
		hosts, _ := f.workspaceHosts(ctx) // the warnings are the inbox's to print; a tool call's log is not
		return hosts
	}}
	var logLevel string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve agentinfra's tools and resources over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve the workspace over the Model Context Protocol.

Without --http it speaks MCP over stdin/stdout: stdout carries protocol
messages only, logs go to stderr. This is how Gemini CLI and Claude Code start it.

With --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp. The
address must be loopback (127.0.0.1, ::1, localhost) unless --allow-remote is
given. Every request must carry a token, "Authorization: Bearer TOKEN": the
token of --token-file, by default $XDG_CONFIG_HOME/agentinfra/mcp-token (else
~/.config/agentinfra/mcp-token). A missing file is created, mode 0600, with a
random token, which is printed once on stderr; later starts say where it is,
and --print-token prints it (with the same --token-file, if any) and exits.
--no-token serves without one (loopback only): then any local user can call
every tool, and run agents as you. Requests to a loopback address with a
non-loopback Host header, and browser requests from another origin, are
refused; a request's headers and body must arrive within 10 s; at most 64
sessions are open at once, and a session idle for 30 minutes is closed.

Resources support resources/subscribe: changes to .agent/ (by this server, the
CLI or an editor) are notified within 500 ms. --toolsets matrix,fleet,supervision chooses
which tools are exposed (default: all but agent; the fleet's are in docs/fleet.md;
supervision is list_pending_approvals, read-only: an agent must not approve
agents). --toolsets ...,agent adds the agent-side tools, opt-in: for an agent
agentinfra did not launch (your own Claude Code or Gemini) to ask a person to
approve its edits (ask_approval, accept_diff), forward continuation prompts and
take steering messages; each MCP client is a session of its own, owned by you.
See docs/mcp.md.`,
		Example: `  agentinfra serve
  agentinfra serve --http 127.0.0.1:8765
  claude mcp add --transport http agentinfra http://127.0.0.1:8765/mcp \
    --header "Authorization: Bearer $(agentinfra serve --print-token)"
  agentinfra serve --toolsets fleet
  claude mcp add agentinfra-approver -- agentinfra serve --toolsets agent
  agentinfra serve --http 0.0.0.0:8765 --allow-remote --token-file ~/.config/agentinfra/token
  claude mcp add agentinfra -- agentinfra serve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.PrintToken && (o.Addr != "" || o.AllowRemote || o.NoToken) {
				return cli.UsageErrorf("--print-token prints the token and exits: it goes with --token-file only")
			}
			if o.Addr == "" && !o.PrintToken && (o.AllowRemote || o.TokenFile != "" || o.NoToken) {
				return cli.UsageErrorf("--allow-remote, --token-file and --no-token apply to --http only")
			}
			if o.Addr != "" {
				if o.NoToken && o.TokenFile != "" {
					return cli.UsageErrorf("--no-token and --token-file: give one")
				}
				if err := mcpserver.CheckHTTPFlags(mcpserver.HTTPOptions{Addr: o.Addr, AllowRemote: o.AllowRemote, NoToken: o.NoToken}); err != nil {
					return cli.UsageErrorf("%v", err)
				}
			}
			if err := mcpserver.CheckToolsets(o.Toolsets); err != nil {
				return cli.UsageErrorf("--toolsets: %v", err)
			}
			if err := o.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
				return cli.UsageErrorf("--log-level: %v (use debug, info, warn or error)", err)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return serveRun(cmd.Context(), o)
		},
	}
	// The tools and resources are listed from the server's own definitions,
	// at help time only: building them costs more than a command's startup.
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		ctx := c.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		if text, err := mcpserver.CatalogText(ctx); err == nil {
			c.Long = strings.TrimRight(c.Long, "\n") + "\n\n" + text
		}
		c.Root().HelpFunc()(c, args)
	})
	cmd.Flags().StringVar(&o.Addr, "http", "", "serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio, e.g. 127.0.0.1:8765")
	cmd.Flags().BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --http address (never with --no-token)")
	cmd.Flags().StringVar(&o.TokenFile, "token-file", "", "--http's token file, created 0600 when missing (default ~/.config/agentinfra/mcp-token)")
	cmd.Flags().BoolVar(&o.NoToken, "no-token", false, "serve --http on loopback without a token: any local user can call every tool")
	cmd.Flags().BoolVar(&o.PrintToken, "print-token", false, "print the token --http clients send (of --token-file, else the default file) and exit")
	cmd.Flags().StringSliceVar(&o.Toolsets, "toolsets", nil, "tools to expose: matrix, fleet, supervision, agent (default: all but agent)")
	cmd.Flags().StringVar(&logLevel, "log-level", "warn", "stderr log level: debug, info, warn or error")
	return cmd
}

func serveRun(ctx context.Context, o *ServeOptions) error {
	if o.PrintToken {
		return printToken(o)
	}
	debug.SetGCPercent(100) // a long-lived server: main's one-shot setting does not fit
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: o.LogLevel}))
	srv, err := mcpserver.New(mcpserver.Options{
		Workspace: ws, Getenv: o.Getenv, Now: o.Now, Logger: logger, Version: serveVersion, Toolsets: o.Toolsets,
		Actor: task.ActorFromEnv(o.Getenv), Hosts: o.Hosts,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.Addr == "" {
		return srv.ServeStdio(ctx, readCloser(o.IO.In), writeCloser(o.IO.Out))
	}
	if o.TokenFile == "" && !o.NoToken {
		if o.TokenFile = defaultTokenFile(o); o.TokenFile == "" {
			return cli.UsageErrorf("no HOME or XDG_CONFIG_HOME to keep the token in: pass --token-file FILE (or --no-token)")
		}
	}
	return srv.ServeHTTP(ctx, mcpserver.HTTPOptions{
		Addr: o.Addr, AllowRemote: o.AllowRemote, TokenFile: o.TokenFile, NoToken: o.NoToken,
		OnToken: func(path, token string, created bool) {
			if created {
				fmt.Fprintf(o.IO.ErrOut, "agentinfra: created %s (mode 0600) with a new token; clients send \"Authorization: Bearer TOKEN\". The token, printed this once:\n%s\n", path, token)
				return
			}
			fmt.Fprintf(o.IO.ErrOut, "agentinfra: clients send \"Authorization: Bearer $(cat %s)\"\n", path)
		},
		Ready: func(url string) {
			if o.NoToken {
				fmt.Fprintf(o.IO.ErrOut, "agentinfra: --no-token: any local user can call every tool of this server\n")
			}
			fmt.Fprintf(o.IO.ErrOut, "agentinfra: serving MCP for %s at %s\n", ws.Root, url)
		},
	})
}

func defaultTokenFile(o *ServeOptions) string {
	return httpguard.DefaultTokenFile(o.Getenv, mcpserver.TokenFileName)
}

// printToken prints the token of o.TokenFile (else the default file),
// creating the file as the server would: what a 401 tells a client's
// owner to run, instead of showing the file's path to whoever asked.
func printToken(o *ServeOptions) error {
	path := o.TokenFile
	if path == "" {
		if path = defaultTokenFile(o); path == "" {
			return cli.UsageErrorf("no HOME or XDG_CONFIG_HOME to keep the token in: pass --token-file FILE")
		}
	}
	token, created, err := httpguard.LoadOrCreateToken(path)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(o.IO.ErrOut, "agentinfra: created %s (mode 0600) with a new token\n", path)
	}
	fmt.Fprintln(o.IO.Out, token)
	return nil
}

type nopReadCloser struct{ io.Reader }

func (nopReadCloser) Close() error { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok && r != os.Stdin {
		return rc
	}
	return nopReadCloser{r}
}

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok && w != os.Stdout {
		return wc
	}
	return nopWriteCloser{w}
}
