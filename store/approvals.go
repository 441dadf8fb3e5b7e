package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Request statuses: pending → approved | rejected | expired | interrupted | withdrawn.
const (
	StatusPending     = "pending"
	StatusApproved    = "approved"
	StatusRejected    = "rejected"
	StatusExpired     = "expired"
	StatusInterrupted = "interrupted"
	StatusWithdrawn   = "withdrawn"
)

// Surfaces: where a decision was taken.
const (
	SurfaceTerminal   = "terminal"
	SurfaceWeb        = "web"
	SurfaceSlack      = "slack"
	SurfacePolicy     = "policy"
	SurfaceTimeout    = "timeout"
	SurfaceAgent      = "agent"      // the agent CLI itself (a withdrawn request)
	SurfaceSupervisor = "supervisor" // agentinfra's own bookkeeping
)

// People's surfaces (those that Decide accepts).
var PeopleSurfaces = []string{SurfaceTerminal, SurfaceWeb, SurfaceSlack}

// Request kinds.
const (
	KindCommand     = "command"
	KindEdit        = "edit"
	KindFetch       = "fetch"
	KindTool        = "tool"
	KindPermissions = "permissions"
)

// Risk levels.
const (
	RiskLow      = "low"
	RiskHigh     = "high"
	RiskCritical = "critical"
)

// System actors (never a person's name).
const (
	ActorAgentinfra = "agentinfra"
	ActorPolicy     = "policy"
)

// Request is one approval request.
type Request struct {
	ID        int64      `json:"id"`
	SessionID int64      `json:"session_id"`
	NativeID  string     `json:"native_id,omitempty"`
	Kind      string     `json:"kind"`
	Tool      string     `json:"tool"`
	ToolInput string     `json:"tool_input,omitempty"`
	Command   string     `json:"command,omitempty"`
	File      string     `json:"file,omitempty"`
	Diff      string     `json:"diff,omitempty"`
	URL       string     `json:"url,omitempty"`
	Title     string     `json:"title"`
	Risk      string     `json:"risk"`
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	DecidedBy string     `json:"decided_by,omitempty"`
	Surface   string     `json:"surface,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Always    bool       `json:"always,omitempty"`
	// Scope is what an approval covers: "" the request, ScopeSession the
	// same action for the rest of its session, ScopeAlways a policy rule.
	Scope string `json:"scope,omitempty"`
	// Host is the machine the request is on when it is not this one: the
	// name of the agentinfra host (a Coder workspace) whose store holds it,
	// set by the supervision service that merged it (docs/coder.md); the
	// store never sets it.
	Host string `json:"host,omitempty"`
	// DiffBytes, DiffSHA256 and DiffFile describe the whole diff of a
	// request whose Diff was cut to MaxDiffBytes (DiffBytes 0: Diff is
	// whole): its size, its SHA-256, and its file, relative to the
	// database's folder (WholeDiff opens it).
	DiffBytes  int64  `json:"diff_bytes,omitempty"`
	DiffSHA256 string `json:"diff_sha256,omitempty"`
	DiffFile   string `json:"diff_file,omitempty"`
}

// The scopes of an approval (Request.Scope).
const (
	ScopeSession = "session"
	ScopeAlways  = "always"
)

// DiffCut reports whether Diff is the head of a longer diff (WholeDiff).
func (r Request) DiffCut() bool { return r.DiffBytes > 0 }

// NewRequest is what RaiseRequest needs. Timeout 0 means never expire.
type NewRequest struct {
	SessionID int64
	NativeID  string
	Kind      string
	Tool      string
	ToolInput string
	Command   string
	File      string
	Diff      string
	URL       string
	Title     string
	Risk      string
	Timeout   time.Duration
	// FileHash is the SHA-256 of File when asked (an agent-side edit:
	// accept_diff applies the diff only to that content).
	FileHash string
}

const requestCols = `id, session_id, native_id, kind, tool, tool_input, command, file, diff, url, title, risk, status, created_at, expires_at, decided_at, decided_by, surface, reason, always, scope, diff_bytes, diff_sha256, diff_file`

func scanRequest(sc scanner) (Request, error) {
	var r Request
	var created int64
	var expires, decided sql.NullInt64
	err := sc.Scan(&r.ID, &r.SessionID, &r.NativeID, &r.Kind, &r.Tool, &r.ToolInput, &r.Command, &r.File, &r.Diff, &r.URL,
		&r.Title, &r.Risk, &r.Status, &created, &expires, &decided, &r.DecidedBy, &r.Surface, &r.Reason, &r.Always, &r.Scope, &r.DiffBytes, &r.DiffSHA256, &r.DiffFile)
	r.CreatedAt, r.ExpiresAt, r.DecidedAt = fromMS(created), fromNullMS(expires), fromNullMS(decided)
	return r, err
}

// RaiseRequest records a pending request of a live session. A session that
// already has one gets ErrPendingExists (the store, not the caller,
// enforces one at a time).
func (s *Store) RaiseRequest(ctx context.Context, n NewRequest) (Request, error) {
	if n.Risk == "" {
		n.Risk = RiskHigh
	}
	if n.Title == "" {
		n.Title = n.Tool
	}
	// A long diff is kept whole in a file before the transaction (its
	// write does not hold the database's lock), the head in the row.
	whole, err := s.keepWholeDiff(n.SessionID, n.Diff)
	if err != nil {
		return Request{}, err
	}
	n.Diff, n.ToolInput = cutDiff(n.Diff, MaxDiffBytes), cutText(n.ToolInput, MaxToolInputBytes)
	var out Request
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		var expires any
		if n.Timeout > 0 {
			expires = ms(now.Add(n.Timeout))
		}
		id, err := requestItems.raiseTx(ctx, tx, n.SessionID, ActorAgentinfra, ms(now), map[string]any{"tool": n.Tool, "kind": n.Kind, "title": n.Title, "risk": n.Risk},
			`INSERT INTO approvals (session_id, native_id, kind, tool, tool_input, command, file, diff, url, title, risk, status, created_at, expires_at, file_hash, diff_bytes, diff_sha256, diff_file)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)`,
			n.SessionID, n.NativeID, n.Kind, n.Tool, n.ToolInput, n.Command, n.File, n.Diff, n.URL, n.Title, n.Risk, ms(now), expires, n.FileHash,
			whole.bytes, whole.sha256, whole.file)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_tool = ?, updated_at = ? WHERE id = ?`, n.Tool, ms(now), n.SessionID); err != nil {
			return err
		}
		out, err = requestTx(ctx, tx, id)
		return err
	})
	return out, err
}

