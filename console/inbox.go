package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
)

// card is one request as the inbox shows it.
type card struct {
	supervision.Request
	Session supervision.Session
	// Always is what "approve always" would add, and what "approve for
	// this session" covers ("" AlwaysErr when it can).
	Always    *supervision.AlwaysPlan
	AlwaysErr string
	// MayDecide: the console's person may decide it (owner or operator).
	MayDecide bool
	// Pending is Status == pending, for the templates.
	Pending bool
}

func (s *Server) cardOf(ctx context.Context, r supervision.Request) card {
	c := card{Request: r, Pending: r.Status == supervision.StatusPending}
	c.Session, c.MayDecide = s.sessionOf(ctx, r.SessionID)
	if c.Pending {
		plan, err := s.svc.PlanAlways(ctx, r.ID)
		if err != nil {
			c.AlwaysErr = err.Error()
		} else {
			c.Always = plan
		}
	}
	return c
}

func (s *Server) inboxPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.inboxOf(r.Context(), pageAfter(r), keepIDs{})
	if err != nil {
		s.fail(w, r, "/inbox", err)
		return
	}
	s.page(w, r, "inbox", "Inbox", v)
}

func (s *Server) inboxList(w http.ResponseWriter, r *http.Request) {
	v, err := s.inboxOf(r.Context(), pageAfter(r), parseKeep(r.URL.Query().Get("keep")))
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	s.render(w, "inbox", "inbox-list", v)
}

// pageAfter is the inbox page's cursor, ?after=ID (0, the first page,
// when there is none or it is not a number).
func pageAfter(r *http.Request) int64 {
	id, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}

func requestID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badInput("request ID %q is not a number", r.PathValue("id"))
	}
	return id, nil
}

func back(r *http.Request, def string) string {
	if b := r.FormValue("back"); strings.HasPrefix(b, "/") && !strings.HasPrefix(b, "//") {
		return b
	}
	return def
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	ret := back(r, "/inbox")
	id, err := requestID(r)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	ctx := r.Context()
	d := supervision.Decision{Request: id, Approve: true, Reason: strings.TrimSpace(r.FormValue("reason")), Session: r.FormValue("session") != ""}
	if r.FormValue("always") != "" {
		if d.Always, err = s.svc.PlanAlways(ctx, id); err != nil {
			s.fail(w, r, ret, err)
			return
		}
		// The rule the page showed is the rule written, or nothing is.
		if shown := r.FormValue("rule"); shown != d.Always.RuleText() {
			s.fail(w, r, ret, badInput("the rule changed since the page showed it (now %s): look again", d.Always.RuleText()))
			return
		}
	}
	got, err := s.svc.Decide(ctx, s.actor, d)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	msg := fmt.Sprintf("Request %d approved.", got.ID)
	if d.Session {
		msg = fmt.Sprintf("Request %d approved; such requests of session %d are approved without asking until it ends.", got.ID, got.SessionID)
	}
	if d.Always.Changes() {
		msg = fmt.Sprintf("Request %d approved; .agent/policy.yaml now auto-approves %s.", got.ID, d.Always.RuleText())
	}
	s.done(w, r, ret, msg)
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request) {
	ret := back(r, "/inbox")
	id, err := requestID(r)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	reason := strings.TrimSpace(r.FormValue("reason"))
	if reason == "" {
		s.fail(w, r, ret, badInput("a rejection needs a reason: the agent is told why"))
		return
	}
	got, err := s.svc.Decide(r.Context(), s.actor, supervision.Decision{Request: id, Reason: reason})
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	s.done(w, r, ret, fmt.Sprintf("Request %d rejected.", got.ID))
}

// wholeDiff streams a request's whole diff as the agent asked it (the
// store's file, checked against its size and SHA-256, when the request's
// own was cut), as plain text, with the characters that reorder or hide
// text shown as escapes, as on every page.
func (s *Server) wholeDiff(w http.ResponseWriter, r *http.Request) {
	id, err := requestID(r)
	if err != nil {
		s.fail(w, r, "/inbox", err)
		return
	}
	diff, _, err := s.svc.WholeDiff(r.Context(), id)
	if err != nil {
		s.fail(w, r, "/inbox", err)
		return
	}
	defer diff.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=request-%d.diff", id))
	termsafe.Copy(w, diff, termsafe.Visible) // a client gone mid-way is no error of ours
}
