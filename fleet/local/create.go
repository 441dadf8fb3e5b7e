package local

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/workspace"
)

// Create makes an agent: it checks the input (nothing is written when it is
// refused), takes the name, creates the git worktree on a new branch from
// the project's base branch, runs the configured setup command, and starts
// the first run on the spec at once. A creation that fails after it took
// the name is undone.
func (f *Fleet) Create(ctx context.Context, in fleet.CreateInput) (fleet.Agent, error) {
	c, err := f.planCreate(ctx, in)
	if err != nil {
		return fleet.Agent{}, err
	}
	if err := c.keepDeletedAgentsBranch(ctx); err != nil {
		return fleet.Agent{}, err
	}
	if err := c.takeName(ctx); err != nil {
		return fleet.Agent{}, err
	}
	hook("create:named")
	for _, step := range []func(context.Context) error{c.makeWorktree, c.runSetup, c.markReady} {
		if err := step(ctx); err != nil {
			return fleet.Agent{}, c.undo(ctx, err)
		}
	}
	f.bus().Publish(events.Event{Kind: events.AgentCreated, Root: f.ws.Root, Actor: c.source, Agent: fleet.Key(in.Name)})
	if _, err := f.Start(ctx, fleet.StartInput{Name: in.Name, Text: in.Spec, Source: c.source, Owner: in.Owner}); err != nil {
		ag, _ := f.Show(ctx, in.Name)
		return ag, fmt.Errorf("agent %s was created but its first run did not start: %w", in.Name, err)
	}
	return f.Show(ctx, in.Name)
}

// creation is one Create as decided by planCreate.
type creation struct {
	f      *Fleet
	in     fleet.CreateInput
	cfg    fleet.Config
	proj   fleet.Project
	source string
	// role and cli are the agent's, the input's or the configured default.
	role, cli string
	// base is the branch the worktree wt starts from, on a new branch.
	base, wt, branch string
	a                *agentRecord // the record, once the name is taken
}

// planCreate checks everything a create needs before it writes anything:
// the name (free), the approval mode, the spec (a prompt the CLI can take:
// it is the first run's), the project (a local one), the role, the CLI, the
// source, and that neither the worktree nor the branch exists.
func (f *Fleet) planCreate(ctx context.Context, in fleet.CreateInput) (*creation, error) {
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return nil, err
	}
	if err := fleet.ValidateName(in.Name); err != nil {
		return nil, err
	}
	if err := f.nameFree(ctx, in.Name); err != nil {
		return nil, err
	}
	if err := runner.CheckApproval(in.ApprovalMode); err != nil {
		return nil, agenterr.Invalidf("approval_mode", "%v", err)
	}
	if strings.TrimSpace(in.Spec) == "" {
		return nil, agenterr.Invalidf("spec", "the spec is empty: say what the agent is for (its standing objective), e.g. \"keep the API tests green\"")
	}
	c := &creation{f: f, in: in, cfg: cfg, proj: cfg.Projects[0], role: cmp.Or(in.Role, cfg.Role), cli: cmp.Or(in.CLI, cfg.CLI)}
	if in.Project != "" {
		if c.proj, err = cfg.Project(in.Project); err != nil {
			return nil, err
		}
	}
	if c.proj.Backend != fleet.BackendLocal {
		return nil, agenterr.Unavailablef(nil, "project %s uses the %s backend, but this fleet is local: only local projects can have agents here (for Coder, set fleet.backend: coder in .agent/config.yaml or pass --backend coder; its projects are the Coder templates)", c.proj.Name, c.proj.Backend)
	}
	if err := f.checkRole(ctx, c.proj.RolesFrom(f.ws), c.role); err != nil {
		return nil, err
	}
	if !slices.Contains(runner.CLIs, c.cli) {
		return nil, agenterr.Invalidf("cli", "unknown agent CLI %q: use gemini, claude or codex", c.cli)
	}
	if c.source, err = fleet.CheckSource(in.Source); err != nil {
		return nil, err
	}
	if c.base, err = c.proj.Base(); err != nil {
		return nil, err
	}
	c.wt, c.branch = cfg.WorktreePath(c.proj, in.Name), cfg.BranchPrefix+fleet.Key(in.Name)
	if err := agentcli.CheckPrompt(c.cli, textPrompt(&agentRecord{Name: in.Name, Spec: in.Spec, Workspace: fleet.Workspace{Path: c.wt, Branch: c.branch}}, in.Spec)); err != nil {
		return nil, &agenterr.Error{Kind: agenterr.Invalid, Field: "spec", Reason: "the spec is too long for " + c.cli + ", whose first run it is", Err: err}
	}
	if _, err := os.Stat(c.wt); err == nil {
		return nil, &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Reason: fmt.Sprintf("%s already exists: remove it, pick another name, or set fleet.worktree_dir in .agent/config.yaml", c.wt)}
	}
	if c.branchExists(ctx) && !f.deletedBefore(in.Name) {
		return nil, &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Reason: fmt.Sprintf("branch %s already exists and no deleted agent %s left it: pick another name, or rename the branch", c.branch, in.Name)}
	}
	return c, nil
}

