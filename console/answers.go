package console

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
)

// Issue 22's continuation prompts and stall alerts in the inbox, answered
// as `agentinfra answer` answers them: the store's compare-and-set
// (DecidePrompt, DecideAlert) as the console's person, surface web.

// promptCard is one continuation prompt as the inbox shows it.
type promptCard struct {
	store.Prompt
	Session   store.Session
	MayDecide bool
	Pending   bool
}

// alertCard is one stall alert as the inbox shows it. A nudged alert is
// still active: its buttons stay, under who nudged it.
type alertCard struct {
	store.Alert
	Session   store.Session
	MayDecide bool
	Active    bool
}

// inboxView is the inbox's one list: requests, then prompts, then alerts,
// each oldest first.
type inboxView struct {
	Requests []card
	Prompts  []promptCard
	Alerts   []alertCard
}

func (v inboxView) Empty() bool { return len(v.Requests)+len(v.Prompts)+len(v.Alerts) == 0 }

// keepIDs are the items a page shows already (data-key 12, p12, s12): they
// stay on the page in their current state once decided elsewhere.
type keepIDs struct{ requests, prompts, alerts []int64 }

func parseKeep(q string) keepIDs {
	var k keepIDs
	n := 0
	for _, f := range strings.Split(q, ",") {
		f = strings.TrimSpace(f)
		list := &k.requests
		switch {
		case strings.HasPrefix(f, "p"):
			list, f = &k.prompts, f[1:]
		case strings.HasPrefix(f, "s"):
			list, f = &k.alerts, f[1:]
		}
		if id, err := strconv.ParseInt(f, 10, 64); err == nil && id > 0 && n < 500 {
			*list = append(*list, id)
			n++
		}
	}
	return k
}

func (s *Server) inboxOf(ctx context.Context, keep keepIDs) (inboxView, error) {
	var v inboxView
	var err error
	if v.Requests, err = s.inboxCards(ctx, keep.requests); err != nil {
		return v, err
	}
	if v.Prompts, err = s.promptCards(ctx, keep.prompts); err != nil {
		return v, err
	}
	v.Alerts, err = s.alertCards(ctx, keep.alerts)
	return v, err
}

func (s *Server) promptCards(ctx context.Context, keep []int64) ([]promptCard, error) {
	pending, err := s.o.Store.PendingPrompts(ctx)
	if err != nil {
		return nil, err
	}
	var out []promptCard
	seen := map[int64]bool{}
	for _, p := range pending {
		seen[p.ID] = true
		out = append(out, s.promptCardOf(ctx, p.Prompt))
	}
	for _, id := range keep {
		if seen[id] {
			continue
		}
		if p, err := s.o.Store.Prompt(ctx, id); err == nil {
			seen[id] = true
			out = append(out, s.promptCardOf(ctx, p))
		}
	}
	sortByID(out, func(c promptCard) int64 { return c.ID })
	return out, nil
}

func (s *Server) promptCardOf(ctx context.Context, p store.Prompt) promptCard {
	c := promptCard{Prompt: p, Pending: p.Status == store.PromptPending}
	c.Session, _ = s.o.Store.Session(ctx, p.SessionID)
	c.MayDecide = supervision.MayControl(s.o.Config, s.o.User, c.Session)
	return c
}

func (s *Server) alertCards(ctx context.Context, keep []int64) ([]alertCard, error) {
	active, err := s.o.Store.ActiveAlerts(ctx)
	if err != nil {
		return nil, err
	}
	var out []alertCard
	seen := map[int64]bool{}
	for _, a := range active {
		seen[a.ID] = true
		out = append(out, s.alertCardOf(ctx, a.Alert))
	}
	for _, id := range keep {
		if seen[id] {
			continue
		}
		if a, err := s.o.Store.Alert(ctx, id); err == nil {
			seen[id] = true
			out = append(out, s.alertCardOf(ctx, a))
		}
	}
	sortByID(out, func(c alertCard) int64 { return c.ID })
	return out, nil
}

func (s *Server) alertCardOf(ctx context.Context, a store.Alert) alertCard {
	c := alertCard{Alert: a, Active: a.Active()}
	c.Session, _ = s.o.Store.Session(ctx, a.SessionID)
	c.MayDecide = supervision.MayControl(s.o.Config, s.o.User, c.Session)
	return c
}

func sortByID[T any](list []T, id func(T) int64) {
	slices.SortFunc(list, func(a, b T) int { return cmp.Compare(id(a), id(b)) })
}

// pendingCount is what waits for a person: requests, prompts, alerts.
func (s *Server) pendingCount(ctx context.Context) (int, error) {
	r, err := s.o.Store.Pending(ctx)
	if err != nil {
		return 0, err
	}
	p, err := s.o.Store.PendingPrompts(ctx)
	if err != nil {
		return 0, err
	}
	a, err := s.o.Store.ActiveAlerts(ctx)
	if err != nil {
		return 0, err
	}
	return len(r) + len(p) + len(a), nil
}

