package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// What waits for an answer — an approval request, a continuation prompt, a
// stall alert — is a row of its kind's table (migrate.go keeps the three
// tables as they were, each with a partial unique index: one waiting row
// per session). Every kind is raised, answered and closed the same way,
// here: raiseTx inserts a waiting item of a live session, answerTx is the
// one compare-and-set of every answer to it (a person's, the policy's, a
// timer's, the agent's, the watchdog's), and an answer that lost gets the
// one *DecidedError.

// pendingKind is one kind of item that waits for an answer.
type pendingKind struct {
	item  string // ItemRequest, ItemPrompt or ItemAlert
	table string
	// waiting lists, as SQL, the statuses of a row that still waits.
	waiting string
	// deadline: rows have an expires_at after which a person's answer is
	// refused (the deadline's own outcome is applied instead).
	deadline bool
	// at is the column of when the row last changed status.
	at string
	// ended is the status a waiting row takes when its session ends.
	ended string
	// auditKey names the item in its audit lines' detail ({"prompt": 12});
	// "" for a request, which has the audit log's request_id column.
	auditKey string
}

var (
	requestItems = pendingKind{item: ItemRequest, table: "approvals", waiting: "('pending')", deadline: true, at: "decided_at", ended: StatusInterrupted}
	promptItems  = pendingKind{item: ItemPrompt, table: "prompts", waiting: "('pending')", deadline: true, at: "decided_at", ended: PromptWithdrawn, auditKey: "prompt"}
	alertItems   = pendingKind{item: ItemAlert, table: "alerts", waiting: "('pending','nudged')", at: "updated_at", ended: AlertDismissed, auditKey: "alert"}
	pendingKinds = []pendingKind{requestItems, promptItems, alertItems}
)

// ref is how messages name an item: request 12, prompt p12, stall alert s12.
func (k pendingKind) ref(id int64) string {
	switch k.item {
	case ItemPrompt:
		return fmt.Sprintf("prompt p%d", id)
	case ItemAlert:
		return fmt.Sprintf("stall alert s%d", id)
	}
	return fmt.Sprintf("request %d", id)
}

func (k pendingKind) notFound(id int64) error {
	if k.item == ItemRequest {
		return notFound("request", id)
	}
	return fmt.Errorf("%s: %w", k.ref(id), ErrNotFound)
}

// raiseTx inserts (with insert and its args) a waiting item of session
// sessionID, which must not have ended; a session that already has a
// waiting item of the kind gets ErrPendingExists (the unique index, not a
// check in Go, keeps one at a time). It returns the new item's ID, after
// its audit line (detail, with the item's ID under auditKey).
func (k pendingKind) raiseTx(ctx context.Context, tx *sql.Tx, sessionID int64, actor string, now int64, detail map[string]any, insert string, args ...any) (int64, error) {
	ses, err := sessionTx(ctx, tx, sessionID)
	if err != nil {
		return 0, err
	}
	if ses.Ended() {
		return 0, &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("session %d is %s: it cannot raise a %s", ses.ID, ses.Status, k.item), Err: ErrBadTransition}
	}
	res, err := tx.ExecContext(ctx, insert, args...)
	if isUnique(err) {
		return 0, &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("session %d already has a pending %s", sessionID, k.item), Err: ErrPendingExists}
	}
	if err != nil {
		return 0, fmt.Errorf("raise a %s: %w", k.item, err)
	}
	id, _ := res.LastInsertId()
	return id, k.auditTx(ctx, tx, now, sessionID, id, actor, SurfaceSupervisor, k.item+"_raised", detail)
}

// auditTx writes an audit line about item id of the kind.
func (k pendingKind) auditTx(ctx context.Context, tx *sql.Tx, now, sessionID, id int64, actor, surface, action string, detail map[string]any) error {
	requestID := id
	if k.auditKey != "" {
		requestID = 0
		if detail == nil {
			detail = map[string]any{}
		}
		detail[k.auditKey] = id
	}
	return audit(ctx, tx, now, sessionID, requestID, actor, surface, action, detail)
}

// answer is one answer to a waiting item.
type answer struct {
	id      int64
	by      string
	surface string
	// person: a person's answer, refused once the item's deadline passed.
	person bool
	// set is the SQL of the columns the answer sets, with its args.
	set  string
	args []any
	// action and detail are the audit line of an answer that won.
	action string
	detail map[string]any
	// also runs in the transaction of an answer that won: what else it
	// changes (a nudge's steering message).
	also func(tx *sql.Tx, sessionID, now int64) error
	// late applies the deadline's outcome to an item whose deadline passed
	// before a person's answer came (it expires, never approved).
	late func(tx *sql.Tx, now time.Time) error
}

// answerTx is the compare-and-set of every answer to an item of the kind:
// the row changes only while it still waits — and, for a person's answer
// to an item with a deadline, before it. Of any number of answers from any
// surfaces and processes exactly one wins; won is false for the others
// (the caller reads the item as it is and returns a *DecidedError). A
// person's answer after the deadline applies a.late first.
func (k pendingKind) answerTx(ctx context.Context, tx *sql.Tx, a answer, now time.Time) (won bool, err error) {
	var sessionID int64
	var status string
	if err := tx.QueryRowContext(ctx, `SELECT session_id, status FROM `+k.table+` WHERE id = ?`, a.id).Scan(&sessionID, &status); err != nil {
		if isNoRows(err) {
			return false, k.notFound(a.id)
		}
		return false, err
	}
	q := `UPDATE ` + k.table + ` SET ` + a.set + ` WHERE id = ? AND status IN ` + k.waiting
	args := append(slices.Clip(a.args), a.id)
	if a.person && k.deadline {
		q += ` AND (expires_at IS NULL OR expires_at > ?)`
		args = append(args, ms(now))
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if a.late != nil && status == StatusPending {
			return false, a.late(tx, now)
		}
		return false, nil
	}
	if a.also != nil {
		if err := a.also(tx, sessionID, ms(now)); err != nil {
			return false, err
		}
	}
	return true, k.auditTx(ctx, tx, ms(now), sessionID, a.id, a.by, a.surface, a.action, a.detail)
}