// checkRole refuses a role that rolesWS has no mode for (naming the roles
// there are) or whose mode cannot be read.
func (f *Fleet) checkRole(ctx context.Context, rolesWS *workspace.Workspace, role string) error {
	_, err := loadRole(ctx, rolesWS, role)
	if err == nil {
		return nil
	}
	if !roleMissing(err) {
		// It is there but cannot be read: the cause says why.
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "role", Reason: fmt.Sprintf("role %q cannot be loaded", role), Err: err}
	}
	names := []string{}
	if modes, lerr := listRoles(ctx, rolesWS); lerr == nil {
		for _, m := range modes {
			names = append(names, m.Name)
		}
	}
	msg := fmt.Sprintf("unknown role %q: the roles are %s (.agent/agents/{role}.md)", role, strings.Join(names, ", "))
	if len(names) == 0 {
		msg = fmt.Sprintf("unknown role %q: there are no roles yet; create .agent/agents/%s.md holding the agent's system prompt", role, role)
	}
	return &agenterr.Error{Kind: agenterr.Invalid, Field: "role", Reason: msg}
}

// branchExists says the agent's branch exists in the project.
func (c *creation) branchExists(ctx context.Context) bool {
	_, err := git(ctx, c.proj.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+c.branch)
	return err == nil
}

// keepDeletedAgentsBranch keeps, under an archive name, the branch a
// deleted agent of this name left (a version before the archive names kept
// it as it was): the name is free, and the new agent starts afresh.
func (c *creation) keepDeletedAgentsBranch(ctx context.Context) error {
	if !c.branchExists(ctx) {
		return nil
	}
	kept, err := archiveBranch(ctx, c.proj.Path, c.branch, c.f.now())
	if err != nil {
		return agenterr.Unavailablef(err, "could not keep the branch %s of the deleted agent %s under an archive name", c.branch, c.in.Name)
	}
	fleet.Notify(ctx, fleet.Notice{Agent: c.in.Name, Text: fmt.Sprintf("the branch %s of the deleted agent %s is kept as %s; the new agent starts afresh from %s", c.branch, c.in.Name, kept, c.base)})
	return nil
}

// takeName takes the name: the agent's folder appears whole, with its
// record (state creating, this process its owner), by one rename of a
// folder built aside; a create killed before the rename leaves only that
// folder, which the next create or list removes. From the rename on, a
// create killed before the agent is ready is rolled back by the next
// command that sees it (rollbackCreate): the record says what to undo.
func (c *creation) takeName(ctx context.Context) error {
	f, in := c.f, c.in
	now := f.now()
	owner := refOf(os.Getpid())
	c.a = &agentRecord{
		Name: in.Name, Role: c.role, Project: c.proj.Name, Spec: in.Spec, CLI: c.cli, CreatedAt: now, UpdatedAt: now,
		Workspace: fleet.Workspace{ID: c.wt, Path: c.wt, Branch: c.branch}, Metadata: map[string]any{}, State: stateCreating, Owner: &owner,
		Base: c.base, CreateScope: contain.New("create-" + fleet.Key(in.Name)), ApprovalMode: in.ApprovalMode,
	}
	if err := f.p.ensure(); err != nil {
		return err
	}
	return statefile.WithLock(ctx, f.p.fleetLock(), func() error {
		if err := f.sweepStagingLocked(); err != nil {
			return err
		}
		if err := f.nameTaken(in.Name); err != nil {
			return err
		}
		stage := filepath.Join(f.p.agentsDir(), stagingPrefix+fleet.Key(in.Name))
		if err := os.MkdirAll(filepath.Join(stage, "runs"), 0o755); err != nil {
			return err
		}
		if err := statefile.WriteJSON(filepath.Join(stage, agentFile), c.a); err != nil {
			os.RemoveAll(stage)
			return err
		}
		if err := os.Rename(stage, f.p.agentDir(in.Name)); err != nil {
			os.RemoveAll(stage)
			return err
		}
		return syncDir(f.p.agentsDir())
	})
}

