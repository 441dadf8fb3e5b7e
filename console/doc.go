// Package console is `agentinfra console`: one web page where a person sees
// and steers every agent of a workspace — the approval inbox, the
// supervised sessions with their live logs, the fleet, and the task board —
// from a laptop or a phone.
//
// It is an adapter like the CLI and the MCP server: every change goes
// through the services the CLI uses (supervision.Service, fleet.Backend,
// task.UpdateTask), so the page has no rule of its own.
// Pages are server-rendered from Go templates with a little JavaScript,
// all embedded in the binary (no build step, no external request); live
// regions re-read their HTML when a server-sent event from the process's
// event bus says what changed (the store's changes from any process reach
// the bus through supervision.Service.PublishChanges, the matrix file's through
// task.WatchMatrix, the fleet's through fleet.Watch).
//
// Security: it listens on loopback unless told otherwise; the URL it prints
// carries a one-time token that becomes an HttpOnly, SameSite=Strict
// session cookie; every request goes through httpguard (Host: DNS
// rebinding, Origin, time limits), and a change (POST) must come from the
// page's own origin exactly — a page on another loopback port is another
// origin, though the same site for cookies.
package console
