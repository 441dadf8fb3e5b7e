package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Lease is the one process that posts for a remote surface (two `agentinfra
// slack` on one workspace would post everything twice), until ExpiresAt
// unless it renews it.
type Lease struct {
	Surface   string
	Holder    string
	ExpiresAt time.Time
}

// AcquireLease takes or renews the surface's lease for holder, for ttl: it
// is holder's when it was, when it has expired, or when there was none.
// held says whether holder has it now; the lease returned is the current
// one (another holder's when not held).
func (s *Store) AcquireLease(ctx context.Context, surface, holder string, ttl time.Duration) (l Lease, held bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO surface_leases (surface, holder, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (surface) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE surface_leases.holder = excluded.holder OR surface_leases.expires_at <= ?`,
			surface, holder, ms(now.Add(ttl)), ms(now)); err != nil {
			return err
		}
		var exp int64
		l.Surface = surface
		if err := tx.QueryRowContext(ctx, `SELECT holder, expires_at FROM surface_leases WHERE surface = ?`, surface).Scan(&l.Holder, &exp); err != nil {
			return err
		}
		l.ExpiresAt = fromMS(exp)
		return nil
	})
	if err != nil {
		return Lease{}, false, fmt.Errorf("the %s lease: %w", surface, err)
	}
	return l, l.Holder == holder, nil
}

// ReleaseLease gives the surface's lease up, if holder has it: another
// process may take it at once.
func (s *Store) ReleaseLease(ctx context.Context, surface, holder string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM surface_leases WHERE surface = ? AND holder = ?`, surface, holder)
	return err
}