// makeWorktree creates the agent's worktree on its new branch from base.
func (c *creation) makeWorktree(ctx context.Context) error {
	if err := addWorktree(ctx, c.proj.Path, c.wt, c.branch, c.base, c.a.CreateScope.Env()); err != nil {
		return agenterr.Unavailablef(err, "could not create the worktree %s from %s", c.wt, c.base)
	}
	hook("create:worktree")
	return nil
}

// runSetup runs the configured setup command in the worktree, its
// processes marked as the creation's.
func (c *creation) runSetup(ctx context.Context) error {
	if c.cfg.Setup == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", c.cfg.Setup)
	cmd.Dir = c.wt
	cmd.Env = append(os.Environ(), c.a.CreateScope.Env())
	if out, err := cmd.CombinedOutput(); err != nil {
		return agenterr.Unavailablef(err, "the setup command %q failed in %s: %s", c.cfg.Setup, c.wt, lastLines(string(out), 5))
	}
	return nil
}

// markReady records the agent ready: no creation owns it any more.
func (c *creation) markReady(ctx context.Context) error {
	return statefile.WithLock(ctx, c.f.p.agentLock(c.in.Name), func() error {
		c.a.State, c.a.Owner, c.a.CreateScope, c.a.UpdatedAt = stateReady, nil, contain.Scope{}, c.f.now()
		return statefile.WriteJSON(c.f.p.file(c.in.Name, agentFile), c.a)
	})
}

// undo removes what a creation made after it took the name (the worktree,
// the branch, the agent's folder) and returns cause.
func (c *creation) undo(ctx context.Context, cause error) error {
	removeWorktree(context.WithoutCancel(ctx), c.proj.Path, c.wt, true)
	git(context.WithoutCancel(ctx), c.proj.Path, "branch", "-D", c.branch)
	os.RemoveAll(c.f.p.agentDir(c.in.Name))
	return cause
}

// nameFree refuses a name an agent has, in any case. What a killed
// command left under the name (a creation that never finished, a folder
// without its record) is rolled back first, saying so (see current): it
// holds no name.
func (f *Fleet) nameFree(ctx context.Context, name string) error {
	if _, err := os.Stat(f.p.agentDir(name)); err != nil {
		return nil
	}
	if _, _, err := f.current(ctx, name); fleet.CodeOf(err) == fleet.CodeNotFound {
		return nil // settled (a create racing us is refused under the lock)
	}
	return f.nameTaken(name)
}

// nameTaken refuses a name whose folder exists. Called under the fleet
// lock, it settles nothing.
func (f *Fleet) nameTaken(name string) error {
	if _, err := os.Stat(f.p.agentDir(name)); err != nil {
		return nil
	}
	var other agentRecord
	if _, err := statefile.ReadJSON(f.p.file(name, agentFile), &other); err != nil || other.Name == "" {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Reason: fmt.Sprintf("agent %q already exists: the folder %s holds the name, but its record cannot be read: repair its agent.json or move the folder out of the fleet", name, f.p.agentDir(name))}
	}
	return &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Reason: fmt.Sprintf("agent %q already exists (as %s; names are unique regardless of case): pick another name", name, other.Name)}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// deletedBefore says an agent of this name was deleted (its folder is in
// the archive).
func (f *Fleet) deletedBefore(name string) bool {
	matches, _ := filepath.Glob(filepath.Join(f.p.archiveDir(), fleet.Key(name)+"-*"))
	for _, m := range matches {
		// {name}-{20060102T150405...}: not agent papi-2's folder for papi.
		stamp := strings.TrimPrefix(filepath.Base(m), fleet.Key(name)+"-")
		if len(stamp) > 8 && stamp[8] == 'T' && strings.Trim(stamp[:8], "0123456789") == "" {
			return true
		}
	}
	return false
}
