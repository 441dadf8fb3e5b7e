package bridge

import (
	"context"
	"encoding/json"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// SessionRule is what an approval "for this session" of request r covers:
// the rule "approve always" would write for it (policy.RuleFor: the same
// kind, the same command in its shell words, the same resolved path, the
// same tool), read from the request the way the gate reads an ask. root is
// the folder the request's paths are relative to.
func SessionRule(root string, r store.Request) (policy.Rule, error) {
	return policy.RuleFor(root, PolicyAction(r))
}

// PolicyAction is a stored request as the policy sees it: the action the
// gate judged when it raised the request (a tool's call on a file is a
// read), so that a rule made from it matches the same asks again.
func PolicyAction(r store.Request) policy.Action {
	return action(Ask{Kind: r.Kind, Tool: r.Tool, Command: r.Command, File: r.File, URL: r.URL})
}

// forSession is the session's approval for the session that covers a, if
// one does. Nothing covers an action that is critical or never
// auto-approved (a path outside the worktree, in .git, a control file),
// whoever approved its like: those always ask a person, as with a policy
// rule.
func (g *Gate) forSession(ctx context.Context, pol *policy.Policy, a Ask) (store.Request, policy.Rule, bool) {
	pa := action(a)
	if as := pol.Assess(pa); as.Never != "" || as.Risk == policy.RiskCritical {
		return store.Request{}, policy.Rule{}, false
	}
	rule, err := policy.RuleFor(pol.Root, pa)
	if err != nil {
		return store.Request{}, policy.Rule{}, false
	}
	approved, err := g.opts.Store.SessionApprovals(ctx, g.opts.Session.ID)
	if err != nil {
		// Fail closed: a person is asked.
		return store.Request{}, policy.Rule{}, false
	}
	for _, r := range approved {
		if got, err := SessionRule(pol.Root, r); err == nil && got == rule {
			return r, rule, true
		}
	}
	return store.Request{}, policy.Rule{}, false
}

// approvedForSession records an ask approved by the session's earlier
// approval for the session (from): who approved it, through which surface,
// and which request it was.
func (g *Gate) approvedForSession(a Ask, from store.Request, rule policy.Rule) Answer {
	detail, _ := json.Marshal(map[string]any{"tool": a.Tool, "command": a.Command, "file": a.File,
		"rule": rule.Key + ": " + rule.Value, "scope": store.ScopeSession, "approved_by_request": from.ID, "by": from.DecidedBy, "via": from.Surface})
	g.opts.Store.Record(context.Background(), store.Event{SessionID: g.opts.Session.ID, RequestID: from.ID, Actor: store.ActorPolicy,
		Surface: store.SurfacePolicy, Action: "auto_approved", Detail: detail})
	g.beforeEdit(a, store.Request{SessionID: g.opts.Session.ID, Kind: a.Kind, Tool: a.Tool, File: a.File, Title: a.Title, Status: store.StatusApproved})
	return Answer{Allow: true, ByPolicy: true}
}
