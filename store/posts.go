package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// What a remote surface (Slack) keeps in the store: the message it posted
// for each item, so that a decision taken elsewhere (a terminal, the web
// page) updates it, also after the surface's process restarted; and how far
// in the audit log it has read, so that a restart neither posts twice nor
// misses what happened while it was down.

// Items a surface posts about.
const (
	ItemSession = "session" // the thread's first message
	ItemRequest = "request"
	ItemPrompt  = "prompt"
	ItemAlert   = "alert"
)

// Post is one message a surface posted about an item.
type Post struct {
	Surface   string
	ItemKind  string
	ItemID    int64
	SessionID int64
	Channel   string
	TS        string // the message's ID in the channel (Slack's ts)
	// State is the surface's own note ("final" once the outcome is shown).
	State     string
	UpdatedAt time.Time
}

// PutPost records (or replaces) the message posted about an item.
func (s *Store) PutPost(ctx context.Context, p Post) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO surface_posts (surface, item_kind, item_id, session_id, channel, ts, state, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (surface, item_kind, item_id) DO UPDATE SET channel = excluded.channel, ts = excluded.ts, state = excluded.state, updated_at = excluded.updated_at`,
		p.Surface, p.ItemKind, p.ItemID, p.SessionID, p.Channel, p.TS, p.State, ms(s.now()))
	if err != nil {
		return fmt.Errorf("record the %s message of %s %d: %w", p.Surface, p.ItemKind, p.ItemID, err)
	}
	return nil
}

// SetPostState changes the state of a recorded post; it reports whether
// the post was in state from (the compare-and-set that lets one of two
// updaters of a message write its final text).
func (s *Store) SetPostState(ctx context.Context, surface, kind string, id int64, from, to string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE surface_posts SET state = ?, updated_at = ? WHERE surface = ? AND item_kind = ? AND item_id = ? AND state = ?`,
		to, ms(s.now()), surface, kind, id, from)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// PostOf reads the message posted about an item (ErrNotFound when none).
func (s *Store) PostOf(ctx context.Context, surface, kind string, id int64) (Post, error) {
	var p Post
	var updated int64
	err := s.db.QueryRowContext(ctx, `SELECT surface, item_kind, item_id, session_id, channel, ts, state, updated_at FROM surface_posts
		WHERE surface = ? AND item_kind = ? AND item_id = ?`, surface, kind, id).
		Scan(&p.Surface, &p.ItemKind, &p.ItemID, &p.SessionID, &p.Channel, &p.TS, &p.State, &updated)
	if isNoRows(err) {
		return Post{}, fmt.Errorf("%s message of %s %d: %w", surface, kind, id, ErrNotFound)
	}
	p.UpdatedAt = fromMS(updated)
	return p, err
}

// SessionOfThread finds the session whose thread (its first message) is
// channel/ts on a surface (ErrNotFound when none).
func (s *Store) SessionOfThread(ctx context.Context, surface, channel, ts string) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT item_id FROM surface_posts WHERE surface = ? AND item_kind = 'session' AND channel = ? AND ts = ?`,
		surface, channel, ts).Scan(&id)
	if isNoRows(err) {
		return 0, fmt.Errorf("no session's thread is %s %s: %w", channel, ts, ErrNotFound)
	}
	return id, err
}

// Cursor is the last audit event a surface has handled (0 when none).
func (s *Store) Cursor(ctx context.Context, surface string) (int64, bool, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT audit_seq FROM surface_cursors WHERE surface = ?`, surface).Scan(&seq)
	if isNoRows(err) {
		return 0, false, nil
	}
	return seq, err == nil, err
}

// SetCursor records the last audit event a surface has handled.
func (s *Store) SetCursor(ctx context.Context, surface string, seq int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO surface_cursors (surface, audit_seq) VALUES (?, ?)
		ON CONFLICT (surface) DO UPDATE SET audit_seq = excluded.audit_seq`, surface, seq)
	return err
}

// AuditAfter lists up to limit events of every session after seq, oldest
// first: the audit log read as the cross-process feed of what happens to
// sessions (the in-process events bus does not reach other processes).
func (s *Store) AuditAfter(ctx context.Context, seq int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 500
	}
	return queryAll(ctx, s.db, scanEvent, `SELECT `+eventCols+` FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`, seq, limit)
}

// LastAuditSeq is the newest audit event's number (0 for an empty log).
func (s *Store) LastAuditSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM audit`).Scan(&seq)
	return seq, err
}

// SetSessionChannel sets where the remote surface posts a session ("" =
// the config's channel).
func (s *Store) SetSessionChannel(ctx context.Context, id int64, channel string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sessions SET channel = ?, updated_at = ? WHERE id = ?`, strings.TrimSpace(channel), ms(s.now()), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("session %d: %w", id, ErrNotFound)
	}
	return nil
}
