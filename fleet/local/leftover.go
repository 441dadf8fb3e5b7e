package local

// leftover.go deals with what a killed fleet command leaves: a create killed
// before its agent was ready, a start killed before its supervisor was
// recorded, a folder without its record, a temporary file of an atomic
// write. The next command that sees one finishes or rolls it back, under the
// locks the killed command held, and says so (a Notice); see current.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// testHook, when set, runs at the named points of Create and Start where a
// kill leaves something for the next command to settle (the boundary
// tests stop a process there and kill it).
var testHook func(point string)

func hook(point string) {
	if testHook != nil {
		testHook(point)
	}
}

// stagingPrefix starts the name of the folder Create builds an agent's
// folder in, under agents/, before renaming it into place under the fleet
// lock: one seen by a holder of that lock is a killed create's.
const stagingPrefix = ".creating-"

// sweepStagingLocked removes the folders of killed creates. Nothing else
// had happened yet (the name was not taken): silently. Under the fleet lock.
func (f *Fleet) sweepStagingLocked() error {
	ents, err := os.ReadDir(f.p.agentsDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), stagingPrefix) {
			if err := os.RemoveAll(filepath.Join(f.p.agentsDir(), e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncDir makes a rename in dir survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// settleFolder deals with an agent folder that has no agent.json (left by
// an older agentinfra's killed create, or a person's removal of the
// record): it holds the name, though no agent has it. An empty one is
// removed; one with files (a history) is moved to the archive. It returns
// what it did ("" when there was no such folder). Under the fleet lock.
func (f *Fleet) settleFolder(ctx context.Context, name string) (string, error) {
	dir := f.p.agentDir(name)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", nil
	}
	var did string
	err := statefile.WithLock(ctx, f.p.fleetLock(), func() error {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return nil
		}
		if _, err := os.Lstat(f.p.file(name, agentFile)); !errors.Is(err, fs.ErrNotExist) {
			return err // a record now (or one that cannot be looked at)
		}
		if onlyFolders(dir) {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			did = fmt.Sprintf("the folder %s had no agent record (left by a killed agent create) and held the name: removed it", dir)
			return nil
		}
		dst, err := f.archiveFolder(name, "no-record")
		if err != nil {
			return err
		}
		did = fmt.Sprintf("the folder %s had no agent record (agent.json) and held the name: moved it, with what it held, to %s", dir, dst)
		return nil
	})
	if did != "" {
		fleet.Notify(ctx, fleet.Notice{Agent: name, Text: did})
	}
	return did, err
}

// onlyFolders says dir holds nothing but folders (and temporary files of
// atomic writes), at any depth.
func onlyFolders(dir string) bool {
	only := true
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || (!d.IsDir() && !tempFile.MatchString(d.Name())) {
			only = false
			return filepath.SkipAll
		}
		return nil
	})
	return only
}

// archiveFolder moves an agent's folder to the archive, its name stamped
// and tagged, and returns where.
func (f *Fleet) archiveFolder(name, tag string) (string, error) {
	if err := os.MkdirAll(f.p.archiveDir(), 0o755); err != nil {
		return "", err
	}
	dst := fmt.Sprintf("%s/%s-%s", f.p.archiveDir(), fleet.Key(name), f.now().Format("20060102T150405.000000000Z"))
	if tag != "" {
		dst += "-" + tag
	}
	return dst, os.Rename(f.p.agentDir(name), dst)
}

