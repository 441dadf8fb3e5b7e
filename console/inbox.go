package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

// card is one request as the inbox shows it.
type card struct {
	store.Request
	Session store.Session
	// Always is what "approve always" would add ("" AlwaysErr when it can).
	Always    *supervision.AlwaysPlan
	AlwaysErr string
	// MayDecide: the console's person may decide it (owner or operator).
	MayDecide bool
	// Pending is Status == pending, for the templates.
	Pending bool
}

func (s *Server) cardOf(ctx context.Context, r store.Request) card {
	c := card{Request: r, Pending: r.Status == store.StatusPending}
	c.Session, _ = s.o.Store.Session(ctx, r.SessionID)
	c.MayDecide = supervision.MayControl(s.o.Config, s.o.User, c.Session)
	if c.Pending {
		plan, err := supervision.PlanAlways(s.o.Workspace.Root, s.o.Getenv, r)
		if err != nil {
			c.AlwaysErr = err.Error()
		} else {
			c.Always = plan
		}
	}
	return c
}

// inboxCards are the pending requests, oldest first, and the requests of
// keep (what the page shows already) in their current state: a request
// decided elsewhere stays on the page with who decided it.
func (s *Server) inboxCards(ctx context.Context, keep []int64) ([]card, error) {
	pending, err := s.o.Store.Pending(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	byID := map[int64]store.Request{}
	for _, p := range pending {
		ids = append(ids, p.ID)
		byID[p.ID] = p.Request
	}
	for _, id := range keep {
		if _, ok := byID[id]; ok {
			continue
		}
		r, err := s.o.Store.Request(ctx, id)
		if err != nil {
			continue
		}
		ids = append(ids, id)
		byID[id] = r
	}
	slices.Sort(ids)
	out := make([]card, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.cardOf(ctx, byID[id]))
	}
	return out, nil
}

func (s *Server) inboxPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.inboxOf(r.Context(), keepIDs{})
	if err != nil {
		s.fail(w, r, "/inbox", err)
		return
	}
	s.page(w, r, "inbox", "Inbox", v)
}

func (s *Server) inboxList(w http.ResponseWriter, r *http.Request) {
	v, err := s.inboxOf(r.Context(), parseKeep(r.URL.Query().Get("keep")))
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	s.render(w, "inbox", "inbox-list", v)
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
	var plan *supervision.AlwaysPlan
	if r.FormValue("always") != "" {
		req, err := s.o.Store.Request(ctx, id)
		if err != nil {
			s.fail(w, r, ret, err)
			return
		}
		if req.Status != store.StatusPending {
			s.fail(w, r, ret, &store.DecidedError{Request: req})
			return
		}
		if plan, err = supervision.PlanAlways(s.o.Workspace.Root, s.o.Getenv, req); err != nil {
			s.fail(w, r, ret, err)
			return
		}
		// The rule the page showed is the rule written, or nothing is.
		if shown := r.FormValue("rule"); shown != plan.Rule.Key+": "+plan.Rule.Value {
			s.fail(w, r, ret, badInput("the rule changed since the page showed it (now %s: %s): look again", plan.Rule.Key, plan.Rule.Value))
			return
		}
	}
	got, err := supervision.Decide(ctx, s.o.Store, store.Decision{RequestID: id, Approve: true, By: s.o.User, Surface: store.SurfaceWeb, Reason: strings.TrimSpace(r.FormValue("reason"))}, plan)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	msg := fmt.Sprintf("Request %d approved.", got.ID)
	if plan.Changes() {
		msg = fmt.Sprintf("Request %d approved; .agent/policy.yaml now auto-approves %s: %s.", got.ID, plan.Rule.Key, plan.Rule.Value)
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
	got, err := supervision.Decide(r.Context(), s.o.Store, store.Decision{RequestID: id, By: s.o.User, Surface: store.SurfaceWeb, Reason: reason}, nil)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	s.done(w, r, ret, fmt.Sprintf("Request %d rejected.", got.ID))
}
