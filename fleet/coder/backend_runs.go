package coder

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
)

// Start gives an idle agent a task as a user message to its AgentAPI app.
// Under the agent's lock it checks the agent is idle (from the workspace
// and the AgentAPI's own status: busy or not ready is a 409), claims the
// matrix task when there is one, sends the message and records the run.
// The run's end is recorded by the first call that sees it (show, list,
// history, start): the task then goes to REVIEW or BLOCKED.
func (b *Backend) Start(ctx context.Context, in fleet.StartInput) (fleet.StartResult, error) {
	if err := fleet.CheckStartInput(in); err != nil {
		return fleet.StartResult{}, err
	}
	if err := checkApproval(in.ApprovalMode); err != nil {
		return fleet.StartResult{}, err
	}
	source, err := fleet.CheckSource(in.Source)
	if err != nil {
		return fleet.StartResult{}, err
	}
	// An unknown agent is refused before its lock file is made.
	if _, _, _, _, err := b.observe(ctx, in.Name, false, false); err != nil {
		return fleet.StartResult{}, err
	}
	var out fleet.StartResult
	err = b.files.withAgentLock(ctx, in.Name, func() error {
		o, rec, st, cur, err := b.observe(ctx, in.Name, true, true)
		if err != nil {
			return err
		}
		name := o.ws.Name
		if in.ApprovalMode == approvalAsk && (rec == nil || rec.Host == nil) {
			return errNotSupervised(name)
		}
		if st != fleet.StatusIdle {
			if cur != nil {
				return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf(
					"agent %s is %s with run %s (%s): wait until it is idle, stop it, or give the task to another agent", name, st, cur.ID, cur.Summary)}
			}
			return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("agent %s is %s, not idle: it cannot take a task now", name, st)}
		}
		app, _, ok := FindApp(o.ws, b.cfg.AppSlug)
		if !ok && !o.supervised {
			return &agenterr.Error{Kind: agenterr.Unavailable, Reason: fmt.Sprintf(
				"workspace %s has no app %q to give tasks to: the template needs an AgentAPI app (Coder's Claude Code module), or set coder.app_slug in .agent/config.yaml", name, b.cfg.AppSlug)}
		}
		now := b.now()
		in.Name = name
		text, summary := in.Text, fleet.Summarize(in.Text)
		var taskID string
		if in.TaskID != "" || in.Next {
			claimed, err := fleet.ClaimTask(ctx, b.ws, in, "", nil, now, nil)
			if err != nil {
				return err
			}
			taskID, text, summary = claimed.Task.ID, fleet.WithNote(claimed.Prompt, in.Note), claimed.Summary
			if in.Prompt != "" {
				// A change sent back: the workspace's conversation goes on,
				// it has the task already.
				text = fleet.WithNote(in.Prompt, in.Note)
			}
		}
		release := func(cause error) error {
			if taskID != "" {
				cause = errors.Join(cause, fleet.ReleaseTask(context.WithoutCancel(ctx), b.ws, taskID, name, b.now()))
			}
			return cause
		}
		if rec == nil { // a workspace made elsewhere: its record starts now
			project := o.ws.TemplateDisplayName
			if project == "" {
				project = o.ws.TemplateName
			}
			r := roles{b: b}
			role, warning := r.of(ctx, o.ws, nil)
			spec, _ := b.specOf(ctx, o.ws) // show asks again while it is ""
			rec = &agentRecord{Name: name, WorkspaceID: o.ws.ID, TemplateID: o.ws.TemplateID, Role: role,
				Project: project, Spec: spec, CreatedAt: now}
			// A role Coder would not name is not recorded as none: the
			// next show asks again.
			if p := o.ws.LatestBuild.TemplateVersionPresetID; p != nil && warning == "" {
				rec.PresetID = *p
			}
		}
		if err := b.files.ensure(name); err != nil {
			return release(err)
		}
		if o.supervised {
			res, err := b.startOnHost(ctx, o, rec, in, text, summary, taskID, source)
			if err != nil {
				return release(err)
			}
			out = res
			return nil
		}
		if err := b.client.SendMessage(ctx, app, AgentMessage{Type: MessageUser, Content: text}); err != nil {
			if s, serr := b.client.AgentStatus(ctx, app); serr == nil && s.Status == AgentAPIRunning {
				return release(&agenterr.Error{Kind: agenterr.Conflict, Err: err, Reason: fmt.Sprintf("agent %s started working on something else meanwhile: it cannot take a task now", name)})
			}
			return release(fleetError(err))
		}
		rec.Runs++
		baseline := ""
		if o.ws.LatestAppStatus != nil {
			baseline = o.ws.LatestAppStatus.ID
		}
		tr := fleet.TaskRun{ID: runID(name, rec.Runs), AgentName: name, Summary: summary, Status: fleet.RunRunning,
			Source: source, CreatedAt: now, StartedAt: &now, TaskID: taskID}
		// The message is sent: what follows only records it.
		if err := statefile.WriteJSON(b.files.record(name), rec); err != nil {
			return err
		}
		if _, err := statefile.AppendLine(b.files.history(name), runLine{TaskRun: tr, Baseline: baseline, Sent: true}); err != nil {
			return err
		}
		out = fleet.StartResult{Task: tr, AgentStatus: fleet.StatusBusy}
		return nil
	})
	return out, err
}

