// Package agentside is supervision for agents agentinfra did not launch: a
// person's own interactive Claude Code or Gemini that calls agentinfra's
// MCP tools (the "agent" toolset of `agentinfra serve`) to get a remote
// approver. Each MCP client is a Client with its own session of the store
// (created on its first call, owned by the person running the server, CLI
// "mcp", the client's name as its agent), so everything the supervised runs
// have works for it too: its approval requests and continuation prompts are
// decided by the same compare-and-set from the terminal (`agentinfra
// approve|reject|answer`), the web console and Slack; steering messages
// (`agentinfra steer`) reach it through wait_for_instruction and heartbeat.
//
// The agent asks; it never decides: nothing here approves a request.
// An approved edit is applied by AcceptDiff only while the file still has
// the bytes it had when the agent asked (their hash is in the request), and
// only once (the store's ClaimApproved); its path never leaves the
// workspace (no "..", no absolute path elsewhere, no symlink out, no .git).
//
// The blocking calls (AskApproval, ForwardPrompt, WaitForInstruction) wake
// on the store's changes, call their progress function every
// Options.ProgressEvery so that an HTTP client keeps the call open, and end
// when their context does (the MCP request was cancelled): a request or
// prompt still pending is then withdrawn.
package agentside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
	"github.com/agentinfra/agentinfra/supervision/policy"
	"github.com/agentinfra/agentinfra/workspace"
)

// CLI is the session's CLI for an agent-side client.
const CLI = "mcp"

// DefaultProgressEvery is how often a blocking call reports progress.
const DefaultProgressEvery = 15 * time.Second

// DefaultInstructionWait bounds wait_for_instruction when no timeout is given.
const DefaultInstructionWait = 10 * time.Minute

// Options configure a Service.
type Options struct {
	Workspace *workspace.Workspace
	// Getenv is the server's environment (who the owner is, where the
	// user's allowlist is); nil means os.Getenv.
	Getenv func(string) string
	// ProgressEvery is how often a blocking call reports (0: the default).
	ProgressEvery time.Duration
}

// Service is the agent-side tools of one workspace.
type Service struct {
	o     Options
	owner string

	mu      sync.Mutex
	st      *store.Store
	clients map[any]*Client
	ending  sync.WaitGroup // Forget's ends under way (Close waits for them)
}

// New returns the service; the store is opened on first use.
func New(o Options) *Service {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	return &Service{o: o, owner: supervision.CurrentUser(o.Getenv), clients: map[any]*Client{}}
}

// Owner is the person the clients' sessions belong to.
func (s *Service) Owner() string { return s.owner }

func (s *Service) store(ctx context.Context) (*store.Store, supervision.Config, error) {
	conf, err := supervision.LoadConfig(s.o.Workspace)
	if err != nil {
		return nil, conf, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		st, err := store.OpenWorkspace(ctx, s.o.Workspace, supervision.StoreOptions(conf))
		if err != nil {
			return nil, conf, err
		}
		s.st = st
	}
	return s.st, conf, nil
}

// Client is the client of key (one MCP session), named name (the MCP
// client's name) on first use (created true).
func (s *Service) Client(key any, name string) (c *Client, created bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[key]; ok {
		return c, false
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = "mcp-client"
	}
	c = &Client{svc: s, name: name}
	s.clients[key] = c
	return c, true
}

// Forget ends the session of key's client (the MCP session closed).
func (s *Service) Forget(key any, reason string) {
	s.mu.Lock()
	c := s.clients[key]
	delete(s.clients, key)
	if c != nil {
		s.ending.Add(1)
	}
	s.mu.Unlock()
	if c != nil {
		defer s.ending.Done()
		c.end(reason)
	}
}

// Close ends every client's session and closes the store.
func (s *Service) Close() error {
	s.mu.Lock()
	clients := s.clients
	s.clients = map[any]*Client{}
	s.mu.Unlock()
	for _, c := range clients {
		c.end("the MCP server stopped")
	}
	s.ending.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		err := s.st.Close()
		s.st = nil
		return err
	}
	return nil
}

// Client is one MCP client: its session is created on its first call.
type Client struct {
	svc  *Service
	name string

	mu  sync.Mutex
	ses store.Session
}

// Actor is how the client appears in the audit log.
func (c *Client) Actor() string { return "agent:" + c.name }