// rollbackCreate undoes the creation of agent name whose creator died
// before the agent was ready: its worktree, its branch (unless it holds
// commits of its own) and its folder go, and the name is free. done says
// the agent is gone (rolled back here or meanwhile). When the rollback
// cannot be completed, the agent is left failed, its error saying what is
// left to remove. Takes the fleet lock, then the agent's.
func (f *Fleet) rollbackCreate(ctx context.Context, name string) (done bool, err error) {
	var note string
	err = statefile.WithLock(ctx, f.p.fleetLock(), func() error {
		return statefile.WithLock(ctx, f.p.agentLock(name), func() error {
			var a agentRecord
			ok, err := statefile.ReadJSON(f.p.file(name, agentFile), &a)
			if err != nil {
				return unreadableRecord(name, f.p.file(name, agentFile), err)
			}
			if !ok {
				done = true // rolled back meanwhile
				return nil
			}
			if a.State != stateCreating || a.Owner == nil || a.Owner.alive() {
				return nil
			}
			did, uerr := f.undoCreation(ctx, &a)
			if uerr != nil {
				a.State, a.Owner, a.UpdatedAt = stateFailed, nil, f.now()
				a.Error = "its creation was interrupted (the process creating it was killed) and could not be rolled back: " + uerr.Error() +
					"; remove what is left by hand, then agent delete " + a.Name
				note = fmt.Sprintf("agent %s's creation was interrupted: %s", a.Name, a.Error)
				return statefile.WriteJSON(f.p.file(name, agentFile), &a)
			}
			if err := os.RemoveAll(f.p.agentDir(name)); err != nil {
				return err
			}
			done = true
			note = fmt.Sprintf("agent %s's creation was interrupted (the process creating it, pid %d, was killed before the agent was ready): rolled back (%s); the name %s is free",
				a.Name, a.Owner.PID, strings.Join(did, ", "), a.Name)
			return nil
		})
	})
	if note != "" {
		fleet.Notify(ctx, fleet.Notice{Agent: name, Text: note})
	}
	return done, err
}

// undoCreation removes what a killed create made: the worktree (git's
// own removal, which touches only a worktree of the repository; a folder
// git no longer knows is removed only when it is empty or a worktree of
// this repository half made) and the branch, when it holds nothing that is
// not in the base branch. It returns what it did.
func (f *Fleet) undoCreation(ctx context.Context, a *agentRecord) ([]string, error) {
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return nil, err
	}
	proj, err := cfg.Project(a.Project)
	if err != nil {
		return nil, fmt.Errorf("its project %s is no longer configured, so its worktree %s and branch %s cannot be checked", a.Project, a.Workspace.Path, a.Workspace.Branch)
	}
	ctx = context.WithoutCancel(ctx) // a rollback is not left half way
	// The creator's git or setup command may still be writing: a SIGKILL
	// of the creator does not reach them.
	a.CreateScope.Kill()
	did := []string{}
	if wt := a.Workspace.Path; wt != "" {
		_, statErr := os.Lstat(wt)
		_ = removeWorktree(ctx, proj.Path, wt, true)
		if _, err := os.Lstat(wt); err == nil {
			if !halfMadeWorktree(ctx, proj.Path, wt) {
				return did, fmt.Errorf("the folder %s is there but is no worktree of %s: left it", wt, proj.Path)
			}
			if err := os.RemoveAll(wt); err != nil {
				return did, err
			}
		}
		if statErr == nil {
			did = append(did, "removed its worktree "+wt)
		}
	}
	_, _ = git(ctx, proj.Path, "worktree", "prune")
	if br := a.Workspace.Branch; br != "" {
		// A git killed while it wrote the branch leaves its lock, which
		// would refuse the deletion (and the name's next creation).
		if common, err := git(ctx, proj.Path, "rev-parse", "--path-format=absolute", "--git-common-dir"); err == nil {
			_ = os.Remove(filepath.Join(common, "refs", "heads", filepath.FromSlash(br)+".lock"))
		}
		if _, err := git(ctx, proj.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+br); err == nil {
			base := a.Base
			if base == "" {
				if base, err = proj.Base(); err != nil {
					return did, err
				}
			}
			if _, err := git(ctx, proj.Path, "merge-base", "--is-ancestor", "refs/heads/"+br, base); err != nil {
				did = append(did, "kept its branch "+br+", which holds commits that "+base+" does not")
			} else if _, err := git(ctx, proj.Path, "branch", "-D", br); err != nil {
				return did, fmt.Errorf("delete its branch %s: %w", br, err)
			} else {
				did = append(did, "deleted its branch "+br)
			}
		}
	}
	if len(did) == 0 {
		did = append(did, "it had no worktree or branch yet")
	}
	return did, nil
}

