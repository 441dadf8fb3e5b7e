package review

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// The kinds of work a change gives an agent.
const (
	// KindChanges: a change sent back, for its agent to address.
	KindChanges = "changes"
	// KindReview: a change in review, for the reviewer agent.
	KindReview = "review"
)

// Pending is a change that waits for an agent to be started on it.
type Pending struct {
	Agent string `json:"agent"`
	Task  string `json:"task"`
	Kind  string `json:"kind"`
	// Since is when it began to wait (the request, the recording).
	Since time.Time `json:"since"`
}

// Delivery is what Deliver did for an agent.
type Delivery struct {
	Agent string `json:"agent"`
	// Task, Kind and Run: the change the agent was started on, what for,
	// and the run ("" when nothing started).
	Task string `json:"task,omitempty"`
	Kind string `json:"kind,omitempty"`
	Run  string `json:"run,omitempty"`
	// Waiting says why nothing started (the agent is busy: it gets it
	// when it is idle).
	Waiting string `json:"waiting,omitempty"`
}

// Pending lists what waits for an agent, oldest first; the files are the
// queue, nothing else keeps it:
//   - a change sent back (changes_requested) whose task is IN_PROGRESS,
//     held by its agent: no run of the agent works on it, since a run on
//     it ends by recording it again (REVIEW) or BLOCKED;
//   - with review.reviewer, a change in REVIEW that the reviewer has
//     neither judged nor been started on at its current round.
func (s *Service) Pending(ctx context.Context) ([]Pending, error) {
	set, err := s.settings()
	if err != nil {
		return nil, err
	}
	v, err := task.LoadVocabulary(s.ws)
	if err != nil {
		return nil, err
	}
	var words []string
	for _, st := range []string{task.StatusInProgress, task.StatusReview} {
		w, err := task.WorkflowStatus(v, st)
		if err != nil {
			return nil, err
		}
		words = append(words, w)
	}
	tasks, err := task.ListTasks(ctx, s.ws, matrix.Query{Status: words})
	if err != nil {
		return nil, err
	}
	var out []Pending
	for _, t := range tasks {
		dir, _ := task.Folder(s.ws, nil, t.ID)
		if dir == "" {
			continue
		}
		c, err := readChange(filepath.Join(dir, FileName))
		if err != nil {
			continue // no change (or one review list names as unreadable)
		}
		if p, ok := pendingOf(c, t, v, set.Reviewer); ok {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b Pending) int { return a.Since.Compare(b.Since) })
	return out, nil
}

// pendingOf says what c waits for, if anything.
func pendingOf(c Change, t matrix.Task, v *matrix.Vocabulary, reviewer string) (Pending, bool) {
	switch {
	case c.State == StateChanges && task.IsStatus(v, t, task.StatusInProgress) && strings.EqualFold(task.Holder(t), "@"+strings.TrimPrefix(c.Agent, "@")):
		since := c.RecordedAt
		if n := len(c.Comments); n > 0 {
			since = c.Comments[n-1].At
		}
		return Pending{Agent: c.Agent, Task: c.Task, Kind: KindChanges, Since: since}, true
	case reviewer != "" && !strings.EqualFold(reviewer, c.Agent) && c.State == StateReview && task.IsStatus(v, t, task.StatusReview) &&
		c.LastVerdict() == nil && (c.Reviewing == nil || c.Reviewing.Round != c.Round):
		return Pending{Agent: reviewer, Task: c.Task, Kind: KindReview, Since: c.RecordedAt}, true
	}
	return Pending{}, false
}

// Deliver starts agent on the oldest change that waits for it (Pending):
// a change sent back, with Prompt (its CLI session goes on), or the
// reviewer on a change, with ReviewerPrompt. A busy agent is not started:
// the change waits, and the fleet delivers it when one of its runs ends
// (DeliverAll). nil when nothing waits for agent, or the service has no
// fleet.
func (s *Service) Deliver(ctx context.Context, agent string) *Delivery {
	if s.fleet == nil {
		return nil
	}
	pending, err := s.Pending(ctx)
	if err != nil {
		return &Delivery{Agent: agent, Waiting: "what waits could not be read: " + err.Error()}
	}
	for _, p := range pending {
		if strings.EqualFold(p.Agent, strings.TrimPrefix(agent, "@")) {
			d := s.deliver(ctx, p)
			return &d
		}
	}
	return nil
}

// DeliverAll starts every idle agent on the oldest change that waits for
// it: the fleet's run end calls it, so that what waited for a busy agent
// reaches it once it is idle.
func (s *Service) DeliverAll(ctx context.Context) []Delivery {
	if s.fleet == nil {
		return nil
	}
	pending, err := s.Pending(ctx)
	if err != nil {
		return []Delivery{{Waiting: "what waits could not be read: " + err.Error()}}
	}
	var out []Delivery
	tried := map[string]bool{}
	for _, p := range pending {
		key := fleet.Key(p.Agent)
		if tried[key] {
			continue // one run an agent at a time: the next waits for its end
		}
		tried[key] = true
		out = append(out, s.deliver(ctx, p))
	}
	return out
}

// deliver starts p's agent on its change and records the run in it.
func (s *Service) deliver(ctx context.Context, p Pending) Delivery {
	d := Delivery{Agent: p.Agent, Task: p.Task, Kind: p.Kind}
	in := fleet.StartInput{Name: p.Agent}
	switch p.Kind {
	case KindChanges:
		c, _, err := s.load(ctx, p.Task)
		if err != nil {
			d.Waiting = err.Error()
			return d
		}
		info, err := task.ShowTask(ctx, s.ws, p.Task)
		if err != nil {
			d.Waiting = err.Error()
			return d
		}
		in.TaskID, in.Prompt = p.Task, Prompt(c, info.Task)
	case KindReview:
		prompt, err := s.ReviewerPrompt(ctx, p.Task)
		if err != nil {
			d.Waiting = err.Error()
			return d
		}
		in.Text, in.ReviewOf = prompt, p.Task
	}
	r, err := s.fleet.Start(ctx, in)
	if err != nil {
		d.Waiting = waitingReason(p, err)
		return d
	}
	d.Run = r.Task.ID
	c, err := s.updateChange(ctx, p.Task, func(c *Change) error {
		sent := &Sent{Agent: p.Agent, Run: d.Run, Round: c.Round, At: s.now().UTC()}
		if p.Kind == KindReview {
			c.Reviewing = sent
		} else {
			c.Sent = sent
		}
		return nil
	})
	if err == nil {
		s.publish(c, MoveDelivered, fmt.Sprintf("%s: @%s in run %s", p.Kind, p.Agent, d.Run), "")
	}
	return d
}

// waitingReason says why p's agent was not started.
func waitingReason(p Pending, err error) string {
	if agenterr.KindOf(err) == agenterr.Conflict {
		return cmp.Or(agenterr.Of(err).Reason, err.Error()) + "; it gets task " + p.Task + " when it is idle"
	}
	return "not started: " + err.Error()
}
