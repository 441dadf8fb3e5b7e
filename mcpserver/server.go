// Package mcpserver exposes agentinfra over the Model Context Protocol: the
// task, task_get_context, skill, format_prompt, select_model, handoff_generate
// and dispatch_task tools, the agentinfra://matrix resource and the
// agentinfra://task/{id} template, and resources/updated notifications driven
// by a watcher on .agent/.
//
// The server is a thin adapter: every tool calls the same package functions
// as the CLI (matrix, scaffold, skills, dispatch), and every write goes through
// matrix.Store, under the same lock as the CLI.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/agentside"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Name is the server name announced to clients.
const Name = "agentinfra"

// Options configure a Server.
type Options struct {
	// Workspace is the workspace served (required).
	Workspace *workspace.Workspace
	// Getenv reads the environment (model tiers, global skills); nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives server logs; nil means discard. Never stdout in stdio mode.
	Logger *slog.Logger
	// Version is announced in serverInfo.
	Version string
	// Toolsets chooses the tools exposed: matrix (task, skill, dispatch...
	// and the resources), fleet (the agents), supervision (read-only) and
	// agent (opt-in: the agent-side supervision tools); nil means all but
	// agent.
	Toolsets []string
	// AgentProgressEvery is how often the agent toolset's blocking calls
	// send progress notifications (0: agentside.DefaultProgressEvery).
	AgentProgressEvery time.Duration
	// Fleet tunes the fleet tools (tests point it at stub agents).
	Fleet local.Options
	// Debounce is how long the watcher gathers a burst of file events before
	// notifying (default 50ms; notifications go out well within 500ms).
	Debounce time.Duration
	// Actor is who the server's writes are recorded as made by (the agent
	// or person whose client it serves); "" names nobody.
	Actor task.Actor
	// Bus is where the server's services publish and its subscriptions
	// read (nil = events.Default()).
	Bus *events.Bus
	// Hosts are the other machines whose supervised sessions the
	// supervision tools show with this workspace's (the supervised agents'
	// hosts on Coder), asked once per call; nil: none.
	Hosts func(context.Context) []supervision.HostEntry
}

// Server is an agentinfra MCP server over one workspace.
type Server struct {
	opts  Options
	ws    *workspace.Workspace
	store *matrix.Store
	cache *docCache
	mcp   *mcp.Server
	log   *slog.Logger

	subMu sync.Mutex
	subs  map[string]int // subscribed URI → subscriptions

	watchOnce sync.Once
	watchErr  error
	watch     *watcher

	agent *agentside.Service // the agent toolset (nil when off)
}

// New builds the server and registers its tools and resources.
func New(opts Options) (*Server, error) {
	if opts.Workspace == nil {
		return nil, fmt.Errorf("mcpserver: no workspace")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	store, err := task.OpenStore(opts.Workspace) // with the config's vocabulary
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:  opts,
		ws:    opts.Workspace,
		store: store,
		log:   opts.Logger,
		subs:  map[string]int{},
	}
	s.cache = newDocCache(s.store)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "agentinfra", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			return s.subscribe(ctx, req.Params.URI)
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			s.unsubscribe(req.Params.URI)
			return nil
		},
	})
	if opts.Actor != "" {
		actor := opts.Actor
		s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				return next(task.WithActor(ctx, actor), method, req)
			}
		})
	}
	if err := CheckToolsets(opts.Toolsets); err != nil {
		return nil, err
	}
	if hasToolset(opts.Toolsets, ToolsetMatrix) {
		if err := s.registerTools(); err != nil {
			return nil, err
		}
		s.registerResources()
	}
	if hasToolset(opts.Toolsets, ToolsetFleet) {
		s.registerFleetTools()
	}
	if hasToolset(opts.Toolsets, ToolsetSupervision) {
		s.registerSupervisionTools()
	}
	if hasToolset(opts.Toolsets, ToolsetAgent) {
		if err := s.registerAgentTools(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

const instructions = `agentinfra manages this repository's .agent/ folder: the task matrix
(.agent/DEVELOPMENT_MATRIX.md), task folders, skills, agent modes and prompts.
Use the task tool to list, show, create, update, claim, archive and validate tasks;
task_get_context before working on a task; update its status with task
(action update) when you start, block or finish. Read agentinfra://matrix for
the whole matrix.`

// MCP returns the underlying SDK server (for custom transports and tests).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Workspace returns the served workspace.
func (s *Server) Workspace() *workspace.Workspace { return s.ws }

// MatrixLoads reports how many times the matrix file was parsed (the cache
// re-reads it only when it changed).
func (s *Server) MatrixLoads() int { return s.cache.Loads() }

// doc returns the cached matrix.
func (s *Server) doc(ctx context.Context) (*matrix.Doc, error) { return s.cache.Get(ctx) }

// Close stops the watcher and ends the agent-side clients' sessions.
func (s *Server) Close() error {
	var errs []error
	if s.agent != nil {
		errs = append(errs, s.agent.Close())
	}
	if s.watch != nil {
		errs = append(errs, s.watch.Close())
	}
	return errors.Join(errs...)
}