func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

func requestTx(ctx context.Context, q queryer, id int64) (Request, error) {
	r, err := scanRequest(q.QueryRowContext(ctx, `SELECT `+requestCols+` FROM approvals WHERE id = ?`, id))
	if isNoRows(err) {
		return Request{}, notFound("request", id)
	}
	return r, err
}

// Decision is a person's answer to a request.
type Decision struct {
	RequestID int64
	Approve   bool
	By        string // the person
	Surface   string // terminal, web or slack
	Reason    string
	// Scope (only with Approve): ScopeAlways, the caller adds a policy
	// rule for such requests; ScopeSession, such requests of the session
	// are approved without asking (SessionApprovals) until it ends.
	Scope string
}

// Decide is the compare-and-set of a decision (answerTx): the request goes
// from pending to approved or rejected only if it is still pending and its
// deadline has not passed. The loser of a race gets a *DecidedError naming
// the winner; an answer after the deadline marks the request expired (if
// the bridge has not yet) and gets ErrExpired. Who may decide is the
// caller's rule (package supervision's service): the store records who did.
func (s *Store) Decide(ctx context.Context, d Decision) (Request, error) {
	if err := checkPerson(d.By, d.Surface); err != nil {
		return Request{}, err
	}
	status, scope := StatusRejected, ""
	if d.Approve {
		status, scope = StatusApproved, d.Scope
	}
	if scope != "" && scope != ScopeSession && scope != ScopeAlways {
		return Request{}, agenterr.Invalidf("scope", "%q: an approval covers the request, the session (%s) or always (%s)", scope, ScopeSession, ScopeAlways)
	}
	detail := map[string]any{"reason": d.Reason, "always": scope == ScopeAlways}
	if scope != "" {
		detail["scope"] = scope
	}
	return s.answerRequest(ctx, d.RequestID, func(_ Request, now time.Time) answer {
		return answer{id: d.RequestID, by: d.By, surface: d.Surface, person: true,
			set:    `status = ?, decided_at = ?, decided_by = ?, surface = ?, reason = ?, always = ?, scope = ?`,
			args:   []any{status, ms(now), d.By, d.Surface, d.Reason, scope == ScopeAlways, scope},
			action: "request_" + status, detail: detail}
	})
}

// SessionApprovals are the requests of session sessionID approved for the
// rest of the session (Scope ScopeSession), oldest first: the bridge
// approves an ask like one of them without asking a person. A session that
// ended has none (what it approved does not outlive it).
func (s *Store) SessionApprovals(ctx context.Context, sessionID int64) ([]Request, error) {
	return queryAll(ctx, s.db, scanRequest, `SELECT `+requestCols+` FROM approvals
		WHERE session_id = ? AND scope = 'session' AND status = 'approved'
		AND EXISTS (SELECT 1 FROM sessions WHERE id = ? AND status NOT IN ('terminated','interrupted')) ORDER BY id`, sessionID, sessionID)
}

