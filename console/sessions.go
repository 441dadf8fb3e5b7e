package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

// SessionLog follows a session's run log.
type SessionLog interface {
	// Follow calls fn with every item of the session's run log, then with
	// each new one, until the run ends or ctx does. A session without a log
	// returns at once.
	Follow(ctx context.Context, s store.Session, fn func(events.RunItem) error) error
}

// fleetLog is the log of a fleet agent's run (the session's agent and run).
type fleetLog struct{ lr fleet.LogReader }

func (f fleetLog) Follow(ctx context.Context, s store.Session, fn func(events.RunItem) error) error {
	if s.Agent == "" {
		return nil
	}
	_, err := f.lr.FollowLogs(ctx, s.Agent, s.RunID, fn)
	return err
}

// Steering sends an operator's message to a running session (issue 22:
// delivered as the next user message through the session's bridge).
type Steering interface {
	Steer(ctx context.Context, sessionID int64, by, text string) error
}

// Checkpoint is one saved state of a session's worktree.
type Checkpoint struct {
	ID        string
	Label     string
	CreatedAt time.Time
}

// Checkpoints lists and restores a session's checkpoints (issue 22).
type Checkpoints interface {
	List(ctx context.Context, sessionID int64) ([]Checkpoint, error)
	// Diverged lists the files changed since the checkpoint.
	Diverged(ctx context.Context, sessionID int64, id string) ([]string, error)
	// Restore puts the worktree back; with files diverged it needs force.
	Restore(ctx context.Context, sessionID int64, id, by string, force bool) error
}

type sessionView struct {
	store.Session
	Pending     *card
	Requests    []store.Request
	Audit       []store.Event
	MayControl  bool
	Steering    bool
	Checkpoints []Checkpoint
	CheckErr    string
	// Diverged is set when a restore asked for a confirmation.
	Diverged   []string
	RestoreID  string
	HasLog     bool
	AuditTotal int
}

func sessionID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badInput("session ID %q is not a number", r.PathValue("id"))
	}
	return id, nil
}

func (s *Server) sessionsOf(ctx context.Context, all bool) ([]store.Session, error) {
	f := store.SessionFilter{}
	if !all {
		f.Statuses = []string{store.SessionCreated, store.SessionActive, store.SessionPaused}
	}
	return s.o.Store.Sessions(ctx, f)
}

type sessionsData struct {
	Sessions []store.Session
	All      bool
	Max      int
}

func (s *Server) sessionsData(r *http.Request) (sessionsData, error) {
	all := r.URL.Query().Get("all") != ""
	ss, err := s.sessionsOf(r.Context(), all)
	return sessionsData{Sessions: ss, All: all, Max: s.o.Config.MaxConcurrentSessions}, err
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
	ses, err := s.o.Store.Session(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	v := sessionView{Session: ses, MayControl: supervision.MayControl(s.o.Config, s.o.User, ses), Steering: s.o.Steering != nil && ses.Live(),
		HasLog: s.o.SessionLog != nil}
	if v.Requests, err = s.o.Store.Requests(ctx, id); err != nil {
		return v, err
	}
	for _, r := range v.Requests {
		if r.Status == store.StatusPending {
			c := s.cardOf(ctx, r)
			v.Pending = &c
		}
	}
	if v.Audit, err = s.o.Store.Audit(ctx, id); err != nil {
		return v, err
	}
	v.AuditTotal = len(v.Audit)
	if n := len(v.Audit); n > 50 {
		v.Audit = v.Audit[n-50:]
	}
	if s.o.Checkpoints != nil {
		if v.Checkpoints, err = s.o.Checkpoints.List(ctx, id); err != nil {
			v.CheckErr = err.Error()
		}
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
		ses, err := supervision.MoveSession(ctx, s.o.Store, s.o.Config, s.o.User, id, to, store.SurfaceWeb, reason)
		if err != nil {
			s.fail(w, r, ret, err)
			return
		}
		s.done(w, r, ret, fmt.Sprintf("Session %d is %s.", ses.ID, said))
	}
	switch r.PathValue("action") {
	case "pause":
		move(store.SessionPaused, "paused")
	case "resume":
		move(store.SessionActive, "active")
	case "stop":
		move(store.SessionTerminated, "stopped")
	case "steer":
		if s.o.Steering == nil {
			s.fail(w, r, ret, badInput("steering is not available in this build"))
			return
		}
		text := strings.TrimSpace(r.FormValue("text"))
		if text == "" {
			s.fail(w, r, ret, badInput("the message is empty: write what the agent should do"))
			return
		}
		if err := s.o.Steering.Steer(ctx, id, s.o.User, text); err != nil {
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
// shows them and only a second one with force=1 restores.
func (s *Server) restore(w http.ResponseWriter, r *http.Request, id int64, ret string) {
	if s.o.Checkpoints == nil {
		s.fail(w, r, ret, badInput("checkpoints are not available in this build"))
		return
	}
	ctx := r.Context()
	cp := r.FormValue("checkpoint")
	force := r.FormValue("force") == "1"
	if !force {
		diverged, err := s.o.Checkpoints.Diverged(ctx, id, cp)
		if err != nil {
			s.fail(w, r, ret, err)
			return
		}
		if len(diverged) > 0 {
			if wantsJSON(r) {
				writeJSON(w, http.StatusConflict, map[string]any{"ok": false, "confirm": true, "diverged": diverged,
					"error": fmt.Sprintf("%d files changed since checkpoint %s: restoring loses those changes", len(diverged), cp)})
				return
			}
			v, err := s.sessionView(ctx, id)
			if err != nil {
				s.fail(w, r, ret, err)
				return
			}
			v.Diverged, v.RestoreID = diverged, cp
			w.WriteHeader(http.StatusConflict)
			s.page(w, r, "session", fmt.Sprintf("Session %d", id), v)
			return
		}
	}
	if err := s.o.Checkpoints.Restore(ctx, id, cp, s.o.User, force); err != nil {
		s.fail(w, r, ret, err)
		return
	}
	s.done(w, r, ret, "Restored checkpoint "+cp+".")
}
