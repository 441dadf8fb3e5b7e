package fleet

import (
	"context"
	"sync"
)

// A fleet command that finds what a killed command left (a half-created
// agent, a start that claimed a task but never launched its run, a torn
// history line) finishes or rolls it back before doing its own work, and
// says so through the context: the adapters print the notices on stderr and
// add them to the result's warnings. A record the command cannot read is a
// notice too (List leaves that agent out and names it).

// Notice is one thing a fleet call did about a leftover, or could not read.
type Notice struct {
	// Agent is the agent it is about.
	Agent string
	Text  string
	// Unreadable says the agent's record could not be read: List left the
	// agent out (never less data with exit code 0: the CLI exits 1).
	Unreadable bool
}

// Notices collects the notices of the fleet calls made with its context
// (WithNotices). Safe for concurrent use.
type Notices struct {
	mu   sync.Mutex
	list []Notice
}

type noticesKey struct{}

// WithNotices returns a context whose fleet calls report their notices to
// the returned collector.
func WithNotices(ctx context.Context) (context.Context, *Notices) {
	n := &Notices{}
	return context.WithValue(ctx, noticesKey{}, n), n
}

// Notify reports n to the context's collector, if any.
func Notify(ctx context.Context, n Notice) {
	if c, ok := ctx.Value(noticesKey{}).(*Notices); ok {
		c.mu.Lock()
		c.list = append(c.list, n)
		c.mu.Unlock()
	}
}

// Texts returns the notices' texts, in order.
func (n *Notices) Texts() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.list))
	for _, x := range n.list {
		out = append(out, x.Text)
	}
	return out
}

// Unreadable returns the agents whose record could not be read.
func (n *Notices) Unreadable() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.list {
		if x.Unreadable {
			out = append(out, x.Agent)
		}
	}
	return out
}

// WithWarnings returns the result v (one of this package's results) with
// warnings added to its own; a value of another type is returned as it is.
func WithWarnings(v any, warnings []string) any {
	if len(warnings) == 0 {
		return v
	}
	switch r := v.(type) {
	case AgentResult:
		r.Warnings = append(warnings, r.Warnings...)
		return r
	case ListResult:
		r.Warnings = append(warnings, r.Warnings...)
		return r
	case TaskResult:
		r.Warnings = append(warnings, r.Warnings...)
		return r
	case DeleteAgentResult:
		r.Warnings = append(warnings, r.Warnings...)
		return r
	case HistoryPage:
		r.Warnings = append(warnings, r.Warnings...)
		return r
	case LogsResult:
		r.Warnings = append(warnings, r.Warnings...)
		return r
	}
	return v
}
