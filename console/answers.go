package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/supervision"
)

// Issue 22's continuation prompts and stall alerts in the inbox, answered
// as `agentinfra answer` answers them: the store's compare-and-set
// (DecidePrompt, DecideAlert) as the console's person, surface web.

// promptCard is one continuation prompt as the inbox shows it.
type promptCard struct {
	supervision.Prompt
	Session   supervision.Session
	MayDecide bool
	Pending   bool
}

// alertCard is one stall alert as the inbox shows it. A nudged alert is
// still active: its buttons stay, under who nudged it.
type alertCard struct {
	supervision.Alert
	Session   supervision.Session
	MayDecide bool
	Active    bool
}

// inboxView is the inbox's one list: requests, then prompts, then alerts,
// each oldest first.
type inboxView struct {
	Requests []card
	Prompts  []promptCard
	Alerts   []alertCard
	// Down are the hosts (supervised agents' workspaces on Coder) that
	// cannot be reached: their items are not listed until they can.
	Down []supervision.HostState
	// After is the page's cursor (0: the first page); More counts the
	// requests after the page, Next is the cursor of the next page.
	After, Next int64
	More        int
}

func (v inboxView) Empty() bool {
	return len(v.Requests)+len(v.Prompts)+len(v.Alerts) == 0 && v.More == 0
}

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

// inboxOf is what waits (the service's inbox, the page after the cursor
// after: a flood of requests is not one page as long as the flood) and
// the items of keep in their current state, each list oldest first.
func (s *Server) inboxOf(ctx context.Context, after int64, keep keepIDs) (inboxView, error) {
	all, err := s.svc.Inbox(ctx)
	if err != nil {
		return inboxView{}, err
	}
	in := all.Page(after, supervision.InboxPageSize)
	v := inboxView{After: after, Next: in.Next, More: in.More}
	for _, h := range in.Hosts {
		if !h.Reachable {
			v.Down = append(v.Down, h)
		}
	}
	v.Requests = cardsOf(ctx, in.Requests, func(p supervision.PendingView) (int64, supervision.Request) { return p.ID, p.Request }, keep.requests, s.svc.Request, s.cardOf)
	v.Prompts = cardsOf(ctx, in.Prompts, func(p supervision.PromptView) (int64, supervision.Prompt) { return p.ID, p.Prompt }, keep.prompts, s.svc.Prompt, s.promptCardOf)
	v.Alerts = cardsOf(ctx, in.Alerts, func(a supervision.AlertView) (int64, supervision.Alert) { return a.ID, a.Alert }, keep.alerts, s.svc.Alert, s.alertCardOf)
	return v, nil
}

// cardsOf makes the cards of the waiting items and of those of keep the
// page shows already (read as they are now), by ID.
func cardsOf[V, T, C any](ctx context.Context, waiting []V, item func(V) (int64, T), keep []int64, read func(context.Context, int64) (T, error), card func(context.Context, T) C) []C {
	byID := map[int64]T{}
	var ids []int64
	for _, w := range waiting {
		id, it := item(w)
		ids = append(ids, id)
		byID[id] = it
	}
	for _, id := range keep {
		if _, ok := byID[id]; ok {
			continue
		}
		if it, err := read(ctx, id); err == nil {
			ids = append(ids, id)
			byID[id] = it
		}
	}
	slices.Sort(ids)
	out := make([]C, 0, len(ids))
	for _, id := range ids {
		out = append(out, card(ctx, byID[id]))
	}
	return out
}

func (s *Server) promptCardOf(ctx context.Context, p supervision.Prompt) promptCard {
	c := promptCard{Prompt: p, Pending: p.Status == supervision.PromptPending}
	c.Session, c.MayDecide = s.sessionOf(ctx, p.SessionID)
	return c
}

func (s *Server) alertCardOf(ctx context.Context, a supervision.Alert) alertCard {
	c := alertCard{Alert: a, Active: a.Active()}
	c.Session, c.MayDecide = s.sessionOf(ctx, a.SessionID)
	return c
}

// sessionOf is a session and whether the console's person may act on it
// (its owner or an operator: the service's rule).
func (s *Server) sessionOf(ctx context.Context, id int64) (supervision.Session, bool) {
	ses, err := s.svc.Session(ctx, id)
	return ses, err == nil && s.svc.May(ctx, s.actor, ses, "") == nil
}

func itemID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badInput("%s ID %q is not a number", what, r.PathValue("id"))
	}
	return id, nil
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
	got, err := s.svc.AnswerPrompt(r.Context(), s.actor, supervision.PromptAnswer{Prompt: id, Action: r.PathValue("action"), Instruction: r.FormValue("text")})
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	s.done(w, r, ret, fmt.Sprintf("Prompt p%d %s.", got.ID, got.Status))
}

// answerAlert is POST /alerts/{id}/{nudge|dismiss|stop}; a nudge's
// message is "text", else the watchdog's configured nudge.
func (s *Server) answerAlert(w http.ResponseWriter, r *http.Request) {
	ret := back(r, "/inbox")
	id, err := itemID(r, "stall alert")
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	action := r.PathValue("action")
	got, err := s.svc.AnswerAlert(r.Context(), s.actor, supervision.AlertAnswer{Alert: id, Action: action, Text: r.FormValue("text")})
	if err != nil {
		s.fail(w, r, ret, err)
		return
	}
	msg := map[string]string{
		supervision.AlertNudge:   fmt.Sprintf("Stall alert s%d nudged: the message is queued for session %d.", got.ID, got.SessionID),
		supervision.AlertDismiss: fmt.Sprintf("Stall alert s%d dismissed.", got.ID),
		supervision.AlertStop:    fmt.Sprintf("Stall alert s%d: session %d is being stopped.", got.ID, got.SessionID),
	}[action]
	s.done(w, r, ret, msg)
}
