package supervision

import (
	"context"

	"github.com/agentinfra/agentinfra/internal/waiting"
)

// Waiting is what a session waits a person for (package waiting's Item).
type Waiting = waiting.Item

// Waiting reads what each session waits for: the oldest of its pending
// request, continuation prompt and active stall alert, by session ID (a
// session that waits for nothing is not in the map).
func (s *Service) Waiting(ctx context.Context) (map[int64]Waiting, error) {
	in, err := s.Inbox(ctx)
	if err != nil {
		return nil, err
	}
	return in.Waiting(), nil
}

// Waiting is what each session of the inbox waits for (see
// Service.Waiting).
func (in Inbox) Waiting() map[int64]Waiting {
	out := map[int64]Waiting{}
	add := func(session int64, it Waiting) {
		if cur, ok := out[session]; !ok || it.Since.Before(cur.Since) {
			out[session] = it
		}
	}
	for _, r := range in.Requests {
		add(r.SessionID, Waiting{Kind: waiting.KindRequest, ID: r.ID, Ref: waiting.Ref(waiting.KindRequest, r.ID), What: r.Title, Since: r.CreatedAt})
	}
	for _, p := range in.Prompts {
		add(p.SessionID, Waiting{Kind: waiting.KindPrompt, ID: p.ID, Ref: waiting.Ref(waiting.KindPrompt, p.ID), What: p.Kind, Since: p.CreatedAt})
	}
	for _, a := range in.Alerts {
		add(a.SessionID, Waiting{Kind: waiting.KindAlert, ID: a.ID, Ref: waiting.Ref(waiting.KindAlert, a.ID), What: a.Reason, Since: a.RaisedAt})
	}
	return out
}

// SessionView is a session as the surfaces list it: with what it waits
// for (nil: nothing).
type SessionView struct {
	Session
	Waiting *Waiting `json:"waiting,omitempty"`
}

// SessionViews lists sessions as Sessions does, each with what it waits
// for.
func (s *Service) SessionViews(ctx context.Context, f SessionFilter) ([]SessionView, error) {
	ss, err := s.Sessions(ctx, f)
	if err != nil {
		return nil, err
	}
	w, err := s.Waiting(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SessionView, len(ss))
	for i, ses := range ss {
		out[i].Session = ses
		if it, ok := w[ses.ID]; ok && !ses.Ended() {
			out[i].Waiting = &it
		}
	}
	return out, nil
}