// halfMadeWorktree says the folder wt is empty, or is a worktree of repo
// that git no longer lists (its .git file points into repo's worktrees).
func halfMadeWorktree(ctx context.Context, repo, wt string) bool {
	ents, err := os.ReadDir(wt)
	if err == nil && len(ents) == 0 {
		return true
	}
	b, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		return false
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return false
	}
	common, err := git(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(filepath.Join(common, "worktrees"), filepath.Clean(gitdir))
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// rollbackStartLocked undoes a start killed before its supervisor was
// recorded (run.json with no supervisor, seen under the agent lock, which
// the start held): its task is given back, TODO again, unless the agent
// held it before; the run's files go (it never ran: its ID is not in the
// history); the agent is idle. Under the agent lock.
func (f *Fleet) rollbackStartLocked(ctx context.Context, a *agentRecord, r *runRecord) error {
	did := "removed it"
	if r.TaskID != "" && !r.HeldBefore {
		res, err := tasksvc.Release(context.WithoutCancel(ctx), f.ws, r.TaskID, "@"+a.Name, tasksvc.ActorAgentinfra, f.now())
		switch {
		case err != nil:
			return fmt.Errorf("give task %s back from agent %s's killed start: %w", r.TaskID, a.Name, err)
		case len(res.Changed) > 0:
			did = fmt.Sprintf("gave task %s back (%s again, no agent) and removed the run", r.TaskID, res.After.Status)
		default:
			did = fmt.Sprintf("removed the run (task %s was not claimed by it)", r.TaskID)
		}
	}
	if runID(a.Name).MatchString(r.ID) {
		if done, _ := f.lastRun(ctx, a.Name, r.ID); done.ID == "" {
			dir := f.p.runsDir(a.Name)
			for _, suffix := range []string{".prompt.md", ".system.md", ".supervisor.log"} {
				_ = os.Remove(filepath.Join(dir, r.ID+suffix))
			}
		}
	}
	if err := os.Remove(f.p.file(a.Name, runFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	what := "run " + r.ID
	if r.Summary != "" {
		what += " (" + r.Summary + ")"
	}
	fleet.Notify(ctx, fleet.Notice{Agent: a.Name, Text: fmt.Sprintf("agent %s's start of %s was killed before the run began: %s; the agent is idle: start it again",
		a.Name, what, did)})
	return nil
}

// runID matches the IDs of agent name's runs ({name}-{n}).
func runID(name string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(fleet.Key(name)) + `-[0-9]+$`)
}

// tempFile matches the temporary files of atomic writes (renameio's
// ".NAME" plus digits) of an agent's records.
var tempFile = regexp.MustCompile(`^\.(agent|run)\.json[0-9]+$`)

// sweepTemps removes the temporary files a process killed in the middle
// of writing an agent's record left in its folder. They are only looked
// for here (one read of the folder); removed under the agent lock, which
// every writer of those records holds.
func (f *Fleet) sweepTemps(ctx context.Context, name string) error {
	if !hasTemp(f.p.agentDir(name)) {
		return nil
	}
	return statefile.WithLock(ctx, f.p.agentLock(name), func() error { return f.sweepTempsLocked(name) })
}

// hasTemp says dir holds a temporary file of a record's write: one read of
// the folder's names, unsorted (List calls it for every agent).
func hasTemp(dir string) bool {
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if strings.HasPrefix(n, ".") && tempFile.MatchString(n) {
			return true
		}
	}
	return false
}

// sweepTempsLocked is sweepTemps under the agent lock.
func (f *Fleet) sweepTempsLocked(name string) error {
	dir := f.p.agentDir(name)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // gone: nothing to sweep
	}
	for _, e := range ents {
		if tempFile.MatchString(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
