package coder

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
)

// Create makes a workspace from the project's template with the role's
// preset and the spec in the template's prompt parameter, which the
// template's agent starts working on when the workspace is up. The input is
// checked first (nothing is created when it is refused).
func (b *Backend) Create(ctx context.Context, in fleet.CreateInput) (fleet.Agent, error) {
	if err := checkName(in.Name, "name"); err != nil {
		return fleet.Agent{}, err
	}
	if err := checkApproval(in.ApprovalMode); err != nil {
		return fleet.Agent{}, err
	}
	supervised := in.ApprovalMode == approvalAsk
	if strings.TrimSpace(in.Spec) == "" {
		return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "spec",
			Reason: "the spec is empty: say what the agent is for (its standing objective), e.g. \"keep the API tests green\""}
	}
	switch in.CLI {
	case "", "gemini", "claude", "codex":
	default:
		return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "cli", Reason: fmt.Sprintf("unknown agent CLI %q: use gemini, claude or codex", in.CLI)}
	}
	source, err := fleet.CheckSource(in.Source)
	if err != nil {
		return fleet.Agent{}, err
	}
	t, err := b.template(ctx, in.Project, "project")
	if err != nil {
		return fleet.Agent{}, err
	}
	preset, err := b.preset(ctx, t, in.Role)
	if err != nil {
		return fleet.Agent{}, err
	}
	params, err := b.client.TemplateVersionRichParameters(ctx, t.ActiveVersionID)
	if err != nil {
		return fleet.Agent{}, fleetError(err)
	}
	if !hasParameter(params, b.cfg.PromptParameter) {
		return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "project", Reason: fmt.Sprintf(
			"template %s has no parameter %q to take the agent's spec: give the template one (Coder's Claude Code module's %q), or set coder.prompt_parameter in .agent/config.yaml to the parameter it has",
			t.Name, b.cfg.PromptParameter, DefaultPromptParameter)}
	}
	cli := in.CLI
	if cli == "" {
		cli = "claude"
	}
	req := CreateWorkspaceRequest{Name: in.Name, TemplateID: t.ID, TemplateVersionPresetID: preset.ID,
		RichParameterValues: []WorkspaceBuildParameter{{Name: b.cfg.PromptParameter, Value: in.Spec}}}
	var hostRec *hostRecord
	token := ""
	if supervised {
		if token, err = newHostToken(); err != nil {
			return fleet.Agent{}, err
		}
		owner := b.ownerOf(in)
		hp, err := hostParams(params, token, owner, cli)
		if err != nil {
			return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "project", Reason: fmt.Sprintf("template %s %v", t.Name, err)}
		}
		req.RichParameterValues = append(req.RichParameterValues, hp...)
		n, err := b.files.nextHostNumber(ctx)
		if err != nil {
			return fleet.Agent{}, err
		}
		hostRec = &hostRecord{Number: n, Owner: owner}
	}
	ws, err := b.client.CreateWorkspace(ctx, t.OrganizationID, req)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.Kind == KindConflict {
			return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Err: ce,
				Reason: fmt.Sprintf("agent %q already exists: you have a Coder workspace called so (names are unique regardless of case): pick another name", in.Name)}
		}
		return fleet.Agent{}, fleetError(err)
	}
	now := b.now()
	rec := &agentRecord{Name: ws.Name, WorkspaceID: ws.ID, TemplateID: t.ID, PresetID: preset.ID, Role: preset.Name,
		Project: projectOf(t).Name, Spec: in.Spec, CLI: cli, CreatedAt: now, Runs: 1, Host: hostRec}
	spec := runLine{TaskRun: fleet.TaskRun{ID: runID(ws.Name, 1), AgentName: ws.Name, Summary: fleet.Summarize(in.Spec),
		Status: fleet.RunPending, Source: source, CreatedAt: now}}
	err = b.files.withAgentLock(ctx, ws.Name, func() error {
		// A folder left by an earlier workspace of this name is history.
		if _, err := b.files.archive(ws.Name, now); err != nil {
			return err
		}
		if err := b.files.ensure(ws.Name); err != nil {
			return err
		}
		if supervised {
			if err := b.files.writeHostToken(ws.Name, token); err != nil {
				return err
			}
		}
		if err := statefile.WriteJSON(b.files.record(ws.Name), rec); err != nil {
			return err
		}
		_, err := statefile.AppendLine(b.files.history(ws.Name), spec)
		return err
	})
	if err != nil {
		return fleet.Agent{}, fmt.Errorf("agent %s was created in Coder but its record could not be written: %w", ws.Name, err)
	}
	o := observation{ws: ws, slug: b.cfg.AppSlug}
	st, _ := derive(o, &spec)
	return b.view(o, rec, preset.Name, st, &spec), nil
}

