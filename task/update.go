package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// UpdateOptions tunes UpdateTask.
type UpdateOptions struct {
	// Force accepts new skills that do not exist in the workspace (yet).
	Force bool
	// Getenv locates the global skills folder; nil means os.Getenv.
	Getenv func(string) string
	// Actor is who makes the change ("" = the actor of ctx, see WithActor);
	// Reason says why. The status log line and the change's event carry them.
	Actor  Actor
	Reason string
}

// UpdateResult reports what UpdateTask, SetStatus or Claim did.
type UpdateResult struct {
	Before matrix.Task `json:"before"`
	After  matrix.Task `json:"after"`
	// Changed names the fields that changed (status, priority, difficulty,
	// mode, skills, agents, description, created, or an extra column's header),
	// not counting Updated.
	Changed []string `json:"changed"`
	// LogFile is the README (absolute path) that got a status line, or "".
	LogFile string `json:"log_file,omitempty"`
	// Warnings did not stop the change (a mode with no file).
	Warnings []string `json:"warnings,omitempty"`
	// Holder is who holds the task after a claim (Claim, ClaimWith): the
	// last @mention of Agents, or on a matrix without an Agents column the
	// one its README records (holder.go).
	Holder string `json:"holder,omitempty"`
	// Note is what the README's status log recorded besides a status
	// change: @mentions a matrix without an Agents column could not take
	// ("claimed by @x"); "" otherwise.
	Note string `json:"note,omitempty"`
}

// UpdateTask changes one row under the matrix lock (see matrix.Doc.UpdateTask:
// only given fields, Updated set, @mentions added once, values validated).
// When the status changes and the task's README has a status or log section,
// a dated line "- YYYY-MM-DD HH:MM: status OLD → NEW" is appended to it; the
// README and the row change together or not at all. New skills are checked
// as in CheckRefs (refused unless o.Force), a new mode with no file is a
// warning.
func UpdateTask(ctx context.Context, ws *workspace.Workspace, id string, u matrix.Update, now time.Time, o UpdateOptions) (UpdateResult, error) {
	mode := ""
	if u.Mode != nil {
		mode = *u.Mode
	}
	var sk []string
	if u.Skills != nil {
		sk = cleanList(*u.Skills)
	}
	for k, v := range u.Set {
		switch matrix.CanonicalColumn(k) {
		case matrix.ColMode:
			mode = v
		case matrix.ColSkills:
			sk = append(sk, cleanList(strings.Split(v, ","))...)
		}
	}
	warnings, err := CheckRefs(ws, o.Getenv, mode, sk, o.Force)
	if err != nil {
		return UpdateResult{}, err
	}
	if len(u.AddAgents) > 0 {
		if err := ensureHolderFolder(ctx, ws, id, now, func(*matrix.Doc, matrix.Task) bool { return true }); err != nil {
			return UpdateResult{}, err
		}
	}
	res, err := modifyTaskNoting(ctx, ws, id, stamp{now: now, by: o.Actor.or(ctx), reason: o.Reason}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, string, error) {
		// A matrix without an Agents column: the @mentions go to the
		// README's status log (holder.go).
		ru, mentions := RowUpdate(d, id, u)
		after, err := d.UpdateTask(id, ru, now)
		return after, agentsNote(d.Vocabulary(), after, mentions), err
	})
	if err != nil {
		return UpdateResult{}, err
	}
	res.Warnings = append(warnings, res.Warnings...)
	return res, nil
}

// statusSectionSep is what goes between a README's end and a new section.
func statusSectionSep(body []byte) string {
	switch {
	case len(body) == 0:
		return ""
	case !strings.HasSuffix(string(body), "\n"):
		return "\n\n"
	case !strings.HasSuffix(string(body), "\n\n"):
		return "\n"
	}
	return ""
}

// SetStatus sets a task's status (any word of the vocabulary or an alias),
// with the README status log line: UpdateTask with only a status.
func SetStatus(ctx context.Context, ws *workspace.Workspace, id, status string, now time.Time) (UpdateResult, error) {
	return UpdateTask(ctx, ws, id, matrix.Update{Status: &status}, now, UpdateOptions{})
}

// modifyTask runs change on the row of id under the lock and, when the
// status changed, appends the status line (with w's actor and reason) to
// the task README in the same all-or-nothing step, then publishes the
// change. change returns the row after; returning before unchanged writes
// nothing.
func modifyTask(ctx context.Context, ws *workspace.Workspace, id string, w stamp, change func(d *matrix.Doc, before matrix.Task) (matrix.Task, error)) (UpdateResult, error) {
	return modifyTaskNoting(ctx, ws, id, w, func(d *matrix.Doc, before matrix.Task) (matrix.Task, string, error) {
		after, err := change(d, before)
		return after, "", err
	})
}

