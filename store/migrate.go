package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrTooNew is a database whose schema is newer than this agentinfra knows.
var ErrTooNew = errors.New("the database was written by a newer agentinfra")

// migrations[i] takes the schema from version i to i+1. Append only: a
// released step is never edited (files of every earlier version must keep
// migrating the same way); TestMigrateFromV1Fixture opens a file of each
// older version.
var migrations = []string{
	// v1: sessions, approval requests, the audit log.
	`
CREATE TABLE sessions (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	owner       TEXT NOT NULL,
	workspace   TEXT NOT NULL,
	status      TEXT NOT NULL CHECK (status IN ('created','active','paused','terminated','interrupted')),
	mode        TEXT NOT NULL CHECK (mode IN ('local','remote','hybrid')),
	cli         TEXT NOT NULL DEFAULT '',
	run_id      TEXT NOT NULL DEFAULT '',
	agent       TEXT NOT NULL DEFAULT '',
	task_id     TEXT NOT NULL DEFAULT '',
	title       TEXT NOT NULL DEFAULT '',
	last_tool   TEXT NOT NULL DEFAULT '',
	progress    TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	ended_at    INTEGER,
	end_reason  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_status ON sessions(status);

CREATE TABLE approvals (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	native_id   TEXT NOT NULL DEFAULT '',
	kind        TEXT NOT NULL CHECK (kind IN ('command','edit','fetch','tool','permissions')),
	tool        TEXT NOT NULL,
	tool_input  TEXT NOT NULL DEFAULT '',
	command     TEXT NOT NULL DEFAULT '',
	file        TEXT NOT NULL DEFAULT '',
	diff        TEXT NOT NULL DEFAULT '',
	url         TEXT NOT NULL DEFAULT '',
	title       TEXT NOT NULL,
	risk        TEXT NOT NULL CHECK (risk IN ('low','high','critical')),
	status      TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','expired','interrupted','withdrawn')),
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER,
	decided_at  INTEGER,
	decided_by  TEXT NOT NULL DEFAULT '',
	surface     TEXT NOT NULL DEFAULT '' CHECK (surface IN ('','terminal','web','slack','policy','timeout','agent','supervisor')),
	reason      TEXT NOT NULL DEFAULT '',
	always      INTEGER NOT NULL DEFAULT 0
);
-- What the CLIs do, the store enforces: one pending request per session.
CREATE UNIQUE INDEX approvals_one_pending ON approvals(session_id) WHERE status = 'pending';
CREATE INDEX approvals_status ON approvals(status);

CREATE TABLE audit (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	at          INTEGER NOT NULL,
	session_id  INTEGER,
	request_id  INTEGER,
	actor       TEXT NOT NULL,
	surface     TEXT NOT NULL,
	action      TEXT NOT NULL,
	detail      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_session ON audit(session_id, seq);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
	BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
	BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
	// v2: the supervisor's heartbeat (a crashed supervisor is told from a
	// live one), and the tables of "keeping supervised agents moving":
	// steering messages, stall alerts, continuation prompts, checkpoints.
	// Alerts and prompts are decided with the same compare-and-set as
	// approvals (status pending → …, decided_by, surface, decided_at).
	`
ALTER TABLE sessions ADD COLUMN supervisor_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN heartbeat_at INTEGER;

CREATE TABLE steering (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	text         TEXT NOT NULL,
	sent_by      TEXT NOT NULL,
	surface      TEXT NOT NULL,
	status       TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued','delivered','dropped')),
	created_at   INTEGER NOT NULL,
	delivered_at INTEGER
);
CREATE INDEX steering_queued ON steering(session_id) WHERE status = 'queued';

CREATE TABLE alerts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	status      TEXT NOT NULL CHECK (status IN ('pending','nudged','self_recovered','escalated','dismissed')),
	nudges      INTEGER NOT NULL DEFAULT 0,
	raised_at   INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	decided_by  TEXT NOT NULL DEFAULT '',
	surface     TEXT NOT NULL DEFAULT '',
	reason      TEXT NOT NULL DEFAULT ''
);
-- One active alert per session.
CREATE UNIQUE INDEX alerts_one_active ON alerts(session_id) WHERE status IN ('pending','nudged');