func itemID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badInput("%s ID %q is not a number", what, r.PathValue("id"))
	}
	return id, nil
}

// mayControl is the owner/operator check of the CLI's answer, made before
// the store's own, so that the refusal names who may.
func (s *Server) mayControl(ctx context.Context, sessionID int64, what string) error {
	ses, err := s.o.Store.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	if !supervision.MayControl(s.o.Config, s.o.User, ses) {
		return fmt.Errorf("%w: %s may not answer %s: only its session's owner %s or an operator may", store.ErrNotAllowed, store.Handle(s.o.User), what, store.Handle(ses.Owner))
	}
	return nil
}

// answerPrompt is POST /prompts/{id}/{continue|refine|stop}; refine takes
// the new instruction in "text".
func (s *Server) answerPrompt(w http.ResponseWriter, r *http.Request) {
	ret := back(r, "/inbox")
	id, err := itemID(r, "prompt")
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	action, text := r.PathValue("action"), strings.TrimSpace(r.FormValue("text"))
	switch action {
	case store.ActionContinue, store.ActionStop:
		text = ""
	case store.ActionRefine:
		if text == "" {
			s.fail(w, r, ret, badInput("refine needs the new instruction: it is sent to the agent as its next message"))
			return
		}
	default:
		s.fail(w, r, ret, badInput("a prompt is answered with continue, refine or stop, not %q", action))
		return
	}
	ctx := r.Context()
	p, err := s.o.Store.Prompt(ctx, id)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	if err := s.mayControl(ctx, p.SessionID, fmt.Sprintf("prompt p%d", id)); err != nil {
		s.fail(w, r, ret, err)
		return
	}
	got, err := s.o.Store.DecidePrompt(ctx, store.PromptDecision{ID: id, Action: action, Instruction: text, By: s.o.User, Surface: store.SurfaceWeb})
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	s.o.Bus.Publish(events.Event{Kind: events.PromptChanged, Root: s.o.Workspace.Root, SessionID: got.SessionID, ItemID: got.ID, Status: got.Status, Text: got.Instruction, Actor: s.o.User})
	s.done(w, r, ret, fmt.Sprintf("Prompt p%d %s.", got.ID, got.Status))
}

// answerAlert is POST /alerts/{id}/{nudge|stop}; a nudge's message is
// "text", else the watchdog's configured nudge.
func (s *Server) answerAlert(w http.ResponseWriter, r *http.Request) {
	ret := back(r, "/inbox")
	id, err := itemID(r, "stall alert")
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	d := store.AlertDecision{ID: id, By: s.o.User, Surface: store.SurfaceWeb}
	switch action := r.PathValue("action"); action {
	case store.AlertNudge:
		d.Action = store.AlertNudge
		if d.Text = strings.TrimSpace(r.FormValue("text")); d.Text == "" {
			if d.Text, err = s.defaultNudge(); err != nil {
				s.fail(w, r, ret, err)
				return
			}
		}
	case store.AlertStop:
		d.Action = store.AlertStop
	default:
		s.fail(w, r, ret, badInput("a stall alert is answered with nudge or stop, not %q", action))
		return
	}
	ctx := r.Context()
	a, err := s.o.Store.Alert(ctx, id)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	if err := s.mayControl(ctx, a.SessionID, fmt.Sprintf("stall alert s%d", id)); err != nil {
		s.fail(w, r, ret, err)
		return
	}
	got, err := s.o.Store.DecideAlert(ctx, d)
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	s.o.Bus.Publish(events.Event{Kind: events.AlertChanged, Root: s.o.Workspace.Root, SessionID: got.SessionID, ItemID: got.ID, Status: got.Status, Text: d.Text, Actor: s.o.User})
	msg := fmt.Sprintf("Stall alert s%d: session %d is being stopped.", got.ID, got.SessionID)
	if d.Action == store.AlertNudge {
		msg = fmt.Sprintf("Stall alert s%d nudged: the message is queued for session %d.", got.ID, got.SessionID)
	}
	s.done(w, r, ret, msg)
}

// defaultNudge is the watchdog's nudge of the workspace's config, as
// `agentinfra answer sN nudge` without a message sends it.
func (s *Server) defaultNudge() (string, error) {
	cfg, err := keepmoving.LoadConfig(s.o.Workspace)
	if err != nil {
		return "", err
	}
	if n := cfg.Watchdog.Nudge; n != "" {
		return n, nil
	}
	return "Are you still working? Say what you are doing or what blocks you.", nil
}