// Session is the client's session, created (and made active) on first
// use. A session a person stopped stays stopped: the call says so.
func (c *Client) Session(ctx context.Context) (*store.Store, store.Session, error) {
	st, conf, err := c.svc.store(ctx)
	if err != nil {
		return nil, store.Session{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ses.ID != 0 {
		cur, err := st.Session(ctx, c.ses.ID)
		if err != nil {
			return nil, store.Session{}, err
		}
		if cur.Ended() {
			return nil, cur, &agenterr.Error{Kind: agenterr.Conflict, Err: store.ErrBadTransition,
				Reason: fmt.Sprintf("session %d is %s (%s): a person ended it; stop here", cur.ID, cur.Status, cur.EndReason)}
		}
		c.ses = cur
		return st, cur, nil
	}
	root := c.svc.o.Workspace.Root
	ses, err := st.CreateSession(ctx, store.NewSession{Owner: c.svc.owner, Workspace: root, Mode: conf.Mode, CLI: CLI, Agent: c.name,
		Title: "MCP client " + c.name})
	if err != nil {
		return nil, store.Session{}, err
	}
	me := os.Getpid()
	// This server supervises it: if it dies, Reap interrupts the session.
	if err := st.SetSupervisor(ctx, ses.ID, store.Supervisor{PID: me, Start: contain.ProcStart(me)}); err != nil {
		return nil, store.Session{}, err
	}
	active, err := st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: c.svc.owner})
	if err != nil {
		st.SetSessionStatus(context.WithoutCancel(ctx), ses.ID, store.Transition{To: store.SessionTerminated, By: c.svc.owner, Reason: "refused: " + err.Error()})
		return nil, store.Session{}, err
	}
	c.ses = active
	return st, active, nil
}

func (c *Client) end(reason string) {
	c.mu.Lock()
	id := c.ses.ID
	c.mu.Unlock()
	if id == 0 {
		return
	}
	c.svc.mu.Lock()
	st := c.svc.st
	c.svc.mu.Unlock()
	if st == nil {
		return
	}
	_, err := st.SetSessionStatus(context.Background(), id, store.Transition{To: store.SessionTerminated, By: c.svc.owner, Surface: store.SurfaceSupervisor, Reason: reason})
	_ = err // already ended (a person stopped it): nothing to do
}

// Progress reports a blocking call's state (elapsed time and what it waits
// for); nil reports nothing.
type Progress func(elapsed time.Duration, message string)

// waitFor calls check after every change of the store until it is done, the
// deadline passes (timedOut), or ctx ends; progress is called every
// Options.ProgressEvery.
func (c *Client) waitFor(ctx context.Context, st *store.Store, deadline time.Time, progress Progress, what string, check func() (bool, error)) (timedOut bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := st.Changes(wctx)
	if err != nil {
		return false, err
	}
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	tick := time.NewTicker(c.svc.o.ProgressEvery)
	defer tick.Stop()
	start := time.Now()
	for {
		done, err := check()
		if err != nil || done {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-timer:
			return true, nil
		case <-tick.C:
			if progress != nil {
				progress(time.Since(start), what)
			}
		case _, ok := <-changes:
			if !ok {
				return false, ctx.Err()
			}
		}
	}
}

func deadlineOf(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// shorter is the shorter of a configured timeout (0 = never) and the
// caller's (0 = none given): a caller may shorten a wait, never lengthen it.
func shorter(configured, asked time.Duration) time.Duration {
	if asked > 0 && (configured == 0 || asked < configured) {
		return asked
	}
	return configured
}

func (c *Client) record(ctx context.Context, st *store.Store, ses store.Session, requestID int64, action string, detail any) {
	b, _ := json.Marshal(detail)
	st.Record(context.WithoutCancel(ctx), store.Event{SessionID: ses.ID, RequestID: requestID, Actor: c.Actor(), Surface: store.SurfaceAgent, Action: action, Detail: b})
}

func (c *Client) policy() *policy.Policy {
	root := c.svc.o.Workspace.Root
	return policy.Load(root, policy.DefaultPaths(root, c.svc.o.Getenv))
}

func (c *Client) keepConfig() (keepmoving.Config, error) {
	return keepmoving.LoadConfig(c.svc.o.Workspace)
}

func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
