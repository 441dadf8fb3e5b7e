package store

// Resuming a session whose supervisor died (issue 33). What a resume needs
// is kept in the append-only audit log, so that it cannot be rewritten and
// needs no column of its own:
//
//   - native_session: the agent CLI's own session (claude's session_id,
//     codex's thread, gemini's ACP session), each time it changes;
//   - session_resumed: an interrupted session taken up again (by whom, and
//     the how-manieth time: supervision.max_resumes counts them);
//   - answer_delivered: the answer to a request was handed to the CLI;
//   - decision_reapplied: a decision taken before was given to the CLI again
//     for a call it asked about again after a resume, instead of a person.
//
// The matching of a call asked again to a decision already taken: the same
// native call ID (the CLI asks about the very call again: it runs at most
// once, whatever it is told), or else the same action (Request.ActionKey:
// kind, tool, command, file, URL, diff) of a decision that was never
// delivered — the person decided while no supervisor was there to tell the
// CLI, so the CLI never ran the call. A decision that was delivered is not
// taken for a new call with the same action: the CLI may have run it (an
// approval is one run of the call), and running it again needs a person.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Audit actions of resuming.
const (
	ActionNativeSession     = "native_session"
	ActionSessionResumed    = "session_resumed"
	ActionAnswerDelivered   = "answer_delivered"
	ActionDecisionReapplied = "decision_reapplied"
)

// ErrResumeLimit refuses an automatic resume beyond supervision.max_resumes.
var ErrResumeLimit = agenterr.New(agenterr.Refused, "the session was resumed too many times")

// ActionKey identifies what a request asks to do, whatever the call that
// asks it: the same command, edit, fetch or tool call has the same key.
func (r Request) ActionKey() string {
	h := sha256.New()
	for _, s := range []string{r.Kind, r.Tool, r.Command, r.File, r.URL, r.Diff} {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	if r.Command == "" && r.File == "" && r.URL == "" && r.Diff == "" {
		h.Write([]byte(r.ToolInput)) // a tool call is told apart by its input
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SetNativeSession records the agent CLI's own session of session id (an
// audit line, when it differs from the last one recorded).
func (s *Store) SetNativeSession(ctx context.Context, id int64, native string) error {
	if native == "" {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := nativeSessionTx(ctx, tx, id)
		if err != nil || cur == native {
			return err
		}
		return audit(ctx, tx, ms(s.now()), id, 0, ActorAgentinfra, SurfaceSupervisor, ActionNativeSession, map[string]any{"native": native})
	})
}

// NativeSession is the agent CLI's own session of session id, the last one
// recorded ("" when the CLI never said).
func (s *Store) NativeSession(ctx context.Context, id int64) (string, error) {
	return nativeSessionTx(ctx, s.db, id)
}

func nativeSessionTx(ctx context.Context, q queryer, id int64) (string, error) {
	var detail string
	err := q.QueryRowContext(ctx, `SELECT detail FROM audit WHERE session_id = ? AND action = ? ORDER BY seq DESC LIMIT 1`, id, ActionNativeSession).Scan(&detail)
	if isNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var d struct {
		Native string `json:"native"`
	}
	json.Unmarshal([]byte(detail), &d)
	return d.Native, nil
}

// Resumes counts the times session id was resumed.
func (s *Store) Resumes(ctx context.Context, id int64) (int, error) {
	return countAudit(ctx, s.db, id, ActionSessionResumed)
}

func countAudit(ctx context.Context, q queryer, id int64, action string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit WHERE session_id = ? AND action = ?`, id, action).Scan(&n)
	return n, err
}

// Reopen is the resume of an interrupted session.
type Reopen struct {
	By      string // who resumes it (a person, or agentinfra)
	Surface string
	Reason  string
	// Auto: supervision.resume auto resumes it; refused (ErrResumeLimit)
	// once it was resumed Max times.
	Auto bool
	Max  int
	// Supervisor is the process that takes the session up until the run's
	// own supervisor records itself (SetSupervisor).
	Supervisor Supervisor
}

// ReopenSession takes up interrupted session id again: a compare-and-set
// from interrupted to created (of processes racing to resume it, one wins;
// the others get ErrBadTransition), with Supervisor as its supervisor, its
// end cleared, and a session_resumed audit line. The run's supervisor then
// makes it active (SetSessionStatus, within max_concurrent_sessions).
func (s *Store) ReopenSession(ctx context.Context, id int64, o Reopen) (Session, error) {
	var out Session
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.Status != SessionInterrupted {
			return &agenterr.Error{Kind: agenterr.Conflict, Err: ErrBadTransition,
				Reason: fmt.Sprintf("session %d is %s: only an interrupted session can be resumed", id, cur.Status)}
		}
		n, err := countAudit(ctx, tx, id, ActionSessionResumed)
		if err != nil {
			return err
		}
		if o.Auto && n >= o.Max {
			return &agenterr.Error{Kind: agenterr.Refused, Err: ErrResumeLimit, Reason: fmt.Sprintf(
				"session %d was resumed %d times already (supervision.max_resumes is %d): resume it by hand (agentinfra session resume %d)", id, n, o.Max, id)}
		}
		now := ms(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET status = 'created', ended_at = NULL, end_reason = '', supervisor_pid = ?, supervisor_start = ?,
			heartbeat_at = ?, updated_at = ? WHERE id = ?`, o.Supervisor.PID, o.Supervisor.Start, now, now, id); err != nil {
			return err
		}
		if err := audit(ctx, tx, now, id, 0, o.By, orSurface(o.Surface), ActionSessionResumed,
			map[string]any{"from": cur.Status, "reason": o.Reason, "auto": o.Auto, "resume": n + 1, "interrupted": cur.EndReason}); err != nil {
			return err
		}
		out, err = sessionTx(ctx, tx, id)
		return err
	})
	return out, err
}

