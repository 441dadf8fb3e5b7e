package supervision

import (
	"context"
	"errors"
	"sync"
)

// What a remote surface (Slack) keeps of its own in the store: the message
// it posted for each item, so that a decision taken elsewhere updates it,
// after a restart too; how far in the audit log it has read; and the audit
// lines of its own (a refused click, a registry command run). What it keeps
// of a host's item is kept in the host's store, with the item.

// PutPost records (or replaces) the message posted about an item.
func (s *Service) PutPost(ctx context.Context, p Post) error {
	if e, n, err := s.route(p.SessionID); err != nil || e != nil {
		if err != nil {
			return err
		}
		hp := p
		hp.SessionID, hp.ItemID = n, e.native(p.ItemID)
		return e.err(e.h.PutPost(ctx, hp))
	}
	return s.st.PutPost(ctx, p)
}

// PostOf reads the message posted about an item (ErrNotFound when none).
func (s *Service) PostOf(ctx context.Context, surface, item string, id int64) (Post, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		return hostCall(e, err, func() (Post, error) { return e.h.PostOf(ctx, surface, item, n) }, e.post)
	}
	return s.st.PostOf(ctx, surface, item, id)
}

// SetPostState changes a post's state from from to to; it reports whether
// it was in from (of two updaters of a message, one writes its final text).
func (s *Service) SetPostState(ctx context.Context, surface, item string, id int64, from, to string) (bool, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		if err != nil {
			return false, err
		}
		ok, err := e.h.SetPostState(ctx, surface, item, n, from, to)
		return ok, e.err(err)
	}
	return s.st.SetPostState(ctx, surface, item, id, from, to)
}

// SessionOfThread is the session whose thread is channel/ts on a surface:
// this machine's, else a host's.
func (s *Service) SessionOfThread(ctx context.Context, surface, channel, ts string) (int64, error) {
	id, err := s.st.SessionOfThread(ctx, surface, channel, ts)
	if !errors.Is(err, ErrNotFound) || len(s.hosts.list) == 0 {
		return id, err
	}
	var mu sync.Mutex
	s.eachHost(ctx, func(ctx context.Context, e *hostEntry) {
		if n, herr := e.h.SessionOfThread(ctx, surface, channel, ts); herr == nil {
			mu.Lock()
			id, err = e.id(n), nil
			mu.Unlock()
		}
	})
	return id, err
}

// Cursor is the last audit event a surface has handled (ok false: none).
func (s *Service) Cursor(ctx context.Context, surface string) (seq int64, ok bool, err error) {
	return s.st.Cursor(ctx, surface)
}

// SetCursor records the last audit event a surface has handled.
func (s *Service) SetCursor(ctx context.Context, surface string, seq int64) error {
	return s.st.SetCursor(ctx, surface, seq)
}

// AuditAfter lists up to limit audit events of every session after seq,
// oldest first: the cross-process feed of what happens to this machine's
// sessions (the hosts': FollowHosts).
func (s *Service) AuditAfter(ctx context.Context, seq int64, limit int) ([]AuditEvent, error) {
	return s.st.AuditAfter(ctx, seq, limit)
}

// LastAuditSeq is the newest audit event's number.
func (s *Service) LastAuditSeq(ctx context.Context) (int64, error) { return s.st.LastAuditSeq(ctx) }

// Record appends a surface's own line to the audit log (a refused click, a
// command of the registry run from Slack); a line about a host's session
// goes to the host's log.
func (s *Service) Record(ctx context.Context, e AuditEvent) error {
	if he, n, err := s.route(e.SessionID); err != nil || he != nil {
		if err != nil {
			return err
		}
		e.SessionID, e.RequestID = n, he.native(e.RequestID)
		return he.err(he.h.Record(ctx, e))
	}
	return s.st.Record(ctx, e)
}
