package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/store"
)

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
	d := &deletion{f: f, name: name, force: force, a: a,
		res: fleet.DeleteResult{Name: a.Name, WorkspaceID: a.Workspace.ID, Branch: a.Workspace.Branch}}
	for _, step := range []func(context.Context) error{
		d.refuseUncommitted,
		func(ctx context.Context) error { return d.stopRun(ctx, r) },
		d.markDeleting, d.removeWorktree, d.keepBranch, d.archive,
	} {
		if err := step(ctx); err != nil {
			return d.res, err
		}
	}
	f.bus().Publish(events.Event{Kind: events.AgentDeleted, Root: f.ws.Root, Agent: fleet.Key(name)})
	return d.res, nil
}

// deletion is one Delete as far as it got.
type deletion struct {
	f     *Fleet
	name  string
	force bool
	a     *agentRecord
	repo  string // the project's repository, which holds the worktree
	res   fleet.DeleteResult
}

// refuseUncommitted refuses to delete an agent whose worktree has
// uncommitted changes (unless force): they would be lost.
func (d *deletion) refuseUncommitted(ctx context.Context) error {
	if d.force {
		return nil
	}
	a := d.a
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

// stopRun stops the agent's run r, if it has one, and looks again for
// changes the stopped run left.
func (d *deletion) stopRun(ctx context.Context, r *runRecord) error {
	if r == nil || !r.Supervisor.alive() {
		return nil
	}
	if _, err := d.f.Stop(ctx, d.name); err != nil && fleet.CodeOf(err) != fleet.CodeConflict {
		return err
	}
	return d.refuseUncommitted(ctx)
}

// markDeleting records the agent as being deleted by this process (a
// delete killed from here on is finished by the next command), after
// recording a run that ended meanwhile; one that started meanwhile is
// refused.
func (d *deletion) markDeleting(ctx context.Context) error {
	f := d.f
	return statefile.WithLock(ctx, f.p.agentLock(d.name), func() error {
		a, r, err := f.loadAgent(d.name)
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
		d.a = a
		return statefile.WriteJSON(f.p.file(d.name, agentFile), a)
	})
}

// removeWorktree removes the agent's worktree from its project's
// repository.
func (d *deletion) removeWorktree(ctx context.Context) error {
	cfg, _ := fleet.ConfigOf(d.f.ws)
	d.repo = d.f.ws.Root
	if p, perr := cfg.Project(d.a.Project); perr == nil {
		d.repo = p.Path
	}
	if _, serr := os.Stat(d.a.Workspace.Path); serr == nil {
		if err := removeWorktree(ctx, d.repo, d.a.Workspace.Path, d.force); err != nil {
			return agenterr.Unavailablef(err, "could not remove the worktree %s", d.a.Workspace.Path)
		}
	}
	git(ctx, d.repo, "worktree", "prune")
	return nil
}

// keepBranch keeps the agent's branch under a name no agent will want:
// the work stays, and the agent's name is free again, branch and all.
func (d *deletion) keepBranch(ctx context.Context) error {
	if d.a.Workspace.Branch == "" {
		return nil
	}
	kept, err := archiveBranch(ctx, d.repo, d.a.Workspace.Branch, d.f.now())
	if err != nil {
		return agenterr.Unavailablef(err, "could not keep the branch %s under an archive name (run agent delete %s again)", d.a.Workspace.Branch, d.name)
	}
	d.res.ArchivedBranch = kept
	return nil
}

// archive moves the agent's folder to the archive, and its runs with it:
// the name is free for a new agent.
func (d *deletion) archive(ctx context.Context) error {
	f, name, a := d.f, d.name, d.a
	err := statefile.WithLock(ctx, f.p.fleetLock(), func() error {
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
			d.res.ArchivedTo = dst
			if err != nil {
				return err
			}
			return f.withRuns(ctx, func(st *store.Store) error {
				_, err := st.ArchiveRuns(ctx, store.CallerFleet, fleet.Key(name), filepath.Base(dst))
				return err
			})
		})
	})
	if err != nil {
		return errors.Join(fmt.Errorf("archive agent %s", name), err)
	}
	return nil
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
