package full

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision/host"
	"github.com/agentinfra/agentinfra/workspace"
)

// AgentHostOptions is what `agent host` runs with.
type AgentHostOptions struct {
	IO        *cli.IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string
	Now       func() time.Time
	// Env opens the workspace's own supervision service (no hosts of its
	// own: a host is not a person's inbox).
	Env func(context.Context) (*supervisionEnv, error)

	Addr        string
	AllowRemote bool
	TokenFile   string
	Name        string
	Agent       string
	Spec        string
	Owner       string
	CLI         string
}

// hostTokenFile is the default token file's name (httpguard.DefaultTokenFile).
const hostTokenFile = "host-token"

func NewCmdAgentHost(f *Factory, runF func(context.Context, *AgentHostOptions) error) *cobra.Command {
	o := &AgentHostOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv, Now: f.Now, Env: f.supervisionHere}
	cmd := &cobra.Command{
		Use:   "host --http HOST:PORT",
		Short: "Serve this workspace's supervised agent and its supervision service to another machine (a Coder workspace app)",
		Long: `Run inside a Coder workspace as a workspace app (docs/coder.md): it runs the
workspace's agent — a fleet agent of this workspace, supervised (approval mode
ask), through the same bridges, policy and store as any supervised run here —
and serves over HTTP what a person's agentinfra needs to supervise it from
their machine through Coder's app proxy: the supervision service (the inbox,
sessions, decisions, steering, checkpoints; the workspace's store decides),
an event stream of its audit log numbered for catch-up, and the agent's runs.

Every request must carry the host's token, "Authorization: Bearer TOKEN": the
token of --token-file (default ~/.config/agentinfra/host-token, which the
template writes from its agentinfra_host_token parameter; a missing file is
created with a new token). --http must be loopback unless --allow-remote:
Coder's agent proxies to loopback.

With --spec, the agent (--agent, default this workspace's name) is created on
its first start and works on the spec at once, owned by --owner.`,
		Example: `  agentinfra agent host --http 127.0.0.1:7790
  agentinfra agent host --http 127.0.0.1:7790 --agent papi --spec "Keep the API tests green" --owner ana --cli claude`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Addr == "" {
				return cli.UsageErrorf("--http HOST:PORT is required: the address Coder's app proxies to, e.g. 127.0.0.1:7790")
			}
			if err := httpguard.CheckAddr("--http", o.Addr, o.AllowRemote, "and has the token could decide this workspace's requests and run its agent"); err != nil {
				return cli.UsageErrorf("%v", err)
			}
			if o.Spec != "" && o.Owner == "" {
				return cli.UsageErrorf("--spec needs --owner: the person whose sessions the agent's runs are")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentHostRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Addr, "http", "", "serve on HOST:PORT (the app's port), e.g. 127.0.0.1:7790")
	cmd.Flags().BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --http address")
	cmd.Flags().StringVar(&o.TokenFile, "token-file", "", "the host's token, created 0600 when missing (default ~/.config/agentinfra/host-token)")
	cmd.Flags().StringVar(&o.Name, "name", "", "the host's name as the other side shows it (default $CODER_WORKSPACE_NAME, else the host name)")
	cmd.Flags().StringVar(&o.Agent, "agent", "", "the workspace's fleet agent (default the host's name)")
	cmd.Flags().StringVar(&o.Spec, "spec", "", "create the agent on this spec if it does not exist, and start it on it")
	cmd.Flags().StringVar(&o.Owner, "owner", "", "whose the agent's sessions are (with --spec; later tasks say their own)")
	cmd.Flags().StringVar(&o.CLI, "cli", "", "the agent's CLI (with --spec): claude, codex or gemini")
	return cmd
}

func agentHostRun(ctx context.Context, o *AgentHostOptions) error {
	debug.SetGCPercent(100) // a long-lived server
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	if o.TokenFile == "" {
		if o.TokenFile = httpguard.DefaultTokenFile(o.Getenv, hostTokenFile); o.TokenFile == "" {
			return cli.UsageErrorf("no HOME or XDG_CONFIG_HOME to keep the token in: pass --token-file FILE")
		}
	}
	token, created, err := httpguard.LoadOrCreateToken(o.TokenFile)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(o.IO.ErrOut, "agentinfra: created %s (mode 0600) with a new token: give it to the other side (the workspace's agentinfra_host_token parameter)\n", o.TokenFile)
	}
	name := o.Name
	if name == "" {
		name = hostName(o.Getenv)
	}
	agent := o.Agent
	if agent == "" {
		agent = name
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	fl := local.New(ws, local.Options{Now: o.Now})
	mux := http.NewServeMux()
	mux.Handle("/v1/agent", host.AgentHandler(host.AgentOptions{Fleet: fl, Name: agent}))
	mux.Handle("/v1/agent/", host.AgentHandler(host.AgentOptions{Fleet: fl, Name: agent}))
	mux.Handle("/", host.Handler(env.svc, host.ServerOptions{Name: name}))
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", o.Addr, err)
	}
	fmt.Fprintf(o.IO.ErrOut, "agentinfra: host %s serving %s at http://%s (agent %s)\n", name, ws.Root, ln.Addr(), agent)
	if o.Spec != "" {
		// The server is up first: creating the agent (a worktree, the
		// setup) takes a while, and the other side may look meanwhile.
		go func() {
			if err := createHostAgent(ctx, fl, fleet.CreateInput{Name: agent, Spec: o.Spec, CLI: o.CLI, Owner: o.Owner,
				ApprovalMode: runner.ApprovalAsk, Source: fleet.SourceHuman}); err != nil {
				fmt.Fprintf(o.IO.ErrOut, "agentinfra: the agent %s could not be created: %v\n", agent, err)
			}
		}()
	}
	// Behind Coder's proxy the Host header is the deployment's: not checked.
	return httpguard.Serve(ctx, ln, mux, httpguard.Options{Token: token, TokenHint: "the workspace's agentinfra_host_token parameter", AnyHost: true}, 2*time.Second)
}

// createHostAgent creates the host's agent on its spec unless it exists
// (a host that restarts finds it).
func createHostAgent(ctx context.Context, fl fleet.Backend, in fleet.CreateInput) error {
	if _, err := fl.Show(ctx, in.Name); err == nil {
		return nil
	} else if !errors.Is(err, agenterr.ErrNotFound) {
		return err
	}
	_, err := fl.Create(ctx, in)
	return err
}

// hostName is the Coder workspace's name, else this machine's.
func hostName(getenv func(string) string) string {
	if n := getenv("CODER_WORKSPACE_NAME"); n != "" {
		return n
	}
	n, _ := os.Hostname()
	return n
}
