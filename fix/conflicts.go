package fix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Finishing a merge's conflicts (issue 32): --fix=ours ID and --fix=theirs ID
// keep one side of the conflict that holds task ID; --fix=renumber keeps
// both rows of a conflict of one new ID on both sides, theirs with the next
// free ID, and renames theirs' task folder to it.

// Finished is one conflict finished.
type Finished struct {
	Line int      `json:"line"` // its <<<<<<< line, in the file as it was
	IDs  []string `json:"ids"`
	Kept string   `json:"kept"` // ours, theirs or both
	// Renumbered says what theirs' row became, with --fix=renumber.
	Renumbered *Renumbered `json:"renumbered,omitempty"`
}

// Renumbered is theirs' row of an ID added on both sides, given a new ID.
type Renumbered struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Folder is theirs' task folder under its new name (workspace-relative);
	// "" when none was renamed (Note says why).
	Folder string `json:"folder,omitempty"`
	Note   string `json:"note,omitempty"`
	old    string // the folder's path before, absolute
}

// conflictMode reports whether m finishes conflicts.
func conflictMode(m Mode) bool { return m == Ours || m == Theirs || m == Renumber }

// runConflicts is Run for Ours, Theirs and Renumber.
func runConflicts(ctx context.Context, ws *workspace.Workspace, o Options, rep Report, st *matrix.Store) (Report, error) {
	doc, err := st.Load(ctx)
	if err != nil {
		return Report{}, err
	}
	before := doc.Bytes()
	after, done, err := planConflicts(ctx, ws, o, st.Vocab, before)
	if err != nil {
		return Report{}, err
	}
	if !o.DryRun {
		doc, err = st.FinishConflicts(ctx, func(d *matrix.Doc) error {
			before = append([]byte(nil), d.Bytes()...)
			if after, done, err = planConflicts(ctx, ws, o, st.Vocab, before); err != nil {
				return err
			}
			d.ReplaceBytes(after)
			return nil
		}, func(d *matrix.Doc, err error) error {
			if err != nil {
				return nil
			}
			return renameFolders(ws, done)
		})
		if err != nil {
			return Report{}, err
		}
	} else {
		doc = matrix.ParseWith(after, st.Vocab)
	}
	rep.Conflicts = done
	if string(after) != string(before) {
		fc := FileChange{Path: rep.Matrix, before: string(before), after: string(after)}
		if o.DryRun {
			if fc.Diff, err = textdiff.Diff(fc.Path, fc.before, fc.after); err != nil {
				return Report{}, err
			}
		}
		rep.Files = append(rep.Files, fc)
	}
	rep.Rows, rep.NotFixed, rep.Files = orEmpty(rep.Rows), orEmpty(rep.NotFixed), orEmpty(rep.Files)
	view, line := matrix.ConflictView(doc.Bytes())
	vdoc := matrix.ParseWith(view, st.Vocab)
	rep.Tasks = len(vdoc.Tasks())
	rep.Remaining = orEmpty(tasksvc.Validate(ws, vdoc, o.File, o.Getenv))
	for i := range rep.Remaining {
		if rep.Remaining[i].File == o.File {
			rep.Remaining[i].Line = line(rep.Remaining[i].Line)
		}
	}
	if cs := matrix.Conflicts(doc.Bytes(), st.Vocab); len(cs) > 0 {
		for _, d := range matrix.ConflictDiagnostics(cs) {
			d.File = o.File
			rep.Remaining = append(rep.Remaining, d)
		}
		matrix.SortDiagnostics(rep.Remaining)
	}
	return rep, nil
}

// ErrNoConflict is a --fix=ours|theirs|renumber for a conflict the matrix does not hold.
var ErrNoConflict = agenterr.New(agenterr.NotFound, "no such merge conflict in the matrix")

