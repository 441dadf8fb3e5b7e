package supervision

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// AlwaysPlan is what "approve always" adds to the workspace policy for one
// request: the rule, the policy file's diff (empty when the rule is there
// already), and a note when the user's allowlist keeps the rule from taking
// effect. Every surface (terminal, web page) shows it before it is written.
type AlwaysPlan struct {
	Rule policy.Rule
	Diff string
	// Note says why the rule alone will not auto-approve (the allowlist
	// does not list the command, or it is above max_risk); "" otherwise.
	Note string

	path string
	src  []byte
}

// Changes reports whether writing the plan changes the policy file.
func (p *AlwaysPlan) Changes() bool { return p != nil && p.src != nil }

// PlanAlways is the rule "approve always" would add for request r of the
// workspace at root, and the policy file's diff; it writes nothing.
func PlanAlways(root string, getenv func(string) string, r store.Request) (*AlwaysPlan, error) {
	paths := policy.DefaultPaths(root, getenv)
	rule, err := policy.RuleFor(root, PolicyAction(r))
	if err != nil {
		return nil, err
	}
	src, diff, err := policy.AddRule(paths.Workspace, rule)
	if err != nil {
		return nil, err
	}
	p := &AlwaysPlan{Rule: rule, Diff: diff, path: paths.Workspace}
	if diff != "" {
		p.src = src
	}
	if rule.Key == "commands" {
		// The policy as it will be with the rule: the allowlist or max_risk
		// may still keep the command asking.
		pol := policy.Load(root, paths)
		pol.File.AutoApprove.Commands = append(slices.Clip(pol.File.AutoApprove.Commands), rule.Value)
		if !pol.Evaluate(policy.Action{Kind: policy.KindCommand, Command: rule.Value}).Auto {
			p.Note = fmt.Sprintf("%s does not list %q yet (or it is above max_risk): add it there for the rule to take effect", paths.Allowlist, rule.Value)
		}
	}
	return p, nil
}

// PolicyAction is a stored request as the policy sees it.
func PolicyAction(r store.Request) policy.Action {
	a := policy.Action{Tool: r.Tool, Command: r.Command, File: r.File, URL: r.URL}
	switch r.Kind {
	case store.KindCommand:
		a.Kind = policy.KindCommand
	case store.KindEdit:
		a.Kind = policy.KindEdit
	case store.KindFetch:
		a.Kind = policy.KindFetch
	default:
		a.Kind = policy.KindTool
	}
	return a
}

// Decide takes a person's decision on a request (the store's
// compare-and-set: the loser of a race gets a *store.DecidedError naming the
// winner). An approval with plan (approve always) writes the plan's rule to
// the policy file once the decision is taken; a plan is only for an
// approval. The terminal and the web page both decide through it.
func Decide(ctx context.Context, st *store.Store, d store.Decision, plan *AlwaysPlan) (store.Request, error) {
	if plan != nil && !d.Approve {
		return store.Request{}, fmt.Errorf("a policy rule goes only with an approval")
	}
	d.Always = d.Always || plan != nil
	r, err := st.Decide(ctx, d)
	if err != nil {
		return r, err
	}
	if plan.Changes() {
		if err := policy.WriteRule(plan.path, plan.src); err != nil {
			return r, fmt.Errorf("request %d is approved, but the rule could not be written: %w", d.RequestID, err)
		}
	}
	return r, nil
}

// MoveSession pauses, resumes or stops session id for person who, through
// surface: only the session's owner or an operator of conf may. Every
// surface moves sessions through it.
func MoveSession(ctx context.Context, st *store.Store, conf Config, who string, id int64, to, surface, reason string) (store.Session, error) {
	cur, err := st.Session(ctx, id)
	if err != nil {
		return store.Session{}, err
	}
	if !MayControl(conf, who, cur) {
		return store.Session{}, fmt.Errorf("%w: %s may not change session %d: only its owner %s or an operator (supervision.operators in .agent/config.yaml) may",
			store.ErrNotAllowed, store.Handle(who), id, store.Handle(cur.Owner))
	}
	return st.SetSessionStatus(ctx, id, store.Transition{To: to, By: who, Surface: surface, Reason: reason})
}

// MayControl reports whether who is the session's owner or an operator.
func MayControl(conf Config, who string, s store.Session) bool {
	who = strings.TrimPrefix(who, "@")
	if who == strings.TrimPrefix(s.Owner, "@") {
		return true
	}
	for _, op := range conf.Operators {
		if strings.TrimPrefix(op, "@") == who {
			return true
		}
	}
	return false
}