CREATE TABLE prompts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	kind        TEXT NOT NULL CHECK (kind IN ('continuation','clarification','error_recovery','resource_warning')),
	text        TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL CHECK (status IN ('pending','continued','refined','stopped','expired','withdrawn')),
	instruction TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER,
	decided_at  INTEGER,
	decided_by  TEXT NOT NULL DEFAULT '',
	surface     TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX prompts_one_pending ON prompts(session_id) WHERE status = 'pending';

CREATE TABLE checkpoints (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	label       TEXT NOT NULL DEFAULT '',
	git_ref     TEXT NOT NULL,
	files       TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL
);
`,
	// v3: the run records of dispatch and the fleet (one row per run,
	// keyed by the run ID that sessions.run_id holds; the record itself is
	// the caller's JSON), the imports of the JSON records written before
	// (each source once), and the supervisor's start time (a reused pid is
	// not taken for a live supervisor).
	`
ALTER TABLE sessions ADD COLUMN supervisor_start TEXT NOT NULL DEFAULT '';

CREATE TABLE runs (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id       TEXT NOT NULL,
	caller       TEXT NOT NULL CHECK (caller IN ('dispatch','fleet')),
	agent        TEXT NOT NULL DEFAULT '',
	task_id      TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL DEFAULT '',
	outcome      TEXT NOT NULL DEFAULT '',
	created_at   INTEGER,
	started_at   INTEGER,
	ended_at     INTEGER,
	finished_seq INTEGER,
	archived     TEXT NOT NULL DEFAULT '',
	record       TEXT NOT NULL,
	summary      TEXT NOT NULL DEFAULT '',
	updated_at   INTEGER NOT NULL
);
-- A run ID names one current run; a deleted agent's runs are archived
-- under its archive's name, and its name (and run IDs) may be used again.
CREATE UNIQUE INDEX runs_current ON runs(run_id) WHERE archived = '';
CREATE INDEX runs_agent ON runs(caller, agent, archived, finished_seq);
CREATE INDEX runs_task ON runs(task_id);

CREATE TABLE imports (
	source      TEXT PRIMARY KEY,
	at          INTEGER NOT NULL,
	rows        INTEGER NOT NULL
);
`,
	// v4: keeping supervised agents moving (issue 22). Alters only what
	// v1-v3 created.
	//   - sessions.watchdog_paused: a person paused the stall watchdog;
	//   - approvals.file_hash / consumed_at: an agent-side ask_approval of an
	//     edit keeps the file's SHA-256 when asked, and accept_diff applies
	//     the approved diff once;
	//   - prompts.reason: why a prompt timed out or was withdrawn;
	//   - checkpoints.dir / commit_sha / created_by: the tree recorded, the
	//     git commit under the private ref, who took it;
	//   - an index on session_id for every table that belongs to a session
	//     (a purge deletes sessions: ON DELETE CASCADE scans without one),
	//     and on sessions.ended_at (retention picks by it);
	//   - the audit log stays append-only, except for the rows of a session
	//     that no longer exists (retention purges them with their session).
	`
ALTER TABLE sessions ADD COLUMN watchdog_paused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN file_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN consumed_at INTEGER;
ALTER TABLE prompts ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN dir TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN commit_sha TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN created_by TEXT NOT NULL DEFAULT '';

CREATE INDEX approvals_session ON approvals(session_id);
CREATE INDEX alerts_session ON alerts(session_id);
CREATE INDEX prompts_session ON prompts(session_id);
CREATE INDEX steering_session ON steering(session_id);
CREATE INDEX checkpoints_session ON checkpoints(session_id);
CREATE INDEX sessions_ended ON sessions(ended_at) WHERE ended_at IS NOT NULL;

