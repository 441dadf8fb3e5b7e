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
func (g *Gate) forSession(ctx context.Context, pol *policy.Policy, a Ask) ([]covered, bool) {
	pa := action(a)
	if as := pol.Assess(pa); as.Never != "" || as.Risk == policy.RiskCritical {
		return nil, false
	}
	var rules []policy.Rule
	for _, one := range eachFile(pa) {
		rule, err := policy.RuleFor(pol.Root, one)
		if err != nil {
			return nil, false
		}
		rules = append(rules, rule)
	}
	approved, err := g.opts.Store.SessionApprovals(ctx, g.opts.Session.ID)
	if err != nil {
		// Fail closed: a person is asked.
		return nil, false
	}
	var by []covered
	for _, rule := range rules {
		i := slices.IndexFunc(approved, func(r store.Request) bool {
			got, err := SessionRule(pol.Root, r)
			return err == nil && got == rule
		})
		if i < 0 {
			return nil, false
		}
		by = append(by, covered{approved[i], rule})
	}
	return by, true
}

// covered is one file (or the one action) of an ask and the session's
// approval that covers it, by its rule.
type covered struct {
	from store.Request
	rule policy.Rule
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
// approvals for the session (by, one per file of the ask): who approved
// it, through which surface, and which request it was — policy_allowed,
// as any call the gate lets go without a person, followed by what the CLI
// did with it. A patch of several files names each file's rule and
// approval ("approvals"): the first alone would hide who let the others
// through.
func (g *Gate) approvedForSession(a Ask, by []covered) Answer {
	from, rule := by[0].from, by[0].rule
	detail := map[string]any{
		"rule": rule.Key + ": " + rule.Value, "scope": store.ScopeSession, "mechanism": MechanismAgentinfra,
		"approved_by_request": from.ID, "by": from.DecidedBy, "via": from.Surface}
	if len(by) > 1 {
		var each []map[string]any
		for _, c := range by {
			each = append(each, map[string]any{"rule": c.rule.Key + ": " + c.rule.Value,
				"approved_by_request": c.from.ID, "by": c.from.DecidedBy, "via": c.from.Surface})
		}
		detail["approvals"] = each
	}
	g.record(store.ActorPolicy, store.SurfacePolicy, AuditPolicyAllowed, from.ID, a, detail)
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