// planConflicts returns src with the conflicts o names finished, and what
// was done.
func planConflicts(ctx context.Context, ws *workspace.Workspace, o Options, vocab *matrix.Vocabulary, src []byte) ([]byte, []Finished, error) {
	cs := matrix.Conflicts(src, vocab)
	if len(cs) == 0 {
		return nil, nil, &agenterr.Error{Kind: agenterr.NotFound, Err: ErrNoConflict, Reason: "the matrix holds no merge conflict: nothing to finish (agentinfra validate checks it)"}
	}
	var conflicted []string
	for _, c := range cs {
		conflicted = append(conflicted, c.IDs()...)
	}
	// The conflict of each ID named.
	chosen := map[int]bool{} // by <<<<<<< line
	for _, id := range o.IDs {
		found := false
		for _, c := range cs {
			if slices.Contains(c.IDs(), id) {
				chosen[c.Line], found = true, true
			}
		}
		if !found {
			e := &agenterr.Error{Kind: agenterr.NotFound, Err: ErrNoConflict, Field: "id", What: "conflicted task", Value: id, Suggestions: matrix.Suggest(id, conflicted)}
			e.Reason = fmt.Sprintf("no merge conflict holds task %s; the conflicted tasks are: %s", id, strings.Join(conflicted, ", "))
			if len(conflicted) == 0 {
				e.Reason = fmt.Sprintf("no merge conflict holds task %s; the matrix's conflicts hold no task row: edit them by hand", id)
			}
			return nil, nil, e
		}
	}
	if o.Mode == Renumber && len(o.IDs) == 0 {
		for _, c := range cs {
			if c.AddedBoth {
				chosen[c.Line] = true
			}
		}
		if len(chosen) == 0 {
			return nil, nil, &agenterr.Error{Kind: agenterr.NotFound, Err: ErrNoConflict, Reason: "no conflict of the matrix is one task ID added on both sides; finish the others with --fix=ours ID or --fix=theirs ID (agentinfra validate names them)"}
		}
	}
	var done []Finished
	var renumber *renumberer
	if o.Mode == Renumber {
		var err error
		if renumber, err = newRenumberer(ctx, ws, vocab, src, o); err != nil {
			return nil, nil, err
		}
	}
	var ferr error
	out := matrix.ResolveConflicts(src, func(c matrix.ConflictBlock) (string, bool) {
		if !chosen[c.Line] || ferr != nil {
			return "", false
		}
		var conflict matrix.Conflict
		for _, x := range cs {
			if x.Line == c.Line {
				conflict = x
			}
		}
		f := Finished{Line: c.Line, IDs: orEmpty(conflict.IDs()), Kept: string(o.Mode)}
		switch o.Mode {
		case Ours:
			done = append(done, f)
			return c.Ours, true
		case Theirs:
			done = append(done, f)
			return c.Theirs, true
		}
		text, rn, err := renumber.finish(conflict, o.IDs)
		if err != nil {
			ferr = err
			return "", false
		}
		f.Kept, f.Renumbered = "both", rn
		done = append(done, f)
		return text, true
	})
	if ferr != nil {
		return nil, nil, ferr
	}
	return out, done, nil
}

// renumberer gives theirs' rows of IDs added on both sides new IDs.
type renumberer struct {
	ws    *workspace.Workspace
	doc   *matrix.Doc // the matrix with both sides of every conflict: every ID in use
	o     Options
	taken map[string]bool
	// elsewhere are the IDs of the other branches and worktrees (read at
	// the first new ID)
	elsewhere map[string]bool
	ctx       context.Context
}

func newRenumberer(ctx context.Context, ws *workspace.Workspace, vocab *matrix.Vocabulary, src []byte, o Options) (*renumberer, error) {
	both := matrix.ResolveConflicts(src, func(c matrix.ConflictBlock) (string, bool) { return c.Ours + c.Theirs, true })
	return &renumberer{ws: ws, doc: matrix.ParseWith(both, vocab), o: o, taken: map[string]bool{}, ctx: ctx}, nil
}

