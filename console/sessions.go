package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision"
)

// SessionLog follows a session's run log.
type SessionLog interface {
	// Follow calls fn with every item of the session's run log, then with
	// each new one, until the run ends or ctx does. A session without a log
	// returns at once.
	Follow(ctx context.Context, s supervision.Session, fn func(events.RunItem) error) error
}

// fleetLog is the log of a fleet agent's run (the session's agent and run).
type fleetLog struct{ lr fleet.LogReader }

func (f fleetLog) Follow(ctx context.Context, s supervision.Session, fn func(events.RunItem) error) error {
	if s.Agent == "" {
		return nil
	}
	_, err := f.lr.FollowLogs(ctx, s.Agent, s.RunID, fn)
	return err
}

// Checkpoint is one saved state of a session's worktree, as the page
// lists it.
type Checkpoint struct {
	ID        string
	Label     string
	CreatedAt time.Time
}

type sessionView struct {
	supervision.Session
	Pending    *card
	Requests   []supervision.Request
	Audit      []supervision.AuditEvent
	MayControl bool
	Steering   bool
	// Resumable: interrupted because its supervisor died; Resume restarts
	// its run (supervision.Service.Resume).
	Resumable   bool
	Checkpoints []Checkpoint
	CheckErr    string
	// Diverged is set when a restore asked for a confirmation.
	Diverged   []string
	RestoreID  string
	HasLog     bool
	AuditTotal int
	// EndHead is how the session ended, and Said the last lines its CLI
	// wrote on stderr when it failed (secrets redacted), from its end
	// reason: shown apart, in the CLI's own words.
	EndHead string
	Said    []string
}

func sessionID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badInput("session ID %q is not a number", r.PathValue("id"))
	}
	return id, nil
}

func (s *Server) sessionsOf(ctx context.Context, all bool) ([]supervision.Session, error) {
	f := supervision.SessionFilter{}
	if !all {
		f.Statuses = supervision.LiveStatuses
	}
	return s.svc.Sessions(ctx, f)
}

type sessionsData struct {
	Sessions []supervision.Session
	All      bool
	Max      int
}

func (s *Server) sessionsData(r *http.Request) (sessionsData, error) {
	all := r.URL.Query().Get("all") != ""
	ss, err := s.sessionsOf(r.Context(), all)
	return sessionsData{Sessions: ss, All: all, Max: s.svc.Config().MaxConcurrentSessions}, err
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.sessionsData(r)
	if err != nil {
		s.fail(w, r, "/sessions", err)
		return
	}
	s.page(w, r, "sessions", "Sessions", d)
}

func (s *Server) sessionsList(w http.ResponseWriter, r *http.Request) {
	d, err := s.sessionsData(r)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	s.render(w, "sessions", "sessions-list", d)
}

