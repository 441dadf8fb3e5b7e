package host

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
)

// The agent API: the one fleet agent a host runs in its workspace, on the
// workspace's own (local) fleet, supervised (approval mode ask). The Coder
// backend of the person's machine gives it tasks and stops it through
// these, as it gives an unsupervised agent's AgentAPI messages:
//
//	GET  /v1/agent        HostAgent: the agent, its latest run that ended
//	POST /v1/agent/start  AgentStart → fleet.StartResult
//	POST /v1/agent/stop   → fleet.TaskRun
//	POST /v1/agent/publish ChangePublish → review.Published (change.go)

// HostAgent is what a host says of its agent.
type HostAgent struct {
	// Agent is nil until the host has created it (on its spec, when it
	// starts).
	Agent *fleet.Agent `json:"agent"`
	// LastRun is the latest run that ended (nil before one has).
	LastRun *fleet.TaskRun `json:"last_run,omitempty"`
}

// AgentStart is a task for the host's agent.
type AgentStart struct {
	Text   string `json:"text"`
	Owner  string `json:"owner"`
	Source string `json:"source,omitempty"`
}

// AgentOptions say which agent a host's agent API serves.
type AgentOptions struct {
	// Fleet is the workspace's fleet (local), Name its agent.
	Fleet fleet.Backend
	Name  string
	// Remote is where the agent's changes are pushed ("" = DefaultRemote).
	Remote string
}

// AgentHandler serves the agent API of o's agent (no token check: the
// caller wraps it, as Handler).
func AgentHandler(o AgentOptions) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agent", func(w http.ResponseWriter, r *http.Request) {
		out, err := hostAgent(r.Context(), o)
		answer(w, out, err)
	})
	mux.HandleFunc("POST /v1/agent/start", func(w http.ResponseWriter, r *http.Request) {
		var in AgentStart
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeError(w, agenterr.Invalidf("body", "the task is not JSON: %v", err))
			return
		}
		out, err := o.Fleet.Start(r.Context(), fleet.StartInput{Name: o.Name, Text: in.Text, Owner: in.Owner, Source: in.Source, ApprovalMode: "ask"})
		answer(w, out, err)
	})
	mux.HandleFunc("POST /v1/agent/publish", publishHandler(o))
	mux.HandleFunc("POST /v1/agent/stop", func(w http.ResponseWriter, r *http.Request) {
		out, err := o.Fleet.Stop(r.Context(), o.Name)
		answer(w, out, err)
	})
	return mux
}

func hostAgent(ctx context.Context, o AgentOptions) (HostAgent, error) {
	a, err := o.Fleet.Show(ctx, o.Name)
	if errors.Is(err, agenterr.ErrNotFound) {
		return HostAgent{}, nil
	}
	if err != nil {
		return HostAgent{}, err
	}
	out := HostAgent{Agent: &a}
	h, err := o.Fleet.History(ctx, o.Name, 1, fleet.DefaultPageSize)
	if err != nil {
		return out, err
	}
	for _, tr := range h.Tasks { // newest first
		if tr.CompletedAt != nil {
			out.LastRun = &tr
			break
		}
	}
	return out, nil
}

func answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// Agent reads the host's agent (GET /v1/agent).
func (c *Client) Agent(ctx context.Context) (HostAgent, error) {
	var out HostAgent
	return out, c.do(ctx, http.MethodGet, "v1/agent", nil, &out)
}

// StartAgent gives the host's agent a task.
func (c *Client) StartAgent(ctx context.Context, in AgentStart) (fleet.StartResult, error) {
	var out fleet.StartResult
	return out, c.do(ctx, http.MethodPost, "v1/agent/start", in, &out)
}

// StopAgent stops the host's agent's run.
func (c *Client) StopAgent(ctx context.Context) (fleet.TaskRun, error) {
	var out fleet.TaskRun
	return out, c.do(ctx, http.MethodPost, "v1/agent/stop", struct{}{}, &out)
}