// modifyTaskNoting is modifyTask whose change may also return a note for the
// README's status log (the holder of a claim on a matrix without an Agents
// column, see holder.go): the line is written when the status changed or a
// note is given, and a note that cannot be written (no README) refuses the
// change.
func modifyTaskNoting(ctx context.Context, ws *workspace.Workspace, id string, w stamp, change func(d *matrix.Doc, before matrix.Task) (matrix.Task, string, error)) (UpdateResult, error) {
	var (
		res UpdateResult
		op  = newOp(ws)
	)
	s, err := op.store()
	if err != nil {
		return UpdateResult{}, err
	}
	_, err = s.ModifyThen(ctx, func(d *matrix.Doc) error {
		// A leftover of a killed change, or this call's own README line when
		// the matrix changed under it and this runs again.
		op.recoverChange(d)
		before, ok := d.Task(id)
		if !ok {
			return d.NotFound(id)
		}
		after, note, err := change(d, before)
		if err != nil {
			return err
		}
		res = UpdateResult{Before: before, After: after, Changed: changedFields(before, after), Note: note}
		if before.Status == after.Status && note == "" && len(w.review) == 0 {
			return nil
		}
		return op.logStatus(d, id, before.Status, after.Status, note, w, &res)
	}, op.finish)
	if err != nil {
		op.flush(ctx)
		return UpdateResult{}, err
	}
	res.Warnings = append(res.Warnings, op.notices...)
	publishChange(ws, res, w)
	return res, nil
}

// logStatus appends the status line to the task README, when it has a
// status or log section, after recording the change in the journal (with
// the README as it was), so that a process killed before the row is written
// leaves a line the next writer removes.
func (op *op) logStatus(d *matrix.Doc, id, from, to, note string, w stamp, res *UpdateResult) error {
	noReadme := func() error {
		if len(w.review) > 0 {
			return &agenterr.Error{Kind: agenterr.Refused, Field: "id", Reason: fmt.Sprintf("task %s has no README to keep the review in; run `agentinfra task scaffold %s` first", id, id)}
		}
		if note == "" {
			return nil
		}
		return &agenterr.Error{Kind: agenterr.Refused, Field: "agent", Reason: fmt.Sprintf("the matrix has no Agents column and task %s has no README to record %q in; run `agentinfra task scaffold %s` first, or add the column with `agentinfra migrate --add-columns`", id, note, id)}
	}
	dir, _ := Folder(op.ws, d, id)
	if dir == "" {
		return noReadme()
	}
	p := filepath.Join(dir, "README.md")
	body, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return noReadme()
		}
		return fmt.Errorf("read task README: %w", err)
	}
	nb, ok := body, false
	if len(w.review) > 0 {
		nb, ok = appendReview(body, w.review), true
	}
	if from != to || note != "" {
		line := w.noteLine(from, to, note)
		withLine, logged := AppendStatusLine(nb, line)
		if !logged && note != "" {
			// The holder must be written down: a README without a status
			// section gets one.
			withLine, logged = append(append(append([]byte{}, nb...), statusSectionSep(nb)...), "## Status log\n\n"+line+"\n"...), true
		}
		if logged {
			nb, ok = withLine, true
		}
	}
	if !ok {
		return nil
	}
	if err := op.record(change{Op: "update", ID: id, Readme: relSlash(op.ws, p), OldReadme: body, NewReadme: sha256Hex(nb), From: from, To: to}); err != nil {
		return err
	}
	removeReadmeTemps(dir) // of writers killed mid-write
	if err := atomicfile.Write(p, nb); err != nil {
		return fmt.Errorf("append to task README: %w", err)
	}
	res.LogFile = p
	if testHookBeforeWrite != nil {
		return testHookBeforeWrite()
	}
	return nil
}

func changedFields(a, b matrix.Task) []string {
	out := []string{}
	add := func(name string, x, y string) {
		if x != y {
			out = append(out, name)
		}
	}
	add("status", a.Status, b.Status)
	add("priority", a.Priority, b.Priority)
	add("difficulty", a.Difficulty, b.Difficulty)
	add("mode", a.Mode, b.Mode)
	add("skills", strings.Join(a.Skills, ","), strings.Join(b.Skills, ","))
	add("agents", strings.Join(a.Agents, " "), strings.Join(b.Agents, " "))
	add("description", a.Description, b.Description)
	add("created", a.Created, b.Created)
	var keys []string
	for k := range b.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(k, a.Extra[k], b.Extra[k])
	}
	return out
}
