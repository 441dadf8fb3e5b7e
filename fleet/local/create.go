package local

import (
	"context"
	"errors"
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
	"github.com/agentinfra/agentinfra/store"
)

// Create makes an agent: it checks the input (nothing is written when it is
// refused), takes the name, creates the git worktree on a new branch from
// the project's base branch, runs the configured setup command, and starts
// the first run on the spec at once.
func (f *Fleet) Create(ctx context.Context, in fleet.CreateInput) (fleet.Agent, error) {
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return fleet.Agent{}, err
	}
	if err := fleet.ValidateName(in.Name); err != nil {
		return fleet.Agent{}, err
	}
	if err := f.nameFree(ctx, in.Name); err != nil {
		return fleet.Agent{}, err
	}
	if err := runner.CheckApproval(in.ApprovalMode); err != nil {
		return fleet.Agent{}, agenterr.Invalidf("approval_mode", "%v", err)
	}
	if strings.TrimSpace(in.Spec) == "" {
		return fleet.Agent{}, agenterr.Invalidf("spec", "the spec is empty: say what the agent is for (its standing objective), e.g. \"keep the API tests green\"")
	}
	proj := cfg.Projects[0]
	if in.Project != "" {
		if proj, err = cfg.Project(in.Project); err != nil {
			return fleet.Agent{}, err
		}
	}
	if proj.Backend != fleet.BackendLocal {
		return fleet.Agent{}, agenterr.Unavailablef(nil, "project %s uses the %s backend, but this fleet is local: only local projects can have agents here (for Coder, set fleet.backend: coder in .agent/config.yaml or pass --backend coder; its projects are the Coder templates)", proj.Name, proj.Backend)
	}
	role := in.Role
	if role == "" {
		role = cfg.Role
	}
	rolesWS := proj.RolesFrom(f.ws)
	if _, err := loadRole(ctx, rolesWS, role); err != nil {
		names := []string{}
		if modes, lerr := listRoles(ctx, rolesWS); lerr == nil {
			for _, m := range modes {
				names = append(names, m.Name)
			}
		}
		if !roleMissing(err) {
			// It is there but cannot be read: the cause says why.
			return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "role", Reason: fmt.Sprintf("role %q cannot be loaded", role), Err: err}
		}
		msg := fmt.Sprintf("unknown role %q: the roles are %s (.agent/agents/{role}.md)", role, strings.Join(names, ", "))
		if len(names) == 0 {
			msg = fmt.Sprintf("unknown role %q: there are no roles yet; create .agent/agents/%s.md holding the agent's system prompt", role, role)
		}
		return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "role", Reason: msg}
	}
	cli := in.CLI
	if cli == "" {
		cli = cfg.CLI
	}
	if !slices.Contains(runner.CLIs, cli) {
		return fleet.Agent{}, agenterr.Invalidf("cli", "unknown agent CLI %q: use gemini, claude or codex", cli)
	}
	source, err := fleet.CheckSource(in.Source)
	if err != nil {
		return fleet.Agent{}, err
	}
	base, err := proj.Base()
	if err != nil {
		return fleet.Agent{}, err
	}
	wt := cfg.WorktreePath(proj, in.Name)
	branch := cfg.BranchPrefix + fleet.Key(in.Name)
	// The spec is the first run's prompt: one the CLI cannot take is
	// refused before anything is made.
	if err := agentcli.CheckPrompt(cli, textPrompt(&agentRecord{Name: in.Name, Spec: in.Spec, Workspace: fleet.Workspace{Path: wt, Branch: branch}}, in.Spec)); err != nil {
		return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "spec", Reason: "the spec is too long for " + cli + ", whose first run it is", Err: err}
	}
	if _, err := os.Stat(wt); err == nil {
		return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Reason: fmt.Sprintf("%s already exists: remove it, pick another name, or set fleet.worktree_dir in .agent/config.yaml", wt)}
	}
	if _, err := git(ctx, proj.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		if !f.deletedBefore(in.Name) {
			return fleet.Agent{}, &agenterr.Error{Kind: agenterr.Conflict, Field: "name", Reason: fmt.Sprintf("branch %s already exists and no deleted agent %s left it: pick another name, or rename the branch", branch, in.Name)}
		}
		// A deleted agent's branch that a version before the archive
		// names kept: kept the same way now, and the name is free.
		kept, err := archiveBranch(ctx, proj.Path, branch, f.now())
		if err != nil {
			return fleet.Agent{}, agenterr.Unavailablef(err, "could not keep the branch %s of the deleted agent %s under an archive name", branch, in.Name)
		}
		fleet.Notify(ctx, fleet.Notice{Agent: in.Name, Text: fmt.Sprintf("the branch %s of the deleted agent %s is kept as %s; the new agent starts afresh from %s", branch, in.Name, kept, base)})
	}

	// Take the name: the agent's folder appears whole, with its record
	// (state creating, this process its owner), by one rename of a folder
	// built aside; a create killed before the rename leaves only that
	// folder, which the next create or list removes. From the rename on, a
	// create killed before the agent is ready is rolled back by the next
	// command that sees it (rollbackCreate): the record says what to undo.
	now := f.now()
	owner := refOf(os.Getpid())
	a := &agentRecord{
		Name: in.Name, Role: role, Project: proj.Name, Spec: in.Spec, CLI: cli, CreatedAt: now, UpdatedAt: now,
		Workspace: fleet.Workspace{ID: wt, Path: wt, Branch: branch}, Metadata: map[string]any{}, State: stateCreating, Owner: &owner,
		Base: base, CreateScope: contain.New("create-" + fleet.Key(in.Name)), ApprovalMode: in.ApprovalMode,
	}
	if err := f.p.ensure(); err != nil {
		return fleet.Agent{}, err
	}
	err = statefile.WithLock(ctx, f.p.fleetLock(), func() error {
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
		if err := statefile.WriteJSON(filepath.Join(stage, agentFile), a); err != nil {
			os.RemoveAll(stage)
			return err
		}
		if err := os.Rename(stage, f.p.agentDir(in.Name)); err != nil {
			os.RemoveAll(stage)
			return err
		}
		return syncDir(f.p.agentsDir())
	})
	if err != nil {
		return fleet.Agent{}, err
	}
	undo := func(cause error) (fleet.Agent, error) {
		removeWorktree(context.WithoutCancel(ctx), proj.Path, wt, true)
		git(context.WithoutCancel(ctx), proj.Path, "branch", "-D", branch)
		os.RemoveAll(f.p.agentDir(in.Name))
		return fleet.Agent{}, cause
	}
	hook("create:named")
	if err := addWorktree(ctx, proj.Path, wt, branch, base, a.CreateScope.Env()); err != nil {
		return undo(agenterr.Unavailablef(err, "could not create the worktree %s from %s", wt, base))
	}
	hook("create:worktree")
	if cfg.Setup != "" {
		cmd := exec.CommandContext(ctx, "sh", "-c", cfg.Setup)
		cmd.Dir = wt
		cmd.Env = append(os.Environ(), a.CreateScope.Env())
		if out, err := cmd.CombinedOutput(); err != nil {
			return undo(agenterr.Unavailablef(err, "the setup command %q failed in %s: %s", cfg.Setup, wt, lastLines(string(out), 5)))
		}
	}
	err = statefile.WithLock(ctx, f.p.agentLock(in.Name), func() error {
		a.State, a.Owner, a.CreateScope, a.UpdatedAt = stateReady, nil, contain.Scope{}, f.now()
		return statefile.WriteJSON(f.p.file(in.Name, agentFile), a)
	})
	if err != nil {
		return undo(err)
	}
	f.bus().Publish(events.Event{Kind: events.AgentCreated, Root: f.ws.Root, Actor: source, Agent: fleet.Key(in.Name)})
	if _, err := f.Start(ctx, fleet.StartInput{Name: in.Name, Text: in.Spec, Source: source, Owner: in.Owner}); err != nil {
		ag, _ := f.Show(ctx, in.Name)
		return ag, fmt.Errorf("agent %s was created but its first run did not start: %w", in.Name, err)
	}
	return f.Show(ctx, in.Name)
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

