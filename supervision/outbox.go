package supervision

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/store"
)

// What a remote surface (Slack) keeps so that it loses nothing and posts
// from one process: its outbox (the audit events it has still to post
// about, kept until posted) and its lease (the one process that posts).

type (
	// OutboxItem is an audit event a surface has still to post about.
	OutboxItem = store.OutboxItem
	// Lease is the process that posts for a surface, until it expires.
	Lease = store.Lease
)

// ActionSlackRefused is the audit line of what Slack refused someone.
const ActionSlackRefused = store.ActionSlackRefused

// EnqueueOutbox keeps items in the surface's outbox and moves its cursor to
// cursor, at once.
func (s *Service) EnqueueOutbox(ctx context.Context, surface string, items []OutboxItem, cursor int64) error {
	return s.st.EnqueueOutbox(ctx, surface, items, cursor)
}

// OutboxHeads lists, oldest first, the first outbox item of each session.
func (s *Service) OutboxHeads(ctx context.Context, surface string) ([]OutboxItem, error) {
	return s.st.OutboxHeads(ctx, surface)
}

// OutboxDone forgets a posted item.
func (s *Service) OutboxDone(ctx context.Context, surface string, seq int64) error {
	return s.st.OutboxDone(ctx, surface, seq)
}

// OutboxRetry keeps an item that could not be posted, to try at next.
func (s *Service) OutboxRetry(ctx context.Context, surface string, seq int64, next time.Time, why string) error {
	return s.st.OutboxRetry(ctx, surface, seq, next, why)
}

// OutboxStep records a part of an item's messages as posted.
func (s *Service) OutboxStep(ctx context.Context, surface string, seq int64, step string) error {
	return s.st.OutboxStep(ctx, surface, seq, step)
}

// OutboxLen counts what a surface has still to post.
func (s *Service) OutboxLen(ctx context.Context, surface string) (int, error) {
	return s.st.OutboxLen(ctx, surface)
}

// AcquireLease takes or renews the surface's lease for holder; held says
// whether holder has it (else l is the holder's).
func (s *Service) AcquireLease(ctx context.Context, surface, holder string, ttl time.Duration) (l Lease, held bool, err error) {
	return s.st.AcquireLease(ctx, surface, holder, ttl)
}

// ReleaseLease gives the surface's lease up, if holder has it.
func (s *Service) ReleaseLease(ctx context.Context, surface, holder string) error {
	return s.st.ReleaseLease(ctx, surface, holder)
}
