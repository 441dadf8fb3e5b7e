package store

import (
	"context"
	"database/sql"
)

// ActionSlackRefused is the audit line of something Slack refused (who,
// what, why). Those that name no session (an unlinked member's click, a
// slash command) belong to nothing retention would purge: they go by their
// own age instead.
const ActionSlackRefused = "slack_refused"

const sessionlessRefusals = `session_id IS NULL AND action = '` + ActionSlackRefused + `' AND at < ?`

// purgeRefusals deletes (or counts, dryRun) the sessionless refusals older
// than cutoff.
func (s *Store) purgeRefusals(ctx context.Context, cutoff int64, dryRun bool) (int, error) {
	var n int
	if dryRun {
		err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit WHERE `+sessionlessRefusals, cutoff).Scan(&n)
		return n, err
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE `+sessionlessRefusals, cutoff)
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		n = int(m)
		return nil
	})
	return n, err
}