// Delete stops the agent's run, removes its worktree (refusing one with
// uncommitted changes unless force), keeps its branch under an archive name
// (archiveBranch: the name is free for a new agent), and moves its folder
// (the history) to .agent/fleet/archive/.
func (f *Fleet) Delete(ctx context.Context, name string, force bool) (fleet.DeleteResult, error) {
	a, r, err := f.current(ctx, name)
	if errors.Is(err, errUnreadableRecord) && force {
		return f.deleteUnreadable(ctx, name)
	}
	if err != nil {
		return fleet.DeleteResult{}, err
	}
	res := fleet.DeleteResult{Name: a.Name, WorkspaceID: a.Workspace.ID, Branch: a.Workspace.Branch}
	dirty := func() error {
		if force {
			return nil
		}
		changes, err := uncommitted(ctx, a.Workspace.Path)
		if err != nil {
			if _, serr := os.Stat(a.Workspace.Path); serr != nil {
				return nil // the worktree is gone already
			}
			return err
		}
		if len(changes) > 0 {
			return &agenterr.Error{Kind: agenterr.Conflict, Override: "force", Reason: fmt.Sprintf("agent %s has %d uncommitted change(s) in %s (%s): commit or discard them first",
				a.Name, len(changes), a.Workspace.Path, lastLines(strings.Join(changes, "\n"), 3))}
		}
		return nil
	}
	if err := dirty(); err != nil {
		return res, err
	}
	if r != nil && r.Supervisor.alive() {
		if _, err := f.Stop(ctx, name); err != nil && fleet.CodeOf(err) != fleet.CodeConflict {
			return res, err
		}
		if err := dirty(); err != nil { // the stopped run may have left changes
			return res, err
		}
	}
	err = statefile.WithLock(ctx, f.p.agentLock(name), func() error {
		a, r, err = f.loadAgent(name)
		if err != nil {
			return err
		}
		if r != nil && r.Supervisor.alive() {
			return agenterr.Conflictf("agent %s started a new run while it was being deleted: stop it and try again", a.Name)
		}
		if r != nil {
			if err := f.reapLocked(ctx, a, r); err != nil {
				return err
			}
		}
		owner := refOf(os.Getpid())
		a.State, a.Owner, a.UpdatedAt = stateDeleting, &owner, f.now()
		return statefile.WriteJSON(f.p.file(name, agentFile), a)
	})
	if err != nil {
		return res, err
	}
	cfg, _ := fleet.ConfigOf(f.ws)
	repo := f.ws.Root
	if p, perr := cfg.Project(a.Project); perr == nil {
		repo = p.Path
	}
	if _, serr := os.Stat(a.Workspace.Path); serr == nil {
		if err := removeWorktree(ctx, repo, a.Workspace.Path, force); err != nil {
			return res, agenterr.Unavailablef(err, "could not remove the worktree %s", a.Workspace.Path)
		}
	}
	git(ctx, repo, "worktree", "prune")
	if a.Workspace.Branch != "" {
		// The work stays, under a name no agent will want: the agent's
		// name is free again, branch and all.
		kept, err := archiveBranch(ctx, repo, a.Workspace.Branch, f.now())
		if err != nil {
			return res, agenterr.Unavailablef(err, "could not keep the branch %s under an archive name (run agent delete %s again)", a.Workspace.Branch, name)
		}
		res.ArchivedBranch = kept
	}
	err = statefile.WithLock(ctx, f.p.fleetLock(), func() error {
		return statefile.WithLock(ctx, f.p.agentLock(name), func() error { // the records are written under it
			a.State = "deleted"
			a.Owner = nil
			if err := statefile.WriteJSON(f.p.file(name, agentFile), a); err != nil {
				return err
			}
			if err := f.sweepTempsLocked(name); err != nil {
				return err
			}
			dst, err := f.archiveFolder(name, "")
			res.ArchivedTo = dst
			if err != nil {
				return err
			}
			// Its runs go to the archive too: the name is free for a new agent.
			return f.withRuns(ctx, func(st *store.Store) error {
				_, err := st.ArchiveRuns(ctx, store.CallerFleet, fleet.Key(name), filepath.Base(dst))
				return err
			})
		})
	})
	if err != nil {
		return res, errors.Join(fmt.Errorf("archive agent %s", name), err)
	}
	f.bus().Publish(events.Event{Kind: events.AgentDeleted, Root: f.ws.Root, Agent: fleet.Key(name)})
	return res, nil
}

