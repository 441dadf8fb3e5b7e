package supervision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/agentinfra/agentinfra/agenterr"
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
	r, err := s.st.Request(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Status != store.StatusPending {
		return nil, &DecidedError{Request: r}
	}
	root := s.ws.Root
	paths := policy.DefaultPaths(root, s.getenv)
	rule, err := policy.RuleFor(root, PolicyAction(r))
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

// PolicyAction is a stored request as the policy sees it.
func PolicyAction(r Request) policy.Action {
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
	// ForSession is "approve for this session": the same action (tool and
	// command, file or URL) asked again in this session is approved
	// without a new request; nothing is written to the policy. Only with
	// Approve, never with Always.
	ForSession bool
}

// Decide takes a's decision on a request: authorise, the store's
// compare-and-set (the loser of a race gets a *DecidedError naming the
// winner; an answer after the deadline gets one that Is ErrExpired), then
// the plan's rule is written and RequestChanged published.
func (s *Service) Decide(ctx context.Context, a Actor, d Decision) (Request, error) {
	if d.Always != nil && (!d.Approve || d.Always.request != d.Request) {
		return Request{}, agenterr.Invalidf("always", "a policy rule goes only with the approval of the request it was planned for")
	}
	if d.ForSession && (!d.Approve || d.Always != nil) {
		return Request{}, agenterr.Invalidf("session", "approve for the session is an approval, and not with always")
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
	r, err = s.st.Decide(ctx, store.Decision{RequestID: d.Request, Approve: d.Approve, By: a.Name, Surface: a.Surface, Reason: d.Reason, Always: d.Always != nil, ForSession: d.ForSession})
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