DROP TRIGGER audit_no_delete;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
	WHEN OLD.session_id IS NULL OR EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
	BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
	// v5: the remote surfaces (Slack): a session's channel when it is not
	// the config's, the messages a surface posted for each session, request,
	// prompt and alert (to update them when the item is decided elsewhere,
	// also after a restart), and how far in the audit log each surface has
	// read.
	`
ALTER TABLE sessions ADD COLUMN channel TEXT NOT NULL DEFAULT '';

CREATE TABLE surface_posts (
	surface     TEXT NOT NULL,
	item_kind   TEXT NOT NULL CHECK (item_kind IN ('session','request','prompt','alert')),
	item_id     INTEGER NOT NULL,
	session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	channel     TEXT NOT NULL,
	ts          TEXT NOT NULL,
	state       TEXT NOT NULL DEFAULT '',
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (surface, item_kind, item_id)
);
CREATE INDEX surface_posts_session ON surface_posts(session_id);

CREATE TABLE surface_cursors (
	surface     TEXT PRIMARY KEY,
	audit_seq   INTEGER NOT NULL
);
`,
	// v6: a remote surface loses nothing and posts from one process
	// (issue 29):
	//   - surface_outbox: each audit event a surface has to post about,
	//     kept until it is posted (next_at and attempts pace the retries of
	//     what Slack refused; steps are the parts already posted, so that a
	//     retry does not post them twice);
	//   - surface_leases: the one process that posts for a surface, until
	//     expires_at (renewed while it runs);
	//   - the audit log lets retention purge a surface's refusals that name
	//     no session (an unlinked member's clicks), which nothing else would
	//     ever remove.
	`
CREATE TABLE surface_outbox (
	surface     TEXT NOT NULL,
	audit_seq   INTEGER NOT NULL,
	session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT NOT NULL DEFAULT '',
	steps       TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (surface, audit_seq)
);
CREATE INDEX surface_outbox_session ON surface_outbox(surface, session_id, audit_seq);

CREATE TABLE surface_leases (
	surface     TEXT PRIMARY KEY,
	holder      TEXT NOT NULL,
	expires_at  INTEGER NOT NULL
);

DROP TRIGGER audit_no_delete;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
	WHEN (OLD.session_id IS NULL AND OLD.action <> 'slack_refused')
		OR EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
	BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
	// v7: approve for a session (issue 28):
	//   - approvals.scope: what an approval covers — '' this request,
	//     'session' the same action for the rest of its session, 'always'
	//     a policy rule (approvals.always stays, set with it). The bridge
	//     reads a session's 'session' approvals before it asks a person.
	`
ALTER TABLE approvals ADD COLUMN scope TEXT NOT NULL DEFAULT '' CHECK (scope IN ('','session','always'));
UPDATE approvals SET scope = 'always' WHERE always = 1;
CREATE INDEX approvals_session_scope ON approvals(session_id) WHERE scope = 'session';
`,
	// v8: a request's diff is kept in the database up to MaxDiffBytes; a
	// longer one whole in a file of the session's folder beside the
	// database, with its size and SHA-256 here (issue 27: one 65 MB diff
	// made the database 125 MB and every inbox slow).
	`
ALTER TABLE approvals ADD COLUMN diff_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN diff_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN diff_file TEXT NOT NULL DEFAULT '';
`,
	// v9: a person knows why a run stopped (issue 30): sessions.ended_by
	// and end_surface, who ended a session and through which surface (a
	// person's stop is told from the end of the run).
	`
ALTER TABLE sessions ADD COLUMN ended_by TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN end_surface TEXT NOT NULL DEFAULT '';
`,
}

// SchemaVersion is the version this agentinfra writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the schema to SchemaVersion. Several processes opening a
// new file at once are serialized by the IMMEDIATE transaction, and each
// reads the version inside it, so a step runs exactly once.
func (s *Store) migrate(ctx context.Context) error {
	v, err := userVersion(ctx, s.db)
	if err != nil {
		return fmt.Errorf("read the schema version of %s: %w", s.path, err)
	}
	if v == len(migrations) {
		return nil
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: %s has schema version %d, this agentinfra knows up to %d; upgrade agentinfra", ErrTooNew, s.path, v, len(migrations))
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		v, err := userVersion(ctx, tx)
		if err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("%w: %s has schema version %d, this agentinfra knows up to %d; upgrade agentinfra", ErrTooNew, s.path, v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate %s from schema version %d to %d: %w", s.path, i, i+1, err)
			}
		}
		// PRAGMA takes no parameters; the value is our own integer.
		_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations)))
		return err
	})
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func userVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}
