package supervision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// AlwaysPlan is what "approve always" adds to the workspace policy for one
// request: the rule, the policy file's diff (empty when the rule is there
// already), and a note when the user's allowlist keeps the rule from taking
// effect. Every surface (terminal, web page, Slack) shows it before it is
// written.
type AlwaysPlan struct {
	Rule policy.Rule
	Diff string
	// Note says why the rule alone will not auto-approve (the allowlist
	// does not list the command, or it is above max_risk); "" otherwise.
	Note string

	request int64
	path    string
	src     []byte
}

// Changes reports whether writing the plan changes the policy file.
func (p *AlwaysPlan) Changes() bool { return p != nil && p.src != nil }

// RuleText is the rule as the surfaces show it: "commands: go test ./...".
func (p *AlwaysPlan) RuleText() string { return p.Rule.Key + ": " + p.Rule.Value }

// Fingerprint names the rule shortly (a button's value carries it): the
// plan confirmed is the plan written, or nothing is.
func (p *AlwaysPlan) Fingerprint() string {
	sum := sha256.Sum256([]byte(p.RuleText()))
	return hex.EncodeToString(sum[:8])
}

// PlanAlways is the rule "approve always" would add for pending request
// id, and the policy file's diff; it writes nothing. A request no longer
// pending gets its *DecidedError.
func (s *Service) PlanAlways(ctx context.Context, id int64) (*AlwaysPlan, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		if err != nil {
			return nil, err
		}
		hp, err := e.h.PlanAlways(ctx, n)
		if err != nil {
			return nil, e.err(err)
		}
		return hp.plan(id), nil
	}
	r, err := s.st.Request(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Status != store.StatusPending {
		return nil, &DecidedError{Request: r}
	}
	root := s.ws.Root
	paths := policy.DefaultPaths(root, s.getenv)
	rule, err := policy.RuleFor(root, bridge.PolicyAction(r))
	if err != nil {
		return nil, err
	}
	src, diff, err := policy.AddRule(paths.Workspace, rule)
	if err != nil {
		return nil, err
	}
	p := &AlwaysPlan{Rule: rule, Diff: diff, request: id, path: paths.Workspace}
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

// plan is a host's plan as the surfaces show it: written by the host when
// the approval is taken there (src marks a plan that changes the file).
func (hp HostPlan) plan(id int64) *AlwaysPlan {
	p := &AlwaysPlan{Rule: policy.Rule{Key: hp.Key, Value: hp.Value}, Diff: hp.Diff, Note: hp.Note, request: id}
	if hp.Diff != "" {
		p.src = []byte(hp.Diff)
	}
	return p
}

// Decision is a person's answer to an approval request.
type Decision struct {
	Request int64
	Approve bool
	// Reason is kept with the decision; a rejection's reaches the agent.
	Reason string
	// Always is "approve always": the plan (PlanAlways) whose rule is
	// written to the workspace policy once the approval is taken. Only
	// with Approve.
	Always *AlwaysPlan
	// Session is "approve for this session": the session's later requests
	// that the rule "approve always" would write for this one matches
	// (bridge.SessionRule) are approved without asking until the session
	// ends; the approval is kept in the store, the policy file is not
	// touched. Only with Approve, never with Always, never for a critical
	// request.
	Session bool
}

// scope is the store's name of what the decision covers.
func (d Decision) scope() string {
	switch {
	case d.Always != nil:
		return store.ScopeAlways
	case d.Session:
		return store.ScopeSession
	}
	return ""
}

// checkForSession refuses an approval for the session that could not
// cover anything: a critical request (never approved but one at a time) or
// one no rule can match (a pipeline, a path never auto-approved).
func (s *Service) checkForSession(r Request) error {
	if r.Risk == store.RiskCritical {
		return agenterr.Refusedf("request %d is critical: a critical action is never approved for a session (nor always); approve it alone", r.ID)
	}
	if _, err := bridge.SessionRule(s.ws.Root, r); err != nil {
		return fmt.Errorf("request %d cannot be approved for the session: %w", r.ID, err)
	}
	return nil
}

// Decide takes a's decision on a request: authorise, the store's
// compare-and-set (the loser of a race gets a *DecidedError naming the
// winner; an answer after the deadline gets one that Is ErrExpired), then
// the plan's rule is written and RequestChanged published.
func (s *Service) Decide(ctx context.Context, a Actor, d Decision) (Request, error) {
	if d.Always != nil && (!d.Approve || d.Always.request != d.Request) {
		return Request{}, agenterr.Invalidf("always", "a policy rule goes only with the approval of the request it was planned for")
	}
	if d.Session && (!d.Approve || d.Always != nil) {
		return Request{}, agenterr.Invalidf("session", "approve for the session goes only with an approval, and not with always")
	}
	if e, n, err := s.route(d.Request); err != nil || e != nil {
		return hostChange(ctx, s, a, e, err, func() (Request, error) {
			hd := HostDecision{Request: n, Approve: d.Approve, Reason: d.Reason, Session: d.Session}
			if d.Always != nil {
				hd.Always = d.Always.Fingerprint()
			}
			return e.h.Decide(ctx, a, hd)
		}, e.request, func(r Request) events.Event {
			return events.Event{Kind: events.RequestChanged, SessionID: r.SessionID, ItemID: r.ID, Status: r.Status, Text: r.Reason, Actor: a.Name}
		})
	}
	r, err := s.st.Request(ctx, d.Request)
	if err != nil {
		return Request{}, err
	}
	ses, err := s.st.Session(ctx, r.SessionID)
	if err != nil {
		return Request{}, err
	}
	if err := s.authorise(ctx, a, ses, fmt.Sprintf("decide request %d", r.ID)); err != nil {
		return Request{}, err
	}
	if d.Session {
		if err := s.checkForSession(r); err != nil {
			return Request{}, err
		}
	}
	r, err = s.st.Decide(ctx, store.Decision{RequestID: d.Request, Approve: d.Approve, By: a.Name, Surface: a.Surface, Reason: d.Reason, Scope: d.scope()})
	if err != nil {
		return r, err
	}
	s.publish(events.Event{Kind: events.RequestChanged, SessionID: r.SessionID, ItemID: r.ID, Status: r.Status, Text: r.Reason, Actor: a.Name})
	if d.Always.Changes() {
		if err := policy.WriteRule(d.Always.path, d.Always.src); err != nil {
			return r, fmt.Errorf("request %d is approved, but the rule could not be written: %w", r.ID, err)
		}
	}
	return r, nil
}