// answerItem runs, in one transaction, the answer mk makes of item id of
// kind k as read finds it, with the deadline's outcome late (nil: the kind
// has none), and reads the item as it is after. An answer that lost gets
// lost's error of the item.
func answerItem[T any](ctx context.Context, s *Store, k pendingKind, id int64, read func(context.Context, queryer, int64) (T, error),
	mk, late func(cur T, now time.Time) answer, lost func(T) *DecidedError) (T, error) {
	var out T
	var won bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := read(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.now()
		a := mk(cur, now)
		if late != nil {
			a.late = func(tx *sql.Tx, now time.Time) error {
				_, err := k.answerTx(ctx, tx, late(cur, now), now)
				return err
			}
		}
		if won, err = k.answerTx(ctx, tx, a, now); err != nil {
			return err
		}
		out, err = read(ctx, tx, id)
		return err
	})
	var zero T
	switch {
	case err != nil:
		return zero, err
	case !won:
		return out, lost(out)
	}
	return out, nil
}

// endWaitingTx closes every waiting item of a session that ends: its
// request is interrupted, its prompt withdrawn, its alert dismissed (the
// session's own audit line says why); its queued steering messages are
// dropped (nobody is left to read them).
func endWaitingTx(ctx context.Context, tx *sql.Tx, sessionID, now int64, t Transition) error {
	by, surface, reason := t.By, orSurface(t.Surface), "the session ended: "+t.Reason
	if slices.Contains(PeopleSurfaces, surface) && by != "" {
		// A person stopped it: who, how and why, as the run's end says it.
		reason = Session{Status: SessionTerminated, EndedBy: by, EndSurface: surface, EndReason: t.Reason}.StopText()
	}
	for _, k := range pendingKinds {
		if _, err := tx.ExecContext(ctx, `UPDATE `+k.table+` SET status = ?, `+k.at+` = ?, decided_by = ?, surface = ?, reason = ?
			WHERE session_id = ? AND status IN `+k.waiting, k.ended, now, by, surface, reason, sessionID); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE steering SET status = 'dropped' WHERE session_id = ? AND status = 'queued'`, sessionID)
	return err
}

// DecidedError is the answer to a decision that lost: the item — a
// request, a prompt or an alert — no longer waited (decided by someone
// first, expired or timed out, withdrawn, interrupted). It holds the item
// as it is now: Request, or Prompt or Alert (the one whose ID is set).
type DecidedError struct {
	Request Request
	Prompt  Prompt
	Alert   Alert
}

func (e *DecidedError) Error() string {
	switch {
	case e.Prompt.ID != 0:
		p := e.Prompt
		switch {
		case p.Surface == SurfaceTimeout:
			return fmt.Sprintf("prompt p%d already timed out at %s (%s)", p.ID, when(p.DecidedAt), p.Status)
		case p.Status == PromptWithdrawn:
			return fmt.Sprintf("prompt p%d was withdrawn at %s (%s)", p.ID, when(p.DecidedAt), p.Reason)
		}
		return fmt.Sprintf("prompt p%d already %s via %s by %s at %s", p.ID, p.Status, p.Surface, Handle(p.DecidedBy), when(p.DecidedAt))
	case e.Alert.ID != 0:
		a := e.Alert
		return fmt.Sprintf("stall alert s%d is already %s via %s by %s at %s", a.ID, a.Status, orDashS(a.Surface), Handle(a.DecidedBy), when(&a.UpdatedAt))
	}
	r := e.Request
	switch r.Status {
	case StatusExpired:
		return fmt.Sprintf("request %d already expired at %s", r.ID, when(r.DecidedAt))
	case StatusWithdrawn:
		return fmt.Sprintf("request %d was withdrawn by the agent at %s", r.ID, when(r.DecidedAt))
	case StatusInterrupted:
		return fmt.Sprintf("request %d was interrupted at %s (%s)", r.ID, when(r.DecidedAt), r.Reason)
	}
	return fmt.Sprintf("request %d already %s via %s by %s at %s", r.ID, r.Status, r.Surface, Handle(r.DecidedBy), when(r.DecidedAt))
}

// Is makes errors.Is(err, ErrExpired) true for an item whose deadline
// passed (a request that expired, a prompt that timed out).
func (e *DecidedError) Is(target error) bool {
	if target != ErrExpired {
		return false
	}
	if e.Prompt.ID != 0 {
		return e.Prompt.Surface == SurfaceTimeout
	}
	return e.Alert.ID == 0 && e.Request.Status == StatusExpired
}

// Unwrap makes a lost decision a conflict (exit 4, HTTP 409).
func (e *DecidedError) Unwrap() error { return agenterr.ErrConflict }

func when(t *time.Time) string {
	if t == nil {
		return "?"
	}
	return t.Format(time.RFC3339)
}

// waitSettled blocks until settled reports true (read again each time the
// database changes, by any process) or ctx ends.
func (s *Store) waitSettled(ctx context.Context, settled func() (bool, error)) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := s.Changes(wctx)
	if err != nil {
		return err
	}
	for {
		if done, err := settled(); err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-changes:
			if !ok {
				return ctx.Err()
			}
		}
	}
}

func orDashS(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
