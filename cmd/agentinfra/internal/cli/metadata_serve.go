package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/httpguard"
)

// DefaultMetadataAddr is where `metadata serve` listens by default: the
// port the Coder template snippet in its help points the app at.
const DefaultMetadataAddr = "127.0.0.1:7781"

// MetadataServeOptions is what `metadata serve` runs with.
type MetadataServeOptions struct {
	IO  *IOStreams
	Cwd string

	Addr        string
	AllowRemote bool
	// Dir is the workspace checkout whose Taskfile defines the fields.
	Dir     string
	Timeout time.Duration
}

// NewCmdMetadata is the `metadata` command group.
func NewCmdMetadata(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metadata",
		Short: "Serve a workspace's metadata (its Taskfile's meta tasks) to a fleet elsewhere",
		Example: `  agentinfra metadata serve
  agentinfra agent show papi     # the fleet's side: the metadata of papi's workspace`,
	}
	cmd.AddCommand(NewCmdMetadataServe(f, nil))
	return cmd
}

func NewCmdMetadataServe(f *Factory, runF func(context.Context, *MetadataServeOptions) error) *cobra.Command {
	o := &MetadataServeOptions{IO: f.IO, Cwd: f.Cwd}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve this workspace's metadata as JSON over HTTP (a Coder workspace app)",
		Long: `Serve the workspace metadata of --dir (default: the current folder) as JSON at
http://ADDR/: the fields are the tasks of its Taskfile that carry a meta: key,
run with go-task as the local fleet runs them (concurrently, each within
--timeout, results cached for 10 s and dropped when the Taskfile changes).
The answer is {"metadata": {FIELD: {value, error, schema}}, "names": [...],
"taskfile": PATH, "error": ...}; a field that fails is an error in the answer,
never an error status. GET /?fields=list (what list_agents asks) runs at most
the include_in_list fields ("list_only": true when only those ran; a fresh
full collection answers too). See docs/fleet.md, "Workspace metadata".

Run it inside a Coder workspace and expose it as a workspace app: the fleet's
Coder backend reads it through Coder's app proxy with its session token, when
the template defines no coder_agent metadata blocks (which it prefers). The app's
slug must be agentinfra-metadata (or the fleet's configured slug):

  resource "coder_app" "agentinfra_metadata" {
    agent_id     = coder_agent.main.id
    slug         = "agentinfra-metadata"
    display_name = "agentinfra metadata"
    url          = "http://localhost:7781/"
    share        = "owner"
    subdomain    = false
    hidden       = true
  }

and start it from the agent's startup script:

  agentinfra metadata serve --dir /home/coder/project >/tmp/agentinfra-metadata.log 2>&1 &

It listens on loopback only (the Coder agent reaches it there) unless
--allow-remote is given: the endpoint takes no input (except ?fields=list), but its values (pull
requests, branches) are the workspace's and anyone who reaches it reads them.`,
		Example: `  agentinfra metadata serve
  agentinfra metadata serve --addr 127.0.0.1:7781 --dir /home/coder/project
  agentinfra metadata serve --timeout 10s
  curl -s http://127.0.0.1:7781/ | jq '.metadata | map_values(.value)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkMetadataAddr(o.Addr, o.AllowRemote); err != nil {
				return UsageErrorf("%v", err)
			}
			if o.Timeout <= 0 {
				return UsageErrorf("--timeout %s: give a positive duration, e.g. 5s", o.Timeout)
			}
			dir := o.Dir
			if dir == "" {
				dir = o.Cwd
			}
			abs := dir
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(o.Cwd, dir)
			}
			if st, err := os.Stat(abs); err != nil || !st.IsDir() {
				return UsageErrorf("--dir %q is not a folder: give the workspace checkout that holds the Taskfile", dir)
			}
			o.Dir = abs
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return metadataServeRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Addr, "addr", DefaultMetadataAddr, "listen on HOST:PORT (loopback unless --allow-remote; port 0 picks a free one)")
	cmd.Flags().BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --addr")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "the workspace checkout whose Taskfile defines the metadata (default: the current folder)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", metadata.DefaultTimeout, "time each field's task may run")
	return cmd
}

// checkMetadataAddr refuses a non-loopback address unless allowed.
func checkMetadataAddr(addr string, allowRemote bool) error {
	return httpguard.CheckAddr("--addr", addr, allowRemote, "could read this workspace's metadata (the Coder agent proxies to loopback)")
}

func metadataServeRun(ctx context.Context, o *MetadataServeOptions) error {
	debug.SetGCPercent(100) // a long-lived server: main's one-shot setting does not fit
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is another `agentinfra metadata serve` running? pick another --addr)", o.Addr, err)
	}
	// One collector for the process: its cache spares a workspace polled by
	// a whole fleet from running every task on every request.
	collector := metadata.NewCollector(metadata.Options{Timeout: o.Timeout})
	fmt.Fprintf(o.IO.ErrOut, "agentinfra: serving the metadata of %s at http://%s/\n", o.Dir, ln.Addr())
	// No token and any Host: the Coder app proxy in front of it forwards
	// the dashboard's Host and does the authentication; the Origin check
	// and the time limits hold.
	return httpguard.Serve(ctx, ln, metadata.Handler(collector, o.Dir), httpguard.Options{AnyHost: true}, o.Timeout+time.Second)
}
