package main

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

	"github.com/agentinfra/agentinfra/mcpserver"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// serveVersion is announced to MCP clients.
var serveVersion = "dev"

// ServeOptions is what `serve` runs with.
type ServeOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string

	// Addr is the --http address; "" serves stdio.
	Addr        string
	AllowRemote bool
	TokenFile   string
	Toolsets    []string
	LogLevel    slog.Level
}

func NewCmdServe(f *Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv}
	var logLevel string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve agentinfra's tools and resources over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve the workspace over the Model Context Protocol.

Without --http it speaks MCP over stdin/stdout: stdout carries protocol
messages only, logs go to stderr. This is how Gemini CLI and Claude Code start it.

With --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp. The
address must be loopback (127.0.0.1, ::1, localhost) unless --allow-remote is
given together with --token-file; requests must then carry the file's token
as "Authorization: Bearer TOKEN" (the file is created, mode 0600, with a random
token when missing). Requests to a loopback address with a non-loopback Host
header are refused (DNS-rebinding protection).

Resources support resources/subscribe: changes to .agent/ (by this server, the
CLI or an editor) are notified within 500 ms. --toolsets matrix,fleet,supervision chooses
which tools are exposed (default: all; the fleet's are in docs/fleet.md;
supervision is list_pending_approvals, read-only: an agent must not approve
agents).
See docs/mcp.md.`,
		Example: `  agentinfra serve
  agentinfra serve --http 127.0.0.1:8765
  agentinfra serve --toolsets fleet
  agentinfra serve --http 0.0.0.0:8765 --allow-remote --token-file ~/.config/agentinfra/token
  claude mcp add agentinfra -- agentinfra serve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Addr == "" && (o.AllowRemote || o.TokenFile != "") {
				return usageErrorf("--allow-remote and --token-file apply to --http only")
			}
			if o.Addr != "" {
				if err := mcpserver.CheckAddr(o.Addr, o.AllowRemote, o.TokenFile); err != nil {
					return usageErrorf("%v", err)
				}
			}
			if err := mcpserver.CheckToolsets(o.Toolsets); err != nil {
				return usageErrorf("--toolsets: %v", err)
			}
			if err := o.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
				return usageErrorf("--log-level: %v (use debug, info, warn or error)", err)
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
	cmd.Flags().BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --http address (requires --token-file)")
	cmd.Flags().StringVar(&o.TokenFile, "token-file", "", "bearer token file for --http (created 0600 with a random token if missing)")
	cmd.Flags().StringSliceVar(&o.Toolsets, "toolsets", nil, "tools to expose: matrix, fleet, supervision (default: all)")
	cmd.Flags().StringVar(&logLevel, "log-level", "warn", "stderr log level: debug, info, warn or error")
	return cmd
}

func serveRun(ctx context.Context, o *ServeOptions) error {
	debug.SetGCPercent(100) // a long-lived server: main's one-shot setting does not fit
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: o.LogLevel}))
	srv, err := mcpserver.New(mcpserver.Options{
		Workspace: ws, Getenv: o.Getenv, Now: o.Now, Logger: logger, Version: serveVersion, Toolsets: o.Toolsets,
		Actor: task.ActorFromEnv(o.Getenv),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.Addr == "" {
		return srv.ServeStdio(ctx, readCloser(o.IO.In), writeCloser(o.IO.Out))
	}
	return srv.ServeHTTP(ctx, mcpserver.HTTPOptions{
		Addr: o.Addr, AllowRemote: o.AllowRemote, TokenFile: o.TokenFile,
		Ready: func(url string) {
			fmt.Fprintf(o.IO.ErrOut, "agentinfra: serving MCP for %s at %s\n", ws.Root, url)
		},
	})
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