// answerRequest runs an answer of request id (answerItem); its deadline
// expires it, never approved.
func (s *Store) answerRequest(ctx context.Context, id int64, a func(cur Request, now time.Time) answer) (Request, error) {
	return answerItem(ctx, s, requestItems, id, requestTx, a, expiry, func(r Request) *DecidedError { return &DecidedError{Request: r} })
}

// expiry is agentinfra's timeout of request r (the CLIs have none).
func expiry(r Request, now time.Time) answer {
	reason := "timed out"
	if r.ExpiresAt != nil {
		reason = "timed out after " + roundTimeout(r.ExpiresAt.Sub(r.CreatedAt)).String()
	}
	return answer{id: r.ID, by: ActorAgentinfra, surface: SurfaceTimeout,
		set:  `status = 'expired', decided_at = ?, decided_by = ?, surface = 'timeout', reason = ?`,
		args: []any{ms(now), ActorAgentinfra, reason}, action: "request_expired", detail: map[string]any{"reason": reason}}
}

// roundTimeout is a timeout as a person reads it: whole seconds, or
// milliseconds under a second (200ms, not 0s).
func roundTimeout(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// Expire marks a pending request expired (agentinfra's timeout: the CLIs
// have none). won is false when the request had been decided first; the
// returned request is then the decided one, which the bridge follows.
func (s *Store) Expire(ctx context.Context, id int64) (r Request, won bool, err error) {
	r, err = s.answerRequest(ctx, id, expiry)
	return settled(r, err)
}

// settled turns a lost answer of the store's own (a timer, the agent, the
// watchdog) into won false: the item as it is, no error.
func settled[T any](item T, err error) (T, bool, error) {
	if _, lost := err.(*DecidedError); lost {
		return item, false, nil
	}
	return item, err == nil, err
}

// CloseRequest ends a pending request without a person: withdrawn (the
// CLI took it back) or interrupted (the run stopped). won is false when it
// had been decided first.
func (s *Store) CloseRequest(ctx context.Context, id int64, status, surface, reason string) (r Request, won bool, err error) {
	if status != StatusWithdrawn && status != StatusInterrupted {
		return Request{}, false, fmt.Errorf("CloseRequest: status %q is not withdrawn or interrupted", status)
	}
	r, err = s.answerRequest(ctx, id, func(_ Request, now time.Time) answer {
		return answer{id: id, by: ActorAgentinfra, surface: surface,
			set:  `status = ?, decided_at = ?, decided_by = ?, surface = ?, reason = ?`,
			args: []any{status, ms(now), ActorAgentinfra, surface, reason}, action: "request_" + status, detail: map[string]any{"reason": reason}}
	})
	return settled(r, err)
}

// SessionApproval finds the request of session sessionID that a person
// approved for the rest of the session and that asked for the same action
// as n (its kind, tool, command, file and URL); ok is false when there is
// none.
func (s *Store) SessionApproval(ctx context.Context, sessionID int64, n NewRequest) (r Request, ok bool, err error) {
	r, err = scanRequest(s.db.QueryRowContext(ctx, `SELECT `+requestCols+` FROM approvals
		WHERE session_id = ? AND scope = 'session' AND status = 'approved'
		AND kind = ? AND tool = ? AND command = ? AND file = ? AND url = ? ORDER BY id LIMIT 1`,
		sessionID, n.Kind, n.Tool, n.Command, n.File, n.URL))
	if isNoRows(err) {
		return Request{}, false, nil
	}
	return r, err == nil, err
}

// PendingView is a pending request with its session, for inboxes.
type PendingView struct {
	Request
	Owner     string `json:"owner"`
	Workspace string `json:"workspace"`
	CLI       string `json:"cli"`
	Agent     string `json:"agent,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	Mode      string `json:"mode"`
}

// Pending lists the pending requests of every session, oldest first.
func (s *Store) Pending(ctx context.Context) ([]PendingView, error) {
	return queryAll(ctx, s.db, func(sc scanner) (v PendingView, err error) {
		v.Request, err = scanRequest(withMore{sc, []any{&v.Owner, &v.Workspace, &v.CLI, &v.Agent, &v.TaskID, &v.Mode}})
		return v, err
	}, `SELECT `+prefixed("a.", requestCols)+`, s.owner, s.workspace, s.cli, s.agent, s.task_id, s.mode
		FROM approvals a JOIN sessions s ON s.id = a.session_id WHERE a.status = 'pending' ORDER BY a.id`)
}

// Requests lists a session's requests, oldest first.
func (s *Store) Requests(ctx context.Context, sessionID int64) ([]Request, error) {
	return queryAll(ctx, s.db, scanRequest, `SELECT `+requestCols+` FROM approvals WHERE session_id = ? ORDER BY id`, sessionID)
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}
