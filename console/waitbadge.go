package console

import (
	"context"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/supervision"
)

// waitBadge is what a Fleet or Board card says of a session that waits for
// a person: what ("request 6: Run git push"), since when, and where to
// answer it (Key: the item's card on the inbox page, /inbox#Key).
type waitBadge struct {
	Key   string
	Label string
	What  string
	Since time.Time
}

// badgeOf is the badge of what a session waits for.
func badgeOf(it waiting.Item) waitBadge {
	key := fmt.Sprintf("req-%d", it.ID)
	switch it.Kind {
	case waiting.KindPrompt:
		key = fmt.Sprintf("prompt-%d", it.ID)
	case waiting.KindAlert:
		key = fmt.Sprintf("alert-%d", it.ID)
	}
	return waitBadge{Key: key, Label: it.Label(), What: it.What, Since: it.Since}
}

// waits is what the live sessions wait for, by the task and by the fleet
// run they work on. It is read from the store (as the inbox is), not from
// the supervisors' marker files: the page refreshes on the store's events,
// and a marker follows them by one poll.
type waits struct {
	byTask map[string]*waitBadge
	byRun  map[string]waitBadge
	// runs are the runs of the live sessions: for them the store's answer
	// stands, even when it is "nothing waits".
	runs map[string]bool
}

func (s *Server) waits(ctx context.Context) waits {
	w := waits{byTask: map[string]*waitBadge{}, byRun: map[string]waitBadge{}, runs: map[string]bool{}}
	views, err := s.svc.SessionViews(ctx, supervision.SessionFilter{Statuses: supervision.LiveStatuses})
	if err != nil {
		return w
	}
	for _, v := range views {
		if v.RunID != "" {
			w.runs[v.RunID] = true
		}
		if v.Waiting == nil {
			continue
		}
		b := badgeOf(*v.Waiting)
		// The oldest item of the task's sessions: the first to answer.
		if cur, ok := w.byTask[v.TaskID]; v.TaskID != "" && (!ok || b.Since.Before(cur.Since)) {
			w.byTask[v.TaskID] = &b
		}
		if v.RunID != "" {
			w.byRun[v.RunID] = b
		}
	}
	return w
}

// agent is what a's current run waits for, setting a's status to match
// the store: waiting while it waits, busy again once answered. A run this
// machine's store does not supervise (a Coder agent's) keeps what its
// backend said.
func (w waits) agent(a *fleet.Agent) *waitBadge {
	if a.CurrentRun == nil || !w.runs[a.CurrentRun.ID] {
		if a.Waiting != nil {
			b := badgeOf(*a.Waiting)
			return &b
		}
		return nil
	}
	b, ok := w.byRun[a.CurrentRun.ID]
	switch {
	case ok && a.Status.Running():
		a.Status = fleet.StatusWaiting
		return &b
	case ok:
		return &b
	case a.Status == fleet.StatusWaiting:
		a.Status = fleet.StatusBusy
	}
	return nil
}