// MarkDelivered records that the answer to request id is being handed to
// the CLI. It is recorded before the CLI is told: a supervisor that dies in
// between leaves a decision marked delivered that the CLI never got, which
// only means a person is asked again (never a call run without one).
func (s *Store) MarkDelivered(ctx context.Context, sessionID, id int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return audit(ctx, tx, ms(s.now()), sessionID, id, ActorAgentinfra, SurfaceSupervisor, ActionAnswerDelivered, nil)
	})
}

// TakeDecision finds the decision already taken for the call a CLI asks
// about (see the file's comment): a request of the session decided by a
// person (approved or rejected) for the same native call ID, or for the
// same action and never delivered. It records that the decision goes to the
// CLI again (decision_reapplied, answer_delivered) and returns it; ok false
// when there is none (a person is to be asked).
func (s *Store) TakeDecision(ctx context.Context, sessionID int64, ask Request) (r Request, ok bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		decided, err := queryAll(ctx, tx, scanRequest, `SELECT `+requestCols+` FROM approvals WHERE session_id = ? AND status IN ('approved','rejected') ORDER BY id`, sessionID)
		if err != nil {
			return err
		}
		key := ask.ActionKey()
		for _, d := range decided {
			same := ask.NativeID != "" && d.NativeID == ask.NativeID
			if !same {
				if d.ActionKey() != key {
					continue
				}
				n, err := delivered(ctx, tx, d.ID)
				if err != nil {
					return err
				}
				if n > 0 {
					continue
				}
			}
			now := ms(s.now())
			if err := audit(ctx, tx, now, sessionID, d.ID, ActorAgentinfra, SurfaceSupervisor, ActionDecisionReapplied,
				map[string]any{"native": ask.NativeID, "status": d.Status, "same_call": same}); err != nil {
				return err
			}
			if err := audit(ctx, tx, now, sessionID, d.ID, ActorAgentinfra, SurfaceSupervisor, ActionAnswerDelivered, nil); err != nil {
				return err
			}
			r, ok = d, true
			return nil
		}
		return nil
	})
	return r, ok, err
}

func delivered(ctx context.Context, q queryer, requestID int64) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit WHERE request_id = ? AND action = ?`, requestID, ActionAnswerDelivered).Scan(&n)
	return n, err
}

// Interruption is an interrupted session as a resume sees it.
type Interruption struct {
	Session Session
	// Native is the CLI's own session ("" when the CLI never said).
	Native string
	// Resumes counts the times it was resumed before.
	Resumes int
	// At is when it was interrupted.
	At time.Time
}

// Interrupted lists the interrupted sessions, newest first, with what a
// resume needs to know of each.
func (s *Store) Interrupted(ctx context.Context) ([]Interruption, error) {
	ss, err := s.Sessions(ctx, SessionFilter{Statuses: []string{SessionInterrupted}})
	if err != nil {
		return nil, err
	}
	out := make([]Interruption, 0, len(ss))
	for _, ses := range ss {
		in := Interruption{Session: ses, At: ses.UpdatedAt}
		if ses.EndedAt != nil {
			in.At = *ses.EndedAt
		}
		if in.Native, err = s.NativeSession(ctx, ses.ID); err != nil {
			return nil, err
		}
		if in.Resumes, err = s.Resumes(ctx, ses.ID); err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}
