package agentside

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// Ask is what an agent asks a person to approve: an edit (File and Diff) or
// anything else it describes (no File).
type Ask struct {
	Title       string
	Description string
	File        string
	Diff        string
	// Risk is the agent's own grading (low, high, critical); the request
	// carries the higher of it and the policy's (an action that is not an
	// edit is high unless the agent says critical).
	Risk string
	// Timeout shortens the policy's approval timeout (0: the policy's).
	Timeout time.Duration
}

// Verdict statuses of AskApproval.
const (
	VerdictApproved    = "approved"
	VerdictRejected    = "rejected"
	VerdictTimeout     = "timeout"
	VerdictInterrupted = "interrupted" // the session ended while it waited
	VerdictWithdrawn   = "withdrawn"
)

// Verdict is the outcome of an approval request.
type Verdict struct {
	RequestID int64      `json:"request_id"`
	SessionID int64      `json:"session_id"`
	Status    string     `json:"status"`
	Reason    string     `json:"reason,omitempty"`
	DecidedBy string     `json:"decided_by,omitempty"`
	Surface   string     `json:"surface,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	File      string     `json:"file,omitempty"`
	Risk      string     `json:"risk"`
}

func verdictOf(r store.Request) Verdict {
	v := Verdict{RequestID: r.ID, SessionID: r.SessionID, Reason: r.Reason, DecidedBy: r.DecidedBy, Surface: r.Surface, DecidedAt: r.DecidedAt, File: r.File, Risk: r.Risk}
	switch r.Status {
	case store.StatusApproved:
		v.Status = VerdictApproved
	case store.StatusRejected:
		v.Status = VerdictRejected
	case store.StatusExpired:
		v.Status = VerdictTimeout
	case store.StatusInterrupted:
		v.Status = VerdictInterrupted
	default:
		v.Status = r.Status
	}
	return v
}

var risks = []string{store.RiskLow, store.RiskHigh, store.RiskCritical}

// AskApproval raises a request in the client's session and waits until a
// person decides it (from any surface), it times out (the policy's
// timeouts.approval, or a.Timeout when shorter), or ctx ends (the request
// is withdrawn). An edit's diff must apply to the file as it is now; the
// file's hash is kept for AcceptDiff.
func (c *Client) AskApproval(ctx context.Context, a Ask, progress Progress) (Verdict, error) {
	if a.Risk != "" && !slices.Contains(risks, a.Risk) {
		return Verdict{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "risk", Value: a.Risk, Valid: risks, Reason: "unknown risk"}
	}
	if a.Title == "" {
		return Verdict{}, agenterr.Invalidf("title", "required: one line saying what is to be approved")
	}
	pol := c.policy()
	n := store.NewRequest{Kind: store.KindTool, Tool: "ask_approval", Title: a.Title, ToolInput: a.Description, Diff: a.Diff}
	act := policy.Action{Kind: policy.KindTool, Tool: "ask_approval"}
	if a.File != "" || a.Diff != "" {
		rel, hash, err := c.checkEdit(pol, a.File, a.Diff)
		if err != nil {
			return Verdict{}, err
		}
		n.Kind, n.Tool, n.File, n.FileHash = store.KindEdit, "ask_approval", rel, hash
		act = policy.Action{Kind: policy.KindEdit, Tool: "ask_approval", File: rel}
	}
	n.Risk = pol.Assess(act).Risk
	if act.Kind == policy.KindTool {
		n.Risk = store.RiskHigh // an action the policy cannot see into
	}
	if a.Risk != "" && !policy.RiskAtMost(a.Risk, n.Risk) {
		n.Risk = a.Risk // the agent may raise the risk, never lower it
	}
	n.Timeout = shorter(pol.Timeout("approval"), a.Timeout)
	st, ses, err := c.Session(ctx)
	if err != nil {
		return Verdict{}, err
	}
	n.SessionID = ses.ID
	req, err := st.RaiseRequest(ctx, n)
	if err != nil {
		return Verdict{}, err
	}
	var deadline time.Time
	if req.ExpiresAt != nil {
		deadline = *req.ExpiresAt
	}
	what := fmt.Sprintf("request %d waits for a person: agentinfra approve %d / agentinfra reject %d --reason TEXT", req.ID, req.ID, req.ID)
	var cur store.Request
	timedOut, err := c.waitFor(ctx, st, deadline, progress, what, func() (bool, error) {
		var err error
		cur, err = st.Request(ctx, req.ID)
		return err == nil && cur.Status != store.StatusPending, err
	})
	switch {
	case timedOut:
		if cur, _, err = st.Expire(context.WithoutCancel(ctx), req.ID); err != nil {
			return Verdict{}, err
		}
	case err != nil && isCanceled(err):
		// The MCP request was cancelled: the request is taken back
		// (unless a person decided it in the meantime).
		r, _, cerr := st.CloseRequest(context.WithoutCancel(ctx), req.ID, store.StatusWithdrawn, store.SurfaceAgent, "the MCP client cancelled ask_approval")
		if cerr == nil {
			return verdictOf(r), err
		}
		return Verdict{}, err
	case err != nil:
		return Verdict{}, err
	}
	return verdictOf(cur), nil
}

// checkEdit checks an edit's path and diff against the file as it is now,
// and returns the path relative to the workspace and the file's hash.
func (c *Client) checkEdit(pol *policy.Policy, file, diff string) (rel, hash string, err error) {
	root := c.svc.o.Workspace.Root
	if rel, err = relPath(pol, file); err != nil {
		return "", "", err
	}
	f, err := parseDiff(rel, diff)
	if err != nil {
		return "", "", err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", "", err
	}
	defer r.Close()
	cur, exists, err := readIn(r, rel)
	if err != nil {
		return "", "", err
	}
	if _, _, err := applyDiff(f, cur, exists); err != nil {
		return "", "", agenterr.Invalidf("diff", "it does not apply to %s as it is now: %v", rel, err)
	}
	return rel, hashOf(cur, exists), nil
}

// Accept statuses.
const (
	AcceptApplied         = "applied"
	AcceptAlreadyConsumed = "already_consumed"
	AcceptPatchConflict   = "patch_conflict"
)

// Accepted is the outcome of AcceptDiff.
type Accepted struct {
	RequestID int64  `json:"request_id"`
	Status    string `json:"status"`
	File      string `json:"file,omitempty"`
	Deleted   bool   `json:"deleted,omitempty"`
	Hash      string `json:"hash,omitempty"` // the file's hash now
	Reason    string `json:"reason,omitempty"`
}

// AcceptDiff applies the diff of approved request id: once (a second call
// is already_consumed), and only while the file has the hash it had when
// the agent asked (else patch_conflict, the file untouched and the request
// still to be applied once the file is back). Only the requests of this
// person's agent-side sessions are applied.
func (c *Client) AcceptDiff(ctx context.Context, id int64) (Accepted, error) {
	st, ses, err := c.Session(ctx)
	if err != nil {
		return Accepted{}, err
	}
	r, err := st.Request(ctx, id)
	if err != nil {
		return Accepted{}, err
	}
	owner, err := st.Session(ctx, r.SessionID)
	if err != nil {
		return Accepted{}, err
	}
	if owner.CLI != CLI || strings.TrimPrefix(owner.Owner, "@") != strings.TrimPrefix(c.svc.owner, "@") {
		return Accepted{}, &agenterr.Error{Kind: agenterr.Forbidden, Err: supervision.ErrNotAllowed, Reason: fmt.Sprintf(
			"request %d belongs to session %d (%s, %s): accept_diff applies only the approved edits of %s's MCP clients", id, owner.ID, owner.CLI, store.Handle(owner.Owner), store.Handle(c.svc.owner))}
	}
	if r.Kind != store.KindEdit || r.File == "" {
		return Accepted{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "request_id", Reason: fmt.Sprintf("request %d is not an edit (%s): there is no diff to apply", id, r.Kind)}
	}
	claim, err := st.ClaimApproved(ctx, id)
	if errors.Is(err, store.ErrConsumed) {
		return Accepted{RequestID: id, Status: AcceptAlreadyConsumed, File: r.File, Reason: err.Error()}, nil
	}
	if err != nil {
		return Accepted{}, err
	}
	out, err := c.apply(st, claim)
	if err != nil {
		reason := err.Error()
		if rerr := st.ReleaseClaim(context.WithoutCancel(ctx), id, reason); rerr != nil {
			return Accepted{}, fmt.Errorf("%w (and the claim could not be released: %v)", err, rerr)
		}
		if errors.Is(err, ErrPatchConflict) {
			c.record(ctx, st, ses, id, "diff_conflict", map[string]any{"file": r.File, "reason": reason})
			return Accepted{RequestID: id, Status: AcceptPatchConflict, File: r.File, Reason: reason}, nil
		}
		return Accepted{}, err
	}
	c.record(ctx, st, ses, id, "diff_applied", map[string]any{"file": r.File, "hash": out.Hash, "deleted": out.Deleted})
	return out, nil
}

// apply writes a claimed edit.
func (c *Client) apply(st *store.Store, claim store.Consumable) (Accepted, error) {
	root := c.svc.o.Workspace.Root
	r := claim.Request
	// Judged again: a symlink may have changed since the agent asked.
	rel, err := relPath(c.policy(), r.File)
	if err != nil {
		return Accepted{}, err
	}
	diff := r.Diff
	if r.DiffCut() {
		// What the person approved is the whole diff (its head in the
		// row): the file checked against its size and hash.
		whole, err := st.WholeDiff(r)
		if err != nil {
			return Accepted{}, err
		}
		b, err := io.ReadAll(whole)
		whole.Close()
		if err != nil {
			return Accepted{}, err
		}
		diff = string(b)
	}
	f, err := parseDiff(rel, diff)
	if err != nil {
		return Accepted{}, err
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return Accepted{}, err
	}
	defer rt.Close()
	cur, exists, err := readIn(rt, rel)
	if err != nil {
		return Accepted{}, err
	}
	if h := hashOf(cur, exists); h != claim.FileHash {
		return Accepted{}, fmt.Errorf("%w: %s changed since the agent asked (hash %s then, %s now): nothing was written; ask again with a diff of the file as it is now", ErrPatchConflict, rel, claim.FileHash, h)
	}
	data, remove, err := applyDiff(f, cur, exists)
	if err != nil {
		return Accepted{}, fmt.Errorf("%w: the diff does not apply to %s: %v", ErrPatchConflict, rel, err)
	}
	if remove {
		if err := rt.Remove(rel); err != nil {
			return Accepted{}, outsideOr(rel, err)
		}
		return Accepted{RequestID: r.ID, Status: AcceptApplied, File: rel, Deleted: true, Hash: absentHash}, nil
	}
	if err := writeIn(rt, rel, data); err != nil {
		return Accepted{}, err
	}
	return Accepted{RequestID: r.ID, Status: AcceptApplied, File: rel, Hash: hashOf(data, true)}, nil
}

// AutoApprove is the policy's answer for an action.
type AutoApprove struct {
	Auto bool     `json:"auto"`
	Risk string   `json:"risk"`
	Rule string   `json:"rule"`
	Why  []string `json:"why,omitempty"`
	// Warnings say what is wrong with the policy files.
	Warnings []string `json:"warnings,omitempty"`
}

// Action kinds check_auto_approve knows.
var ActionKinds = []string{policy.KindCommand, policy.KindEdit, policy.KindRead, policy.KindFetch, policy.KindTool}

// CheckAutoApprove asks the workspace policy (and the user's allowlist)
// whether a runs without a person. It needs no session.
func (c *Client) CheckAutoApprove(a policy.Action) (AutoApprove, error) {
	if !slices.Contains(ActionKinds, a.Kind) {
		return AutoApprove{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "kind", Value: a.Kind, Valid: ActionKinds, Reason: "unknown action kind"}
	}
	switch {
	case a.Kind == policy.KindCommand && a.Command == "":
		return AutoApprove{}, agenterr.Invalidf("command", "required for kind command")
	case (a.Kind == policy.KindEdit || a.Kind == policy.KindRead) && a.File == "":
		return AutoApprove{}, agenterr.Invalidf("file", "required for kind %s", a.Kind)
	case a.Kind == policy.KindFetch && a.URL == "":
		return AutoApprove{}, agenterr.Invalidf("url", "required for kind fetch")
	case a.Kind == policy.KindTool && a.Tool == "":
		return AutoApprove{}, agenterr.Invalidf("tool", "required for kind tool")
	}
	pol := c.policy()
	v := pol.Evaluate(a)
	return AutoApprove{Auto: v.Auto, Risk: v.Risk, Rule: v.Rule, Why: v.Why, Warnings: pol.Warnings}, nil
}