// Stop interrupts the agent's current work through its AgentAPI app (the
// raw ESC a person would type) and records the run stopped; the workspace
// keeps running and the agent becomes idle. Stopping the workspace itself
// is Coder's business (`coder stop NAME`), not a fleet verb. It returns
// once the app reports the agent waiting again (at most stopSettleTimeout
// after the interrupt), so that what follows a stop finds the agent idle.
func (b *Backend) Stop(ctx context.Context, name string) (fleet.TaskRun, error) {
	// An unknown agent is refused before its lock file is made.
	if _, _, _, _, err := b.observe(ctx, name, false, false); err != nil {
		return fleet.TaskRun{}, err
	}
	var out fleet.TaskRun
	var interrupted *App
	err := b.files.withAgentLock(ctx, name, func() error {
		o, rec, st, cur, err := b.observe(ctx, name, true, true)
		if err != nil {
			return err
		}
		name := o.ws.Name
		if cur == nil && st != fleet.StatusBusy {
			return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("agent %s is %s: it has no run to stop", name, st)}
		}
		app, _, ok := FindApp(o.ws, b.cfg.AppSlug)
		if (!ok && !o.supervised) || !o.agentReady() || o.ws.LatestBuild.Status != BuildRunning {
			return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf(
				"agent %s is %s: its run can be interrupted once the workspace is up (or stop the workspace with `coder stop %s`)", name, st, name)}
		}
		if o.supervised {
			if err := b.stopOnHost(ctx, o, rec); err != nil {
				return err
			}
		} else {
			if err := b.client.SendMessage(ctx, app, AgentMessage{Type: MessageRaw, Content: Interrupt}); err != nil {
				return fleetError(err)
			}
			interrupted = &app
		}
		if cur == nil { // work agentinfra did not give: nothing of ours to record
			now := b.now()
			a := b.view(o, nil, "", st, nil)
			out = *a.CurrentRun
			out.Status, out.ExitReason, out.CompletedAt = fleet.RunStopped, "stopped", &now
			return nil
		}
		if err := b.endRun(ctx, name, *cur, fleet.RunStopped, "stopped"); err != nil {
			return err
		}
		runs, err := b.files.runs(name)
		if err == nil && len(runs) > 0 {
			out = runs[len(runs)-1].TaskRun
		}
		return err
	})
	if err == nil && interrupted != nil {
		// Outside the lock: the wait is the app's, not the record's.
		b.waitStable(ctx, *interrupted)
	}
	return out, err
}

// stopSettleTimeout bounds Stop's wait for the interrupted agent to
// settle: the AgentAPI reports running until the agent's screen has been
// still for about 2 s.
const stopSettleTimeout = 5 * time.Second

// waitStable follows the app's events until it reports the agent stable,
// at most stopSettleTimeout. The stream starts with the current status,
// so an agent already waiting ends the wait at once; an app that cannot be
// followed is not waited for (show then tells what the app says).
func (b *Backend) waitStable(ctx context.Context, app App) {
	ctx, cancel := context.WithTimeout(ctx, stopSettleTimeout)
	defer cancel()
	_ = b.client.AgentEvents(ctx, app, func(ev AgentEvent) bool {
		return ev.StatusChange == nil || ev.StatusChange.Status != AgentAPIStable
	})
}

// History returns one page of the agent's runs, newest first: the runs
// agentinfra started (its own record), merged with the work the
// workspace's app reported that agentinfra did not start (its statuses[]).
func (b *Backend) History(ctx context.Context, name string, page, pageSize int) (fleet.HistoryPage, error) {
	if err := fleet.CheckPage(page, pageSize); err != nil {
		return fleet.HistoryPage{}, err
	}
	o, rec, _, _, err := b.observe(ctx, name, true, false)
	if err != nil {
		return fleet.HistoryPage{}, err
	}
	var runs []runLine
	if rec != nil {
		if runs, err = b.files.runs(o.ws.Name); err != nil {
			return fleet.HistoryPage{}, err
		}
	}
	all := mergeRuns(o.ws.Name, runs, appStatuses(o.ws, b.cfg.AppSlug))
	newest := make([]fleet.TaskRun, len(all))
	for i, r := range all {
		newest[len(all)-1-i] = r
	}
	return fleet.PageRuns(o.ws.Name, newest, page, pageSize)
}

