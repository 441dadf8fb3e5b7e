package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/review"
)

// A run's change, published (docs/review.md, "On Coder"): when its
// agent's run on a matrix task ends, the person's agentinfra asks the host
// to commit what the agent left and push its branch to the repository's
// remote, then fetches it into its own clone, where the change is reviewed
// and lands.
//
//	POST /v1/agent/publish  ChangePublish → review.Published

// ChangePublish names the task whose change the host's agent made (the
// task is in the person's matrix: its subject comes with it).
type ChangePublish struct {
	Task    string `json:"task"`
	Subject string `json:"subject"`
	Run     string `json:"run"`
}

// DefaultRemote is the remote a host pushes its agent's branch to, and
// the person's clone fetches it from: the clone's origin.
const DefaultRemote = "origin"

func publishHandler(o AgentOptions) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in ChangePublish
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeError(w, agenterr.Invalidf("body", "the change to publish is not JSON: %v", err))
			return
		}
		out, err := publish(r.Context(), o, in)
		answer(w, out, err)
	}
}

// publish pushes the agent's branch once its run has ended: a busy agent
// is still changing its worktree.
func publish(ctx context.Context, o AgentOptions, in ChangePublish) (review.Published, error) {
	a, err := o.Fleet.Show(ctx, o.Name)
	if err != nil {
		return review.Published{}, err
	}
	// Any live run — busy, waiting for a person, starting, stopping — is
	// still changing the worktree.
	if a.CurrentRun != nil || a.Status == fleet.StatusBusy || a.Status == fleet.StatusWaiting || a.Status == fleet.StatusStarting || a.Status == fleet.StatusStopping {
		return review.Published{}, agenterr.Conflictf("agent %s is %s: its change is published when its run has ended", a.Name, a.Status)
	}
	if a.Workspace.Path == "" || a.Workspace.Branch == "" {
		return review.Published{}, &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("agent %s has no worktree on a branch: there is no change to publish", a.Name)}
	}
	remote := o.Remote
	if remote == "" {
		remote = DefaultRemote
	}
	return review.Publish(ctx, review.PublishInput{Task: in.Task, Subject: in.Subject, Agent: a.Name, Run: in.Run,
		Worktree: a.Workspace.Path, Branch: a.Workspace.Branch, Remote: remote})
}

// PublishChange asks the host to publish its agent's change.
func (c *Client) PublishChange(ctx context.Context, in ChangePublish) (review.Published, error) {
	var out review.Published
	return out, c.do(ctx, http.MethodPost, "v1/agent/publish", in, &out)
}