func runID(name string, n int) string { return fmt.Sprintf("%s-%d", name, n) }

func hasParameter(params []TemplateVersionParameter, name string) bool {
	for _, p := range params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// preset finds the role's preset in the template's active version: by
// name, case-insensitively; "" is the default preset (else the first;
// none when the template has no presets).
func (b *Backend) preset(ctx context.Context, t Template, role string) (Preset, error) {
	presets, err := b.client.TemplateVersionPresets(ctx, t.ActiveVersionID)
	if err != nil {
		return Preset{}, fleetError(err)
	}
	names := make([]string, 0, len(presets))
	for _, p := range presets {
		if role != "" && strings.EqualFold(p.Name, role) || role == "" && p.Default {
			return p, nil
		}
		names = append(names, p.Name)
	}
	switch {
	case role == "" && len(presets) > 0:
		return presets[0], nil
	case role == "":
		return Preset{}, nil
	case len(presets) == 0:
		return Preset{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "role", Reason: fmt.Sprintf(
			"unknown role %q: template %s has no presets, so its agents take no role (leave the role out)", role, t.Name)}
	}
	return Preset{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "role", Reason: fmt.Sprintf(
		"unknown role %q: the roles (presets of template %s) are %s", role, t.Name, strings.Join(names, ", "))}
}

// roles names the presets of builds, asking Coder once per template
// version (and never for an agent whose record names its preset).
type roles struct {
	b      *Backend
	names  map[string]map[string]string // version → preset ID → name
	failed map[string]error             // version → why its presets could not be read
}

// of returns the name of the preset ws's latest build used ("" for none)
// and, when Coder would not name it, a warning that says so: the agent
// then shows no role, and the caller must not take that for "no preset".
func (r *roles) of(ctx context.Context, ws Workspace, rec *agentRecord) (role, warning string) {
	id := ws.LatestBuild.TemplateVersionPresetID
	if id == nil || *id == "" {
		return "", ""
	}
	if rec != nil && rec.PresetID == *id {
		return rec.Role, ""
	}
	v := ws.LatestBuild.TemplateVersionID
	if r.names == nil {
		r.names, r.failed = map[string]map[string]string{}, map[string]error{}
	}
	m, ok := r.names[v]
	if !ok {
		m = map[string]string{}
		presets, err := r.b.client.TemplateVersionPresets(ctx, v)
		for _, p := range presets {
			m[p.ID] = p.Name
		}
		r.names[v], r.failed[v] = m, err
	}
	if err := r.failed[v]; err != nil {
		return "", fmt.Sprintf("agent %s shows no role: its workspace was built with preset %s of template %s, but Coder did not list that version's presets (%v)",
			ws.Name, *id, ws.TemplateName, err)
	}
	if name, ok := m[*id]; ok {
		return name, ""
	}
	return "", fmt.Sprintf("agent %s shows no role: its workspace was built with preset %s, which template %s's version %s does not list",
		ws.Name, *id, ws.TemplateName, v)
}

// appStatusTimeout bounds the AgentAPI status probe of show, start and stop.
const appStatusTimeout = 5 * time.Second

// observe reads an agent's workspace and asks its AgentAPI app how it is
// (when the workspace is up); the run an observation shows ended is
// recorded (taking the agent's lock unless the caller holds it). It
// returns the agent and its open run.
func (b *Backend) observe(ctx context.Context, name string, askApp, locked bool) (observation, *agentRecord, fleet.Status, *runLine, error) {
	if err := checkName(name, "agent_name"); err != nil {
		return observation{}, nil, "", nil, err
	}
	ws, err := b.client.WorkspaceByOwnerAndName(ctx, name)
	if err != nil {
		if KindOf(err) == KindNotFound {
			return observation{}, nil, "", nil, &agenterr.Error{Kind: agenterr.NotFound, Field: "agent_name", Err: err,
				Reason: fmt.Sprintf("no agent %q: you have no Coder workspace called so at %s", name, b.client.URL())}
		}
		return observation{}, nil, "", nil, fleetError(err)
	}
	b.remember(ws)
	o := observation{ws: ws, slug: b.cfg.AppSlug}
	if rec, err := b.files.loadRecord(ws.Name, ws.ID); err == nil && rec != nil && rec.Host != nil {
		o.supervised = true
		if askApp {
			o.host = b.askHost(ctx, rec, o)
		}
		b.keepHostApp(ctx, rec, ws)
	} else if askApp && ws.LatestBuild.Status == BuildRunning && o.agentReady() {
		if app, _, ok := FindApp(ws, b.cfg.AppSlug); ok {
			// A hung app must not hang show: the workspace's own
			// latest_app_status answers instead.
			actx, cancel := context.WithTimeout(ctx, appStatusTimeout)
			if s, err := b.client.AgentStatus(actx, app); err == nil {
				o.apiSay = s.Status
			}
			cancel()
		}
	}
	rec, st, cur, err := b.settle(ctx, o, locked)
	return o, rec, st, cur, err
}

// settle derives the status of an observed workspace and records its open
// run's end when the observation shows one (under the agent's lock, taken
// unless locked says the caller holds it).
func (b *Backend) settle(ctx context.Context, o observation, locked bool) (*agentRecord, fleet.Status, *runLine, error) {
	name := o.ws.Name
	rec, err := b.files.loadRecord(name, o.ws.ID)
	if err != nil {
		return nil, "", nil, err
	}
	var cur *runLine
	if rec != nil {
		runs, err := b.files.runs(name)
		if err != nil {
			return nil, "", nil, err
		}
		cur = current(runs)
	}
	st, end := derive(o, cur)
	if end == nil {
		return rec, st, cur, nil
	}
	record := func() error {
		runs, err := b.files.runs(name)
		if err != nil {
			return err
		}
		if now := current(runs); now == nil || now.ID != cur.ID {
			return nil // recorded meanwhile
		}
		reason := end.reason
		if end.status == fleet.RunCompleted {
			reason += b.recordChange(ctx, o, rec, *cur)
		}
		return b.endRun(ctx, name, *cur, end.status, reason)
	}
	if locked {
		err = record()
	} else {
		err = b.files.withAgentLock(ctx, name, record)
	}
	return rec, st, nil, err
}

// endRun records the end of a run and moves its matrix task on (REVIEW when
// completed, else BLOCKED). The caller holds the agent's lock.
func (b *Backend) endRun(ctx context.Context, name string, r runLine, status, reason string) error {
	now := b.now()
	r.Status, r.ExitReason, r.CompletedAt = status, reason, &now
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	var errs []error
	if r.TaskID != "" {
		rec := &agentrun.Record{TaskID: r.TaskID, Agent: "@" + name, Status: status, Reason: reason}
		if err := agentrun.FinishTask(context.WithoutCancel(ctx), b.ws, rec, "", now); err != nil {
			errs = append(errs, fmt.Errorf("move task %s on: %w", r.TaskID, err))
		} else {
			r.ExitReason += "; task " + r.TaskID + " is " + rec.StatusAfter
		}
	}
	if _, err := statefile.AppendLine(b.files.history(name), r); err != nil {
		errs = append(errs, fmt.Errorf("record run %s: %w", r.ID, err))
	}
	return errors.Join(errs...)
}

// Show returns one agent; its status comes from the workspace and, when it
// is up, from its AgentAPI app.
func (b *Backend) Show(ctx context.Context, name string) (fleet.Agent, error) {
	o, rec, st, cur, err := b.observe(ctx, name, true, false)
	if err != nil {
		return fleet.Agent{}, err
	}
	r := roles{b: b}
	role, warning := r.of(ctx, o.ws, rec)
	a := b.view(o, rec, role, st, cur)
	if warning != "" {
		a.Warnings = append(a.Warnings, warning)
	}
	if rec == nil || rec.Spec == "" {
		spec, warning := b.specOf(ctx, o.ws)
		a.Spec = spec
		if warning != "" {
			a.Warnings = append(a.Warnings, warning)
		}
	}
	return a, nil
}

// specOf reads the spec of an agent agentinfra did not create from Coder:
// the value of the prompt parameter (coder.prompt_parameter, "AI Prompt")
// of its workspace's latest build, the prompt its template's agent started
// on. A workspace without that parameter has no spec; one Coder would not
// answer about has none and a warning that says why.
func (b *Backend) specOf(ctx context.Context, ws Workspace) (spec, warning string) {
	params, err := b.client.WorkspaceBuildParameters(ctx, ws.LatestBuild.ID)
	if err != nil {
		return "", fmt.Sprintf("agent %s shows no spec: Coder did not give the parameters of its workspace's build #%d, where the spec is (%q): %v",
			ws.Name, ws.LatestBuild.BuildNumber, b.cfg.PromptParameter, err)
	}
	for _, p := range params {
		if p.Name == b.cfg.PromptParameter {
			return p.Value, ""
		}
	}
	return "", ""
}

// List returns the user's workspaces as agents, from one list call
// (GET /api/v2/workspaces?q=owner:me, with template: for a project): the
// status comes from each workspace's build, agents and latest app status.
func (b *Backend) List(ctx context.Context, filter fleet.ListFilter) ([]fleet.Agent, error) {
	if err := fleet.CheckStatusFilter(filter.Status); err != nil {
		return nil, err
	}
	q := ""
	if filter.Project != "" {
		t, err := b.template(ctx, filter.Project, "project_filter")
		if err != nil {
			return nil, err
		}
		q = "template:" + t.Name
	}
	resp, err := b.client.ListWorkspaces(ctx, q)
	if err != nil {
		return nil, fleetError(err)
	}
	r := roles{b: b}
	out := []fleet.Agent{}
	hosts := b.askHosts(ctx, resp.Workspaces)
	for _, ws := range resp.Workspaces {
		b.remember(ws)
		o := observation{ws: ws, slug: b.cfg.AppSlug}
		if ha, ok := hosts[ws.ID]; ok {
			o.supervised, o.host = true, ha
		}
		rec, st, cur, err := b.settle(ctx, o, false)
		if err != nil {
			return nil, err
		}
		if filter.Status != "" && string(st) != filter.Status {
			continue
		}
		role, warning := r.of(ctx, ws, rec)
		a := b.view(o, rec, role, st, cur)
		if warning != "" {
			a.Warnings = append(a.Warnings, warning)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// Delete deletes the agent's workspace (a build with transition delete;
// Coder destroys it, and the agent shows deleting until it is gone) and
// archives agentinfra's record and history. force is not needed: Coder
// keeps no uncommitted work apart from the workspace. A delete while one is
// under way (sent by agentinfra or in Coder) sends nothing and answers 409
// with the build in flight; a failed delete can be tried again.
func (b *Backend) Delete(ctx context.Context, name string, _ bool) (fleet.DeleteResult, error) {
	o, _, _, cur, err := b.observe(ctx, name, false, false)
	if err != nil {
		return fleet.DeleteResult{}, err
	}
	res := fleet.DeleteResult{Name: o.ws.Name, WorkspaceID: o.ws.ID}
	if lb := o.ws.LatestBuild; deleteInFlight(lb) {
		// A second delete build would only be refused (or, once the
		// first ended, find nothing): the one under way is the answer.
		return res, &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf(
			"agent %s is already being deleted: Coder's delete build #%d, started %s by %s, is %s; nothing more was sent: the agent is gone once Coder has destroyed its workspace",
			o.ws.Name, lb.BuildNumber, lb.CreatedAt.UTC().Format(time.RFC3339), lb.InitiatorName, lb.Status)}
	}
	if _, err := b.client.CreateBuild(ctx, o.ws.ID, TransitionDelete); err != nil {
		if KindOf(err) == KindConflict {
			return res, &agenterr.Error{Kind: agenterr.Conflict, Err: err, Reason: fmt.Sprintf(
				"agent %s's workspace has a build in progress (%s): wait until it ends and delete again", o.ws.Name, o.ws.LatestBuild.Status)}
		}
		return res, fleetError(err)
	}
	err = b.files.withAgentLock(ctx, o.ws.Name, func() error {
		if cur != nil {
			runs, err := b.files.runs(o.ws.Name)
			if err != nil {
				return err
			}
			if c := current(runs); c != nil && c.ID == cur.ID {
				if err := b.endRun(ctx, o.ws.Name, *c, fleet.RunStopped, "stopped: the agent was deleted"); err != nil {
					return err
				}
			}
		}
		dst, err := b.files.archive(o.ws.Name, b.now())
		res.ArchivedTo = dst
		return err
	})
	return res, err
}

// deleteInFlight says whether a workspace's latest build is a delete that
// has not failed or been canceled: queued, running, or done (the workspace
// about to disappear).
func deleteInFlight(lb WorkspaceBuild) bool {
	if lb.Transition != TransitionDelete {
		return false
	}
	switch lb.Job.Status {
	case JobPending, JobRunning, JobSucceeded:
		return true
	}
	return false
}
