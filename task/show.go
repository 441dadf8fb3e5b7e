package task

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// ListTasks reads the matrix and returns the tasks q selects (q is
// normalized first: refused values wrap matrix.ErrInvalid). A matrix with no
// task table is a *matrix.NoTaskTableError, not an empty list. It takes no
// lock; the store's atomic writes mean it never sees a torn file.
func ListTasks(ctx context.Context, ws *workspace.Workspace, q matrix.Query) ([]matrix.Task, error) {
	tasks, _, err := ListTasksWithProblems(ctx, ws, q)
	return tasks, err
}

// ListTasksWithProblems is ListTasks that also returns the matrix's read
// problems (matrix.Doc.ReadProblems): rows the read could not return.
func ListTasksWithProblems(ctx context.Context, ws *workspace.Workspace, q matrix.Query) ([]matrix.Task, []matrix.Diagnostic, error) {
	return ListTasksReadingWith(ctx, ws, q, os.ReadFile)
}

// ListTasksReadingWith is ListTasksWithProblems reading the matrix file with
// readFile: the CLI, which exits right after, maps it instead of copying
// 1.7 MB of a large matrix into fresh memory (about 400 page faults).
func ListTasksReadingWith(ctx context.Context, ws *workspace.Workspace, q matrix.Query, readFile func(string) ([]byte, error)) ([]matrix.Task, []matrix.Diagnostic, error) {
	vocab, err := LoadVocabulary(ws)
	if err != nil {
		return nil, nil, err
	}
	nq, err := q.NormalizeWith(vocab)
	if err != nil {
		return nil, nil, err
	}
	src, err := readMatrixWith(ctx, ws, readFile)
	if err != nil {
		return nil, nil, err
	}
	tasks, problems := nq.SelectWithProblems(src, vocab)
	if len(tasks) == 0 {
		// No match, or no task table at all: the second must not read as
		// an empty list (an older-format file would look empty).
		if err := matrix.ParseWith(src, vocab).RequireTaskTable(); err != nil {
			return nil, nil, err
		}
	}
	return tasks, problems, nil
}

// TaskInfo is a task's row with its folder and README.
type TaskInfo struct {
	Task matrix.Task `json:"task"`
	// Dir is the task folder (absolute), "" when it has none.
	Dir      string `json:"dir"`
	Archived bool   `json:"archived"`
	// Readme is Dir/README.md, "" when missing.
	Readme string `json:"readme"`
	// Holder is who holds an IN_PROGRESS task (see Holder): the last
	// @mention of Agents, or the one the README records when the matrix
	// has no Agents column; "" when none.
	Holder string `json:"holder,omitempty"`
}

// ShowTask returns a task's row, folder (in tasks/ or archive/) and README.
// An unknown ID wraps matrix.ErrNotFound and suggests close matches.
func ShowTask(ctx context.Context, ws *workspace.Workspace, id string) (TaskInfo, error) {
	vocab, err := LoadVocabulary(ws)
	if err != nil {
		return TaskInfo{}, err
	}
	src, err := readMatrix(ctx, ws)
	if err != nil {
		return TaskInfo{}, err
	}
	t, err := matrix.FindTaskWith(src, id, vocab)
	if err != nil {
		return TaskInfo{}, err
	}
	info := TaskInfo{Task: t}
	info.Dir, info.Archived = ws.FindTaskDirOwned(id, func(name string) string {
		// Only a row decides whose a folder is: ask the matrix about the
		// longer IDs the folder's name could hold.
		if owner, known := matrix.TaskFolderID(name, func(x string) bool { return len(matrix.Query{ID: x}.SelectWith(src, vocab)) > 0 }); known {
			return owner
		}
		return ""
	})
	if info.Dir != "" {
		b, err := ws.ReadFile(filepath.Join(info.Dir, "README.md")) // inside the workspace only
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return TaskInfo{}, fmt.Errorf("read task README: %w", err)
		}
		info.Readme = string(b)
	}
	if IsStatus(vocab, t, StatusInProgress) {
		if n := len(t.Agents); n > 0 {
			info.Holder = t.Agents[n-1]
		} else if d := matrix.ParseWith(src, vocab); !d.RowHasColumn(id, matrix.ColAgents) {
			info.Holder = ReadmeHolder([]byte(info.Readme))
		}
	}
	return info, nil
}

func readMatrix(ctx context.Context, ws *workspace.Workspace) ([]byte, error) {
	return readMatrixWith(ctx, ws, os.ReadFile)
}

func readMatrixWith(ctx context.Context, ws *workspace.Workspace, readFile func(string) ([]byte, error)) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := readFile(ws.MatrixPath())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read matrix: %w; run `agentinfra init` to create one", err)
		}
		return nil, fmt.Errorf("read matrix: %w", err)
	}
	return src, nil
}
