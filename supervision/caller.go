package supervision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/store"
)

// ErrInsideRun is what a change made from inside an agent's run wraps
// (issue 27, "agents cannot decide"): the command, or the client of the
// web page, is one of a run's processes — an agent approving agents, or
// itself. It is of kind forbidden (exit 7, HTTP 403) like ErrNotAllowed,
// and tells itself apart by this sentinel (errors.Is) and by its field,
// "caller".
var ErrInsideRun = agenterr.New(agenterr.Forbidden, "refused: a decision from inside an agent's run")

// ActionRefusedInsideRun is the audit log's line of such a refusal.
const ActionRefusedInsideRun = "refused_inside_run"

type connKey struct{}

// WithConn is ctx carrying the connection a request came on: the console
// and MCP over HTTP give it to every request (http.Server.ConnContext), so
// that a change is checked against the process at the other end too.
func WithConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf is the connection WithConn put in ctx (nil: none).
func connOf(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// fromInsideRun refuses a change that comes from inside a supervised run's
// process tree: this process (the CLI's command, the console, the Slack
// app, the MCP server) or the client at the other end of the request's
// connection (a loopback client of the console). $AGENTINFRA_USER names
// the person, but every agent inherits it: where the change comes from is
// what tells an agent from the person. The refusal is audited; nothing
// else changes. sessionID is the session the change is about (0: none),
// what says what was asked.
func (s *Service) fromInsideRun(ctx context.Context, a Actor, sessionID int64, what string) error {
	type caller struct {
		pid  int
		what string // "this command", "the client of this request"
	}
	callers := []caller{{os.Getpid(), "this command"}}
	if c := connOf(ctx); c != nil {
		pids, err := contain.PeerPIDs(c)
		switch {
		case errors.Is(err, contain.ErrRemotePeer):
			// Another machine (a phone through --allow-remote): no process
			// of this machine, none of a run's.
		case err != nil:
			// On this machine but not found (another user's process, or a
			// connection already gone): whether an agent is at the other
			// end cannot be told, so the change is not made.
			return s.refuseInsideRun(ctx, a, sessionID, what, fmt.Sprintf(
				"refused: the client of this request cannot be identified (%v), so it may be an agent's; decide from your own terminal (agentinfra approve/reject) or a browser of your own user", err))
		default:
			for _, p := range pids {
				callers = append(callers, caller{p, "the client of this request"})
			}
		}
	}
	live, err := s.st.LiveSupervisors(ctx)
	if err != nil {
		return fmt.Errorf("read the supervisors of the live runs: %w", err)
	}
	var sups []contain.Proc
	sessionOf := map[int]int64{}
	for id, sup := range live {
		if sup.PID > 0 {
			sups = append(sups, contain.Proc{PID: sup.PID, Start: sup.Start})
			sessionOf[sup.PID] = id
		}
	}
	for _, c := range callers {
		m, inside := contain.RunOf(c.pid, sups)
		if !inside {
			continue
		}
		run := m.RunID()
		if id, ok := sessionOf[m.Supervisor.PID]; ok && m.Supervisor.PID != 0 {
			run = fmt.Sprintf("of session %d", id)
			if ses, err := s.st.Session(ctx, id); err == nil && ses.RunID != "" {
				run = fmt.Sprintf("%s (session %d)", ses.RunID, id)
			}
		}
		where := fmt.Sprintf("agent run %s", run)
		if m.Supervisor.PID != 0 {
			where += fmt.Sprintf(", below its supervisor pid %d", m.Supervisor.PID)
		}
		return s.refuseInsideRun(ctx, a, sessionID, what, fmt.Sprintf(
			"refused: %s (pid %d%s) runs inside %s; a person must %s from outside the agent's processes (your own terminal or browser)",
			c.what, c.pid, commOf(c.pid), where, what), "pid", c.pid, "run", run, "why", m.Why())
	}
	return nil
}

// refuseInsideRun records the refusal in the audit log and returns it.
func (s *Service) refuseInsideRun(ctx context.Context, a Actor, sessionID int64, what, reason string, kv ...any) error {
	detail := map[string]any{"asked": what, "reason": reason}
	for i := 0; i+1 < len(kv); i += 2 {
		detail[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(detail) // strings and numbers always encode
	if err := s.st.Record(context.WithoutCancel(ctx), store.Event{SessionID: sessionID, Actor: a.Name, Surface: a.Surface, Action: ActionRefusedInsideRun, Detail: b}); err != nil {
		reason += " (the refusal could not be written to the audit log: " + err.Error() + ")"
	}
	return &agenterr.Error{Kind: agenterr.Forbidden, Field: "caller", Err: ErrInsideRun, Reason: reason}
}

// commOf is ", NAME" for process pid's command name ("" when unknown).
func commOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return ", " + strings.TrimSpace(string(b))
}
