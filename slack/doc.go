// Package slack is agentinfra's Slack surface: `agentinfra slack` connects
// to Slack over Socket Mode (github.com/slack-go/slack; no public URL) and
// keeps one thread per supervised session whose mode is remote or hybrid
// (local sessions post nothing): the session's start, each approval
// request (title, risk, command, file, the diff inline up to
// Config.InlineDiffLines lines, else uploaded as a file), the end of the run
// with its outcome. Buttons decide through the supervision service (the
// store's compare-and-set), like every other surface: the message first
// shows "Processing…", then the outcome ("Approved by @x", or "Already
// decided via terminal by @y").
// Text (a reject reason) is asked for as a threaded reply that mentions
// the app, never a modal (a modal opened from a button inside a thread does
// not render). Only operators, and a session's owner for its own requests,
// may act; anyone else gets an ephemeral "not allowed" and an audit entry.
//
// Where it reads from. The supervisors are other processes: the
// in-process events bus does not reach this one. The store's append-only
// audit log is the cross-process, ordered, persistent feed instead: the
// service tails it (woken by store.Changes) from a cursor it keeps in the
// store into the store's outbox (outbox.go), and posts from there: what
// Slack refuses stays until it is posted, a restart posts what was not,
// and nothing twice. Each audit action is routed to a message kind (see
// kind in kinds.go): sessions, approval requests, continuation prompts and
// stall alerts. One process posts for a workspace (the store's lease,
// lease.go); a second one waits.
//
// Every Web API call goes through the lane of its method (calls.go): a
// 429's Retry-After pauses that method only, and the call is retried.
// Every envelope is acked at once and handled off the socket's loop; a
// redelivery is acked and dropped (seen.go).
//
// What an agent wrote reaches a message only through inert (mrkdwn.go):
// no mention, no link, no code block it closes; what a person wrote in
// Slack reaches the agent decoded (fromslack.go). Refusals are answered,
// audited and limited per member (refusals.go).
package slack