func (s *Server) sessionView(ctx context.Context, id int64) (sessionView, error) {
	ses, err := s.svc.Session(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	v := sessionView{Session: ses, MayControl: s.svc.May(ctx, s.actor, ses, "") == nil, Steering: ses.Live(), HasLog: s.o.SessionLog != nil,
		Resumable: supervision.Resumable(ses)}
	v.EndHead, v.Said = runner.SaidOf(ses.CLI, ses.EndReason)
	if v.Requests, err = s.svc.Requests(ctx, id); err != nil {
		return v, err
	}
	for _, r := range v.Requests {
		if r.Status == supervision.StatusPending {
			c := s.cardOf(ctx, r)
			v.Pending = &c
		}
	}
	if v.Audit, err = s.svc.Audit(ctx, id); err != nil {
		return v, err
	}
	v.AuditTotal = len(v.Audit)
	if n := len(v.Audit); n > 50 {
		v.Audit = v.Audit[n-50:]
	}
	cps, err := s.svc.Checkpoints(ctx, id)
	if err != nil {
		v.CheckErr = err.Error()
	}
	for _, cp := range cps {
		label := cp.Label
		if label == "" {
			label = "checkpoint " + strconv.FormatInt(cp.ID, 10)
		}
		v.Checkpoints = append(v.Checkpoints, Checkpoint{ID: strconv.FormatInt(cp.ID, 10), Label: label, CreatedAt: cp.CreatedAt})
	}
	return v, nil
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	id, err := sessionID(r)
	if err != nil {
		s.fail(w, r, "/sessions", err)
		return
	}
	v, err := s.sessionView(r.Context(), id)
	if err != nil {
		s.fail(w, r, "/sessions", err)
		return
	}
	s.page(w, r, "session", fmt.Sprintf("Session %d", id), v)
}

func (s *Server) sessionPanel(w http.ResponseWriter, r *http.Request) {
	id, err := sessionID(r)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	v, err := s.sessionView(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	s.render(w, "session", "session-panel", v)
}

func (s *Server) sessionAction(w http.ResponseWriter, r *http.Request) {
	id, err := sessionID(r)
	ret := fmt.Sprintf("/sessions/%d", id)
	if err != nil {
		s.fail(w, r, "/sessions", err)
		return
	}
	ctx := r.Context()
	reason := strings.TrimSpace(r.FormValue("reason"))
	move := func(to, said string) {
		ses, err := s.svc.MoveSession(ctx, s.actor, id, to, reason)
		if err != nil {
			s.fail(w, r, ret, err)
			return
		}
		s.done(w, r, ret, fmt.Sprintf("Session %d is %s.", ses.ID, said))
	}
	switch r.PathValue("action") {
	case "pause":
		move(supervision.SessionPaused, "paused")
	case "resume":
		// A paused session goes on; one whose supervisor died is restarted.
		res, err := s.svc.Resume(ctx, s.actor, id)
		if err != nil {
			s.fail(w, r, ret, err)
			return
		}
		said := fmt.Sprintf("Session %d is %s.", res.Session.ID, res.Session.Status)
		if res.Restarted {
			said = fmt.Sprintf("Session %d is resumed under a new supervisor (pid %d).", res.Session.ID, res.Supervisor)
			if res.Session.Host != "" {
				said = fmt.Sprintf("Session %d is resumed under a new supervisor (pid %d in workspace %s).", res.Session.ID, res.Supervisor, res.Session.Host)
			}
		}
		s.done(w, r, ret, said)
	case "stop":
		move(supervision.SessionTerminated, "stopped")
	case "steer":
		text := strings.TrimSpace(r.FormValue("text"))
		if text == "" {
			s.fail(w, r, ret, badInput("the message is empty: write what the agent should do"))
			return
		}
		if _, err := s.svc.Steer(ctx, s.actor, id, text); err != nil {
			s.fail(w, r, ret, err)
			return
		}
		s.done(w, r, ret, "Sent: the agent gets it as its next message.")
	case "restore":
		s.restore(w, r, id, ret)
	default:
		http.NotFound(w, r)
	}
}

// restore puts a checkpoint back: with files changed since, the first post
// shows them and only a second one with force=1 restores. A live session
// is refused (the page's Stop first).
func (s *Server) restore(w http.ResponseWriter, r *http.Request, id int64, ret string) {
	ctx := r.Context()
	cpID := r.FormValue("checkpoint")
	n, err := strconv.ParseInt(cpID, 10, 64)
	if err != nil {
		s.fail(w, r, ret, badInput("checkpoint %q is not a number", cpID))
		return
	}
	_, _, err = s.svc.RestoreCheckpoint(ctx, s.actor, supervision.Restore{Checkpoint: n, Session: id, Force: r.FormValue("force") == "1"})
	var div *supervision.DivergedError
	switch {
	case errors.As(err, &div):
		var diverged []string
		for _, ch := range div.Changes {
			diverged = append(diverged, ch.Status+" "+ch.Path)
		}
		if wantsJSON(r) {
			writeJSON(w, http.StatusConflict, map[string]any{"ok": false, "confirm": true, "diverged": diverged,
				"error": fmt.Sprintf("%d files changed since checkpoint %s: restoring loses those changes", len(diverged), cpID)})
			return
		}
		v, err := s.sessionView(ctx, id)
		if err != nil {
			s.fail(w, r, ret, err)
			return
		}
		v.Diverged, v.RestoreID = diverged, cpID
		w.WriteHeader(http.StatusConflict)
		s.page(w, r, "session", fmt.Sprintf("Session %d", id), v)
	case err != nil:
		s.fail(w, r, ret, err)
	default:
		s.done(w, r, ret, "Restored checkpoint "+cpID+".")
	}
}