// deleteUnreadable archives the folder of an agent whose record cannot be
// read (delete --force). Only the record names its worktree: the worktree
// at the place an agent of that name has in a configured project, on its
// branch, is removed (its branch kept, as delete does); anything else is
// left as it is, and the notice says so.
func (f *Fleet) deleteUnreadable(ctx context.Context, name string) (fleet.DeleteResult, error) {
	res := fleet.DeleteResult{Name: name}
	err := statefile.WithLock(ctx, f.p.fleetLock(), func() error {
		return statefile.WithLock(ctx, f.p.agentLock(name), func() error {
			if _, _, err := f.loadAgent(name); !errors.Is(err, errUnreadableRecord) {
				if err == nil {
					return agenterr.Conflictf("agent %s's record was repaired meanwhile: delete it again", name)
				}
				return err
			}
			if repo, wt, branch := f.findWorktree(ctx, name); wt != "" {
				if err := removeWorktree(ctx, repo, wt, true); err != nil {
					return agenterr.Unavailablef(err, "could not remove the worktree %s", wt)
				}
				res.WorkspaceID, res.Branch = wt, branch
				kept, err := archiveBranch(ctx, repo, branch, f.now())
				if err != nil {
					return agenterr.Unavailablef(err, "could not keep the branch %s under an archive name", branch)
				}
				res.ArchivedBranch = kept
			}
			dst, err := f.archiveFolder(name, "unreadable")
			res.ArchivedTo = dst
			return err
		})
	})
	if err != nil {
		return res, err
	}
	what := "no worktree of an agent " + name + " was found where the configuration puts one: if it had one elsewhere, see git worktree list"
	if res.WorkspaceID != "" {
		what = "its worktree " + res.WorkspaceID + " (branch " + res.Branch + ", kept as " + res.ArchivedBranch + ") was found where the configuration puts it, and removed"
	}
	fleet.Notify(ctx, fleet.Notice{Agent: name, Text: fmt.Sprintf("agent %s's record could not be read: %s", name, what)})
	f.bus().Publish(events.Event{Kind: events.AgentDeleted, Root: f.ws.Root, Agent: fleet.Key(name)})
	return res, nil
}

// findWorktree finds the worktree an agent called name has in a local
// project: at the configured place, on the agent's branch ("" if none).
func (f *Fleet) findWorktree(ctx context.Context, name string) (repo, path, branch string) {
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return "", "", ""
	}
	branch = cfg.BranchPrefix + fleet.Key(name)
	for _, p := range cfg.Projects {
		if p.Backend != fleet.BackendLocal {
			continue
		}
		wt := cfg.WorktreePath(p, name)
		out, err := git(ctx, p.Path, "worktree", "list", "--porcelain")
		if err != nil {
			continue
		}
		for _, block := range strings.Split(out, "\n\n") {
			if strings.Contains(block+"\n", "worktree "+wt+"\n") && strings.Contains(block+"\n", "branch refs/heads/"+branch+"\n") {
				return p.Path, wt, branch
			}
		}
	}
	return "", "", ""
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
