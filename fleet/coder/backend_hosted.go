package coder

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
)

// A supervised agent (host.go) as the backend drives it: created with the
// host's parameters, its status read from its host, its tasks given to its
// host and stopped there.

// approvalAsk is the one approval mode the Coder backend takes: a
// supervised agent. Without one the agent runs as its template says.
const approvalAsk = "ask"

// checkApproval refuses an approval mode the Coder backend does not run.
func checkApproval(mode string) error {
	if mode != "" && mode != approvalAsk {
		return errSupervisedLocalOnly
	}
	return nil
}

// hostParams are the parameters of a supervised agent's workspace (the
// template was checked to have them; the CLI only when it has one).
func hostParams(params []TemplateVersionParameter, token, owner, cli string) ([]WorkspaceBuildParameter, error) {
	var missing []string
	for _, p := range []string{HostTokenParameter, HostOwnerParameter} {
		if !hasParameter(params, p) {
			missing = append(missing, fmt.Sprintf("%q", p))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("has no parameter %s: a template of supervised agents runs agentinfra's host (docs/coder.md shows the template's parameters and app)", strings.Join(missing, " and "))
	}
	out := []WorkspaceBuildParameter{{Name: HostTokenParameter, Value: token}, {Name: HostOwnerParameter, Value: owner}}
	if hasParameter(params, HostCLIParameter) {
		out = append(out, WorkspaceBuildParameter{Name: HostCLIParameter, Value: cli})
	}
	return out, nil
}

// askHost reads what the host of a supervised agent says of its agent,
// when the workspace is up (nil when it cannot be asked or does not
// answer: the agent is starting, or its host down).
func (b *Backend) askHost(ctx context.Context, rec *agentRecord, o observation) *host.HostAgent {
	if rec == nil || rec.Host == nil || o.ws.LatestBuild.Status != BuildRunning || !o.agentReady() {
		return nil
	}
	hc, err := b.hostClient(ctx, rec, o.ws)
	if err != nil {
		return nil
	}
	ha, err := hc.Agent(ctx)
	if err != nil {
		return nil
	}
	return &ha
}

// askHosts is askHost for the supervised agents of a list, all at once.
func (b *Backend) askHosts(ctx context.Context, wss []Workspace) map[string]*host.HostAgent {
	out := map[string]*host.HostAgent{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ws := range wss {
		rec, err := b.files.loadRecord(ws.Name, ws.ID)
		if err != nil || rec == nil || rec.Host == nil {
			continue
		}
		wg.Go(func() {
			ha := b.askHost(ctx, rec, observation{ws: ws, slug: b.cfg.AppSlug})
			mu.Lock()
			out[ws.ID] = ha
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// deriveHosted is derive for a supervised agent whose workspace is up:
// the host says whether its agent works; the open run cur ended when the
// host's latest ended run is it (the spec's run: the host's first).
func deriveHosted(o observation, cur *runLine) (fleet.Status, *runEnd) {
	h := o.host
	if h == nil || h.Agent == nil {
		return fleet.StatusStarting, nil // the host is not up yet, or not answering
	}
	st := h.Agent.Status
	if st == fleet.StatusBusy || cur == nil {
		return st, nil
	}
	if last := h.LastRun; last != nil && (cur.HostRun == "" || last.ID == cur.HostRun) {
		reason := last.ExitReason
		if reason == "" {
			reason = last.Status
		}
		return st, &runEnd{last.Status, reason + " (on its host)"}
	}
	return fleet.StatusStarting, nil // given, not yet begun there
}

// startOnHost gives a supervised agent's host its task (the caller holds
// the agent's lock, and claimed the matrix task): the run is the host's,
// recorded here with the host's run ID.
func (b *Backend) startOnHost(ctx context.Context, o observation, rec *agentRecord, in fleet.StartInput, text, summary, taskID, source string) (fleet.StartResult, error) {
	hc, err := b.hostClient(ctx, rec, o.ws)
	if err != nil {
		return fleet.StartResult{}, err
	}
	res, err := hc.StartAgent(ctx, host.AgentStart{Text: text, Owner: mdtext.Or(in.Owner, rec.Host.Owner), Source: source})
	if err != nil {
		return fleet.StartResult{}, err
	}
	now := b.now()
	rec.Runs++
	tr := fleet.TaskRun{ID: runID(o.ws.Name, rec.Runs), AgentName: o.ws.Name, Summary: summary, Status: fleet.RunRunning,
		Source: source, CreatedAt: now, StartedAt: &now, TaskID: taskID}
	if err := statefile.WriteJSON(b.files.record(o.ws.Name), rec); err != nil {
		return fleet.StartResult{}, err
	}
	if _, err := statefile.AppendLine(b.files.history(o.ws.Name), runLine{TaskRun: tr, HostRun: res.Task.ID, Sent: true}); err != nil {
		return fleet.StartResult{}, err
	}
	return fleet.StartResult{Task: tr, AgentStatus: fleet.StatusBusy}, nil
}

// stopOnHost stops a supervised agent's run on its host.
func (b *Backend) stopOnHost(ctx context.Context, o observation, rec *agentRecord) error {
	hc, err := b.hostClient(ctx, rec, o.ws)
	if err != nil {
		return err
	}
	_, err = hc.StopAgent(ctx)
	return err
}

// keepHostApp records where a supervised agent's host app is, once its
// workspace shows it, so that Hosts asks Coder nothing (under the agent's
// lock; a record that changed meanwhile is left as it is).
func (b *Backend) keepHostApp(ctx context.Context, rec *agentRecord, ws Workspace) {
	if rec == nil || rec.Host == nil {
		return
	}
	app, _, ok := FindApp(ws, b.cfg.HostAppSlug)
	if !ok || (rec.Host.App != nil && *rec.Host.App == app) {
		return
	}
	_ = b.files.withAgentLock(ctx, ws.Name, func() error {
		cur, err := b.files.loadRecord(ws.Name, ws.ID)
		if err != nil || cur == nil || cur.Host == nil || cur.Runs != rec.Runs {
			return err
		}
		cur.Host.App = &app
		return statefile.WriteJSON(b.files.record(ws.Name), cur)
	})
}

// ownerOf is whose a supervised agent's sessions are.
func (b *Backend) ownerOf(in fleet.CreateInput) string {
	return mdtext.Or(in.Owner, supervision.CurrentUser(b.getenv))
}

// errNotSupervised refuses ask for an agent created without it.
func errNotSupervised(name string) error {
	return &agenterr.Error{Kind: agenterr.Invalid, Field: "approval_mode", Reason: fmt.Sprintf(
		"agent %s was created without supervision: its template runs its CLI as it says; create a supervised agent with --approval-mode ask", name)}
}
