package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/mcpserver"
)

// serveVersion is announced to MCP clients.
var serveVersion = "dev"

func newCmdServe(f *Factory) *cobra.Command {
	var addr, tokenFile, logLevel string
	var allowRemote bool
	var toolsets []string
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
CLI or an editor) are notified within 500 ms. --toolsets matrix,fleet chooses
which tools are exposed (default: both; the fleet's are in docs/fleet.md).
See docs/mcp.md.`,
		Example: `  agentinfra serve
  agentinfra serve --http 127.0.0.1:8765
  agentinfra serve --toolsets fleet
  agentinfra serve --http 0.0.0.0:8765 --allow-remote --token-file ~/.config/agentinfra/token
  claude mcp add agentinfra -- agentinfra serve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			debug.SetGCPercent(100) // a long-lived server: main's one-shot setting does not fit
			if addr == "" && (allowRemote || tokenFile != "") {
				return usageErrorf("--allow-remote and --token-file apply to --http only")
			}
			if addr != "" {
				if err := mcpserver.CheckAddr(addr, allowRemote, tokenFile); err != nil {
					return usageErrorf("%v", err)
				}
			}
			if err := mcpserver.CheckToolsets(toolsets); err != nil {
				return usageErrorf("--toolsets: %v", err)
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageErrorf("--log-level: %v (use debug, info, warn or error)", err)
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: level}))
			srv, err := mcpserver.New(mcpserver.Options{
				Workspace: ws, Getenv: f.Getenv, Now: f.Now, Logger: logger, Version: serveVersion, Toolsets: toolsets,
			})
			if err != nil {
				return err
			}
			defer srv.Close()
			ctx := cmd.Context()
			if addr == "" {
				return srv.ServeStdio(ctx, readCloser(f.IO.In), writeCloser(f.IO.Out))
			}
			return srv.ServeHTTP(ctx, mcpserver.HTTPOptions{
				Addr: addr, AllowRemote: allowRemote, TokenFile: tokenFile,
				Ready: func(url string) {
					fmt.Fprintf(f.IO.ErrOut, "agentinfra: serving MCP for %s at %s\n", ws.Root, url)
				},
			})
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
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio, e.g. 127.0.0.1:8765")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback --http address (requires --token-file)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "bearer token file for --http (created 0600 with a random token if missing)")
	cmd.Flags().StringSliceVar(&toolsets, "toolsets", nil, "tools to expose: matrix, fleet (default: both)")
	cmd.Flags().StringVar(&logLevel, "log-level", "warn", "stderr log level: debug, info, warn or error")
	return cmd
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
