package bridge

import (
	"context"
	"slices"

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
// rule. An edit of several files (a codex patch) is covered only when each
// of its files is: an approval names one path, never the patch's others.
func (g *Gate) forSession(ctx context.Context, pol *policy.Policy, a Ask) (store.Request, policy.Rule, bool) {
	pa := action(a)
	if as := pol.Assess(pa); as.Never != "" || as.Risk == policy.RiskCritical {
		return store.Request{}, policy.Rule{}, false
	}
	var rules []policy.Rule
	for _, one := range eachFile(pa) {
		rule, err := policy.RuleFor(pol.Root, one)
		if err != nil {
			return store.Request{}, policy.Rule{}, false
		}
		rules = append(rules, rule)
	}
	approved, err := g.opts.Store.SessionApprovals(ctx, g.opts.Session.ID)
	if err != nil {
		// Fail closed: a person is asked.
		return store.Request{}, policy.Rule{}, false
	}
	var from store.Request
	for _, rule := range rules {
		i := slices.IndexFunc(approved, func(r store.Request) bool {
			got, err := SessionRule(pol.Root, r)
			return err == nil && got == rule
		})
		if i < 0 {
			return store.Request{}, policy.Rule{}, false
		}
		from = approved[i]
	}
	return from, rules[0], true
}

// eachFile is a, one action per file when it is about several.
func eachFile(a policy.Action) []policy.Action {
	if len(a.Files) == 0 {
		return []policy.Action{a}
	}
	var out []policy.Action
	for _, f := range append([]string{a.File}, a.Files...) {
		one := a
		one.File, one.Files = f, nil
		out = append(out, one)
	}
	return out
}

// approvedForSession records an ask approved by the session's earlier
// approval for the session (from): who approved it, through which surface,
// and which request it was — policy_allowed, as any call the gate lets go
// without a person, followed by what the CLI did with it.
func (g *Gate) approvedForSession(a Ask, from store.Request, rule policy.Rule) Answer {
	g.record(store.ActorPolicy, store.SurfacePolicy, AuditPolicyAllowed, from.ID, a, map[string]any{
		"rule": rule.Key + ": " + rule.Value, "scope": store.ScopeSession, "mechanism": MechanismAgentinfra,
		"approved_by_request": from.ID, "by": from.DecidedBy, "via": from.Surface})
	g.beforeEdit(a, store.Request{SessionID: g.opts.Session.ID, Kind: a.Kind, Tool: a.Tool, File: a.File, Title: a.Title, Status: store.StatusApproved})
	return Answer{Allow: true, ByPolicy: true}
}

// MechanismAgentinfra names agentinfra's own scope of an approval for the
// session (the gate answers the CLI's later asks from the store); a CLI's
// own mechanism is named by the bridge that uses it ("codex
// acceptForSession").
const MechanismAgentinfra = "agentinfra"

// ForSession reports whether ans is a person's approval for the rest of
// the session (approve --session): a bridge whose CLI has a session
// approval of exactly the same scope passes it on (SessionToCLI).
func (ans Answer) ForSession() bool {
	return ans.Allow && ans.Request.ID != 0 && ans.Request.Scope == store.ScopeSession
}

// SessionToCLI records that the CLI was given request r's approval for the
// session by its own mechanism (codex's acceptForSession): the CLI may then
// run the same call again without asking. agentinfra's own scope stays in
// force: an ask that still reaches the gate is answered from it.
func (g *Gate) SessionToCLI(a Ask, r store.Request, mechanism string) {
	detail := map[string]any{"scope": store.ScopeSession, "mechanism": mechanism, "by": r.DecidedBy, "via": r.Surface}
	if rule, err := SessionRule(g.Root(), r); err == nil {
		detail["rule"] = rule.Key + ": " + rule.Value
	}
	g.record(store.ActorAgentinfra, store.SurfaceSupervisor, AuditSessionToCLI, r.ID, a, detail)
}
