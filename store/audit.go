package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// Event is one line of the append-only audit log.
type Event struct {
	Seq       int64           `json:"seq"`
	At        time.Time       `json:"at"`
	SessionID int64           `json:"session_id,omitempty"`
	RequestID int64           `json:"request_id,omitempty"`
	Actor     string          `json:"actor"`
	Surface   string          `json:"surface"`
	Action    string          `json:"action"`
	Detail    json.RawMessage `json:"detail,omitempty"`
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func audit(ctx context.Context, x execer, at int64, session, request int64, actor, surface, action string, detail any) error {
	var d []byte
	if detail != nil {
		d, _ = json.Marshal(detail)
	}
	_, err := x.ExecContext(ctx, `INSERT INTO audit (at, session_id, request_id, actor, surface, action, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		at, nullID(session), nullID(request), actor, surface, action, string(d))
	return err
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// Record appends an event to the audit log (for what happens outside the
// store's own changes: a tool call the policy let through, a bridge error).
func (s *Store) Record(ctx context.Context, e Event) error {
	// Through tx, so that it waits its turn behind this process's other
	// writes instead of failing busy.
	return s.tx(ctx, func(tx *sql.Tx) error {
		return audit(ctx, tx, ms(s.now()), e.SessionID, e.RequestID, e.Actor, e.Surface, e.Action, e.Detail)
	})
}

// Audit lists a session's events (0 = every session's), oldest first.
func (s *Store) Audit(ctx context.Context, sessionID int64) ([]Event, error) {
	q := `SELECT ` + eventCols + ` FROM audit`
	var args []any
	if sessionID != 0 {
		q += ` WHERE session_id = ?`
		args = append(args, sessionID)
	}
	return queryAll(ctx, s.db, scanEvent, q+` ORDER BY seq`, args...)
}

const eventCols = `seq, at, COALESCE(session_id, 0), COALESCE(request_id, 0), actor, surface, action, detail`

func scanEvent(sc scanner) (Event, error) {
	var e Event
	var at int64
	var detail string
	err := sc.Scan(&e.Seq, &at, &e.SessionID, &e.RequestID, &e.Actor, &e.Surface, &e.Action, &detail)
	e.At = fromMS(at)
	if detail != "" {
		e.Detail = json.RawMessage(detail)
	}
	return e, err
}