// appStatuses returns the statuses the AgentAPI app reported, oldest first.
func appStatuses(ws Workspace, slug string) []WorkspaceAppStatus {
	for _, r := range ws.LatestBuild.Resources {
		for _, ag := range r.Agents {
			for _, a := range ag.Apps {
				if a.Slug == slug {
					return a.Statuses
				}
			}
		}
	}
	return nil
}

// mergeRuns returns the agent's runs oldest first: agentinfra's runs, and a
// run for each stretch of work the app reported (a "working" status up to
// the next status that is not) that none of them accounts for. A run
// accounts for the first stretch that begins after its baseline (the app's
// latest status when it was given) and before the next run's baseline; a
// stretch before the first run, or a second one in a run's span, is work
// given in Coder itself. No clocks are compared: agentinfra's and Coder's
// may differ.
func mergeRuns(name string, runs []runLine, statuses []WorkspaceAppStatus) []fleet.TaskRun {
	pos := map[string]int{}
	for i, s := range statuses {
		pos[s.ID] = i
	}
	// span[i] is the first status index run i may account for.
	span := make([]int, len(runs))
	for i, r := range runs {
		span[i] = 0
		if p, ok := pos[r.Baseline]; ok {
			span[i] = p + 1
		}
	}
	owner := func(idx int) int { // the run whose span holds status idx, or -1
		o := -1
		for i := range runs {
			if span[i] <= idx {
				o = i
			}
		}
		return o
	}
	foreign := map[int][]fleet.TaskRun{} // after run i (-1: before all)
	claimed := make([]bool, len(runs))
	for i := 0; i < len(statuses); i++ {
		if statuses[i].State != AppStateWorking || (i > 0 && statuses[i-1].State == AppStateWorking) {
			continue
		}
		first := statuses[i]
		end := i
		for end+1 < len(statuses) && statuses[end+1].State == AppStateWorking {
			end++
		}
		o := owner(i)
		if o >= 0 && !claimed[o] {
			claimed[o] = true
			continue
		}
		started := first.CreatedAt
		tr := fleet.TaskRun{ID: appRunID(first), AgentName: name, Summary: stretchSummary(statuses, i, end), Status: fleet.RunRunning,
			Source: fleet.SourceHuman, CreatedAt: first.CreatedAt, StartedAt: &started,
			ExitReason: "reported by the workspace's app; not started by agentinfra"}
		if end+1 < len(statuses) {
			done := statuses[end+1]
			tr.CompletedAt = &done.CreatedAt
			tr.Status = fleet.RunCompleted
			if done.State == AppStateFailure {
				tr.Status = fleet.RunFailed
			}
		}
		foreign[o] = append(foreign[o], tr)
	}
	out := append([]fleet.TaskRun{}, foreign[-1]...)
	for i, r := range runs {
		out = append(out, r.TaskRun)
		out = append(out, foreign[i]...)
	}
	return out
}

// stretchStart returns the index of the first status of the stretch of
// "working" statuses that holds statuses[i] (which is working).
func stretchStart(statuses []WorkspaceAppStatus, i int) int {
	for i > 0 && statuses[i-1].State == AppStateWorking {
		i--
	}
	return i
}

// stretchSummary says what the stretch statuses[first..end] of work was
// about: its first message. The first status of a stretch often has none
// (Coder's AgentAPI watcher reports the screen moving before the agent
// says what it does), so it is the first status that has one; failing
// that, the message of the status that ended the stretch ("" when none
// says anything).
func stretchSummary(statuses []WorkspaceAppStatus, first, end int) string {
	for _, s := range statuses[first : end+1] {
		if s.Message != "" {
			return s.Message
		}
	}
	if end+1 < len(statuses) {
		return statuses[end+1].Message
	}
	return ""
}

// errSupervisedLocalOnly refuses an approval mode on Coder other than ask:
// an agent runs with its template's approval mode, or supervised (ask)
// under agentinfra's host in its workspace.
var errSupervisedLocalOnly = &agenterr.Error{Kind: agenterr.Invalid, Field: "approval_mode", Valid: []string{approvalAsk},
	Reason: "the Coder backend runs an agent with its template's approval mode, or supervised with ask (agentinfra's host in its workspace, docs/coder.md): default, auto_edit and yolo work with the local fleet only"}
