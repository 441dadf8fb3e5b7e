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
	s, err := store(ws)
	if err != nil {
		return nil, err
	}
	_, err = s.Modify(ctx, func(d *matrix.Doc) error {
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
		moved, err = moveAll(ctx, ws, map[string][]string{id: dirs}, []string{id})
		return err
	})
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
	s, err := store(ws)
	if err != nil {
		return nil, err
	}
	_, err = s.Modify(ctx, func(d *matrix.Doc) error {
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
		moved, err = moveAll(ctx, ws, byID, order)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, m := range moved {
		publishTask(ws, m.ID, "archived", ActorFrom(ctx))
	}
	return moved, nil
}

// moveAll renames the folders into the archive, undoing every move if one fails.
func moveAll(ctx context.Context, ws *workspace.Workspace, byID map[string][]string, order []string) (moved []Archived, err error) {
	moved = []Archived{}
	if len(order) == 0 {
		return moved, nil
	}
	arch := ws.ArchiveDir()
	madeArch := false
	defer func() {
		if err == nil {
			return
		}
		for i := len(moved) - 1; i >= 0; i-- {
			_ = os.Rename(moved[i].To, moved[i].From)
		}
		moved = []Archived{}
		if madeArch {
			_ = os.Remove(arch)
		}
	}()
	for _, id := range order {
		for _, from := range byID[id] {
			if dst := filepath.Join(arch, filepath.Base(from)); exists(dst) {
				return moved, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrExists, Reason: fmt.Sprintf("%s already exists; move or remove it, then archive again", ws.RelPath(dst))}
			}
		}
	}
	if !exists(arch) {
		if err := os.MkdirAll(arch, 0o755); err != nil {
			return moved, fmt.Errorf("create %s: %w", arch, err)
		}
		madeArch = true
	}
	for _, id := range order {
		for _, from := range byID[id] {
			if err := ctx.Err(); err != nil {
				return moved, err
			}
			to := filepath.Join(arch, filepath.Base(from))
			if err := os.Rename(from, to); err != nil {
				return moved, fmt.Errorf("archive %s: %w", ws.RelPath(from), err)
			}
			moved = append(moved, Archived{ID: id, From: from, To: to})
		}
	}
	return moved, nil
}
