// Package store is agentinfra's one embedded database: the supervised runs
// (sessions), the approval requests their agent CLIs raise, the decisions
// people (or the policy, or a timeout) take on them, and an append-only audit
// log of events. It is SQLite through modernc.org/sqlite (pure Go, no cgo),
// in WAL mode with a busy timeout, created on demand at
// .agent/state/agentinfra.db inside the workspace (the folder carries a
// .gitignore of "*", so the state is never committed, in workspaces that
// `agentinfra init` did not make too).
//
// Every process talks to the file directly: no daemon. What must be atomic
// is a statement or an IMMEDIATE transaction in the database, never a check
// in Go followed by a write:
//
//   - a decision is a compare-and-set (pending → approved|rejected, only
//     while the request has not expired): of any number of simultaneous
//     answers from any surfaces and processes exactly one wins, the others
//     get a *DecidedError naming the winner's surface, person and time; an
//     answer after the deadline gets ErrExpired and marks the request
//     expired, never approved. Prompts and stall alerts are answered the
//     same way, by the same code (pending.go);
//   - one pending request per session (a partial unique index);
//   - at most Options.MaxSessions sessions active or paused at once
//     (*LimitError names the limit and the sessions holding it);
//   - the audit log refuses UPDATE and DELETE (triggers).
//
// Changes made by other processes are seen through Changes, which polls
// PRAGMA data_version on a connection of its own (cheap: it reads the WAL
// index); WaitDecision uses it to block a bridge until a request is decided.
//
// Who may decide is not the store's to say: package supervision's Service,
// the surfaces' one way in, authorises each change before it reaches the
// store; the store records who made it.
//
// The schema is versioned with PRAGMA user_version and migrated forward, in
// one transaction, from an empty file or from any earlier version (see
// migrate.go); a file from a newer agentinfra is refused, not touched.
package store