// finish keeps both rows of c's ID (the one of ids it holds, or its only
// one): ours as it is, theirs under a new ID.
func (r *renumberer) finish(c matrix.Conflict, ids []string) (string, *Renumbered, error) {
	var id string
	for _, x := range c.IDs() {
		_, inO := c.Row(x, true)
		_, inT := c.Row(x, false)
		if inO && inT && (len(ids) == 0 || slices.Contains(ids, x)) {
			id = x
			break
		}
	}
	if id == "" || !c.AddedBoth {
		// A row both sides changed is one task: two rows of it would be a
		// task twice.
		return "", nil, &agenterr.Error{Kind: agenterr.Invalid, Field: "id", Reason: fmt.Sprintf(
			"the conflict on line %d is not one ID added on both sides as two tasks (it holds %s, changed on both sides), so there are no two tasks to keep: keep one side with --fix=ours ID or --fix=theirs ID",
			c.Line, strings.Join(c.IDs(), ", "))}
	}
	newID, err := r.doc.NewID(r.o.Now, func(x string) bool {
		if r.taken[x] {
			return true
		}
		if dir, _ := tasksvc.Folder(r.ws, r.doc, x); dir != "" {
			return true
		}
		if r.elsewhere == nil {
			r.elsewhere = tasksvc.IDsElsewhere(r.ctx, r.ws)
		}
		return r.elsewhere[x]
	}, nil)
	if err != nil {
		return "", nil, err
	}
	r.taken[newID] = true
	text, err := c.Renumbered(id, newID)
	if err != nil {
		return "", nil, err
	}
	rn := &Renumbered{From: id, To: newID}
	ours, _ := c.Row(id, true)
	theirs, _ := c.Row(id, false)
	dir, note := theirsFolder(r.ws, r.doc, id, ours.Cell(matrix.ColDescription), theirs.Cell(matrix.ColDescription))
	if dir == "" {
		rn.Note = note
		return text, rn, nil
	}
	name := newID + strings.TrimPrefix(filepath.Base(dir), id)
	rn.old, rn.Folder = dir, r.ws.RelPath(filepath.Join(filepath.Dir(dir), name))
	return text, rn, nil
}

// theirsFolder finds the task folder of theirs' row of id: the one named
// after theirs' description (task create's slug), or, of two folders, the
// one that is not named after ours'. "" and why when it cannot tell.
func theirsFolder(ws *workspace.Workspace, d *matrix.Doc, id, oursDesc, theirsDesc string) (string, string) {
	dirs := tasksvc.Folders(ws, d, id, false)
	if len(dirs) == 0 {
		return "", "no task folder of " + id + " to rename"
	}
	want := id + "_" + tasksvc.Slugify(theirsDesc)
	for _, d := range dirs {
		if filepath.Base(d) == want {
			return d, ""
		}
	}
	if len(dirs) == 2 {
		ours := id + "_" + tasksvc.Slugify(oursDesc)
		for i, d := range dirs {
			if filepath.Base(d) == ours {
				return dirs[1-i], ""
			}
		}
	}
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = ws.RelPath(d)
	}
	return "", fmt.Sprintf("could not tell which task folder of %s is theirs (%s); rename it by hand", id, strings.Join(names, ", "))
}

// renameFolders renames theirs' task folders to their new IDs, and the
// ID in the heading of their README.
func renameFolders(ws *workspace.Workspace, done []Finished) error {
	var errs []error
	for _, f := range done {
		rn := f.Renumbered
		if rn == nil || rn.old == "" {
			continue
		}
		to := filepath.Join(ws.Root, filepath.FromSlash(rn.Folder))
		if _, err := os.Lstat(to); err == nil {
			errs = append(errs, fmt.Errorf("%s exists already, so %s keeps its name; rename it by hand", rn.Folder, ws.RelPath(rn.old)))
			continue
		}
		if err := os.Rename(rn.old, to); err != nil {
			errs = append(errs, fmt.Errorf("rename %s to %s (the matrix names %s already): %w; rename it by hand", ws.RelPath(rn.old), rn.Folder, rn.To, err))
			continue
		}
		readme := filepath.Join(to, "README.md")
		if b, err := os.ReadFile(readme); err == nil {
			for _, sep := range []string{":", " "} {
				if old := "# " + rn.From + sep; strings.HasPrefix(string(b), old) {
					if err := writeFile(readme, []byte("# "+rn.To+sep+string(b[len(old):]))); err != nil {
						errs = append(errs, err)
					}
					break
				}
			}
		}
	}
	return errors.Join(errs...)
}
