package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Archived is one folder moved by Archive or ArchiveAllDone (absolute paths).
type Archived struct {
	ID   string `json:"id"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Archive moves a DONE task's folder(s) .agent/tasks/{id}_* to
// .agent/archive/. The matrix row stays as the permanent record. It fails
// with a NotFound *agenterr.Error (suggesting close IDs), or a Conflict one
// matching ErrNotDone (naming the status), ErrAlreadyArchived, ErrNoTaskDir
// or ErrExists, changing nothing.
func Archive(ctx context.Context, ws *workspace.Workspace, id string) ([]Archived, error) {
	var moved []Archived
	op := newOp(ws)
	defer op.flush(ctx)
	s, err := op.store()
	if err != nil {
		return nil, err
	}
	_, err = s.ModifyThen(ctx, func(d *matrix.Doc) error {
		op.recoverChange(d)
		t, ok := d.Task(id)
		if !ok {
			return d.NotFound(id)
		}
		if !isStatus(d.Vocabulary(), t.Status, StatusDone) {
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Err: ErrNotDone,
				Reason: fmt.Sprintf("task %s is %s; only DONE tasks are archived: set its status to DONE first", id, t.Status)}
		}
		dirs := Folders(ws, d, id, false)
		if len(dirs) == 0 {
			if a := Folders(ws, d, id, true); len(a) > 0 {
				return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Err: ErrAlreadyArchived, Reason: fmt.Sprintf("task %s is already archived, in %s", id, ws.RelPath(a[0]))}
			}
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Err: ErrNoTaskDir, Reason: fmt.Sprintf("task %s has no folder .agent/tasks/%s_*; there is nothing to archive", id, id)}
		}
		var err error
		moved, err = op.moveAll(ctx, map[string][]string{id: dirs}, []string{id})
		return err
	}, op.finish)
	if err != nil {
		return nil, err
	}
	for _, m := range moved {
		publishTask(ws, m.ID, "archived", ActorFrom(ctx))
	}
	return moved, nil
}

// ArchiveAllDone archives every DONE task that still has a folder in
// .agent/tasks/, in matrix order. All folders move or none do.
func ArchiveAllDone(ctx context.Context, ws *workspace.Workspace) ([]Archived, error) {
	moved := []Archived{}
	op := newOp(ws)
	defer op.flush(ctx)
	s, err := op.store()
	if err != nil {
		return nil, err
	}
	_, err = s.ModifyThen(ctx, func(d *matrix.Doc) error {
		op.recoverChange(d)
		byID := map[string][]string{}
		var order []string
		for _, t := range d.Tasks() {
			if !isStatus(d.Vocabulary(), t.Status, StatusDone) || byID[t.ID] != nil {
				continue
			}
			if dirs := Folders(ws, d, t.ID, false); len(dirs) > 0 {
				byID[t.ID] = dirs
				order = append(order, t.ID)
			}
		}
		var err error
		moved, err = op.moveAll(ctx, byID, order)
		return err
	}, op.finish)
	if err != nil {
		return nil, err
	}
	for _, m := range moved {
		publishTask(ws, m.ID, "archived", ActorFrom(ctx))
	}
	return moved, nil
}

// moveAll renames the folders into the archive, after recording every move
// in the journal: if one fails, or the process is killed, every folder goes
// back (op.finish now, the next writer then).
func (op *op) moveAll(ctx context.Context, byID map[string][]string, order []string) ([]Archived, error) {
	ws := op.ws
	moved := []Archived{}
	if len(order) == 0 {
		return moved, nil
	}
	arch := ws.ArchiveDir()
	c := change{Op: "archive", MadeArchive: !exists(arch)}
	for _, id := range order {
		for _, from := range byID[id] {
			dst := filepath.Join(arch, filepath.Base(from))
			if exists(dst) {
				return []Archived{}, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrExists, Reason: fmt.Sprintf("%s already exists; move or remove it, then archive again", ws.RelPath(dst))}
			}
			c.Moves = append(c.Moves, folderMove{From: relSlash(ws, from), To: relSlash(ws, dst)})
		}
	}
	if err := op.record(c); err != nil {
		return []Archived{}, err
	}
	if c.MadeArchive {
		if err := os.MkdirAll(arch, 0o755); err != nil {
			return []Archived{}, fmt.Errorf("create %s: %w", arch, err)
		}
	}
	for _, id := range order {
		for _, from := range byID[id] {
			if err := ctx.Err(); err != nil {
				return []Archived{}, err
			}
			to := filepath.Join(arch, filepath.Base(from))
			if err := os.Rename(from, to); err != nil {
				return []Archived{}, fmt.Errorf("archive %s: %w", ws.RelPath(from), err)
			}
			moved = append(moved, Archived{ID: id, From: from, To: to})
			if testHookMoved != nil {
				if err := testHookMoved(len(moved)); err != nil {
					return []Archived{}, err
				}
			}
		}
	}
	return moved, nil
}

// testHookMoved, when set, runs after each folder an archive moves; an
// error simulates a failure after it.
var testHookMoved func(n int) error
