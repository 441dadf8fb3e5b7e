// Package slack is agentinfra's Slack surface: `agentinfra slack` connects
// to Slack over Socket Mode (github.com/slack-go/slack; no public URL) and
// keeps one thread per supervised session whose mode is remote or hybrid
// (local sessions post nothing): the session's start, each approval
// request (title, risk, command, file, the diff inline up to
// Config.InlineDiffLines lines, else uploaded as a file), the end of the run
// with its outcome. Buttons decide through the store's compare-and-set,
// like every other surface: the message first shows "Processing…", then
// the outcome ("Approved by @x", or "Already decided via terminal by @y").
// Text (a reject reason) is asked for as a threaded reply that mentions
// the app, never a modal (a modal opened from a button inside a thread does
// not render). Only operators, and a session's owner for its own requests,
// may act; anyone else gets an ephemeral "not allowed" and an audit entry.
//
// Where it reads from. The supervisors are other processes: the
// in-process events bus does not reach this one. The store's append-only
// audit log is the cross-process, ordered, persistent feed instead: the
// service tails it (woken by store.Changes) from a cursor it keeps in the
// store, so a restart neither posts twice nor misses what happened while
// it was down. Each audit action is routed to a message kind (see kind in
// kinds.go): sessions and approval requests now; continuation prompts and
// stall alerts are one more kind each, over the same feed.
//
// Everything sent to Slack goes through one bounded queue (outbox.go) that
// honours Slack's rate limits: a 429's Retry-After pauses the queue and the
// call is retried.
package slack
