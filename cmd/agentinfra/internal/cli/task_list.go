package cli

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskListOptions is what `task list` runs with.
type TaskListOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string

	Query matrix.Query
	JSON  bool
}

func NewCmdTaskList(f *Factory, runF func(context.Context, *TaskListOptions) error) *cobra.Command {
	o := &TaskListOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv}
	q := &o.Query
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List tasks, filtered and sorted",
		Long: `list prints the matrix's tasks that match every filter given. Filters match case-
insensitively; --status and --priority take comma-separated lists; --query matches
when every word appears in the ID, description, mode, skills, agents or an extra column.

On a terminal the output is an aligned table fitted to the terminal width ($COLUMNS
when set): SKILLS and AGENTS shrink, then go (then UPDATED and DIFF), before the
description is cut; colour unless NO_COLOR is set. Piped, it is one tab-separated line per task with the fields
id, status, priority, difficulty, mode, skills, agents, description, created, updated.
--json prints an array of tasks ([] when none match). A task whose supervised
run waits for a person says so: "IN_PROGRESS (waiting: request 6)" in the
table, a "waiting" object ({kind, id, ref, what, since}) in --json.

--sort: file (default), priority (P1 first, in the order of the workspace's
priorities), created (oldest first), updated (newest first); prefix - to reverse. A task
with no priority (or no date) comes last either way; the order is stable.

A row whose cell goes on over several lines is read whole. Rows that cannot be read
(a wrong number of cells, a row that never ends) and |-led lines that belong to no
table are printed to stderr as FILE:LINE:COL: severity: message; list still prints
the rows it read, and exits 1.`,
		Example: `  agentinfra task list --status TODO
  agentinfra task list --ready --sort priority           # the ready queue, P1 first
  agentinfra task list --status TODO,IN_PROGRESS --priority P1,P2 --sort -updated
  agentinfra task list --mode coder --agent @coder --skill go-testing
  agentinfra task list --query "retry fetcher" --limit 5 --json
  agentinfra task list --status DONE | cut -f1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Statuses and priorities are checked against the workspace's
			// vocabulary (ListTasks); the rest can be checked before.
			early := o.Query
			early.Status, early.Priority = nil, nil
			if _, err := early.Normalize(); err != nil {
				return &usageError{err}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskListRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&q.Status, "status", "s", nil, "statuses, comma-separated: "+strings.Join(matrix.Statuses, ", "))
	fl.StringSliceVarP(&q.Priority, "priority", "p", nil, "priorities, comma-separated: "+strings.Join(matrix.Priorities, ", "))
	fl.StringVarP(&q.Mode, "mode", "m", "", "only tasks of this agent mode")
	fl.StringVar(&q.Agent, "agent", "", "only tasks mentioning this @agent")
	fl.StringVar(&q.Skill, "skill", "", "only tasks using this skill")
	fl.StringVarP(&q.Text, "query", "q", "", "only tasks whose text holds every word")
	fl.BoolVar(&q.Ready, "ready", false, "only TODO tasks whose Deps are all DONE (the ready queue)")
	fl.StringVar(&q.Sort, "sort", "", "file, priority, created or updated (prefix - to reverse)")
	fl.IntVarP(&q.Limit, "limit", "n", 0, "print at most N tasks (0: all)")
	fl.BoolVar(&o.JSON, "json", false, "print a JSON array of tasks")
	RegisterFlagCompletion(cmd, "mode", CompleteModes(f))
	RegisterFlagCompletion(cmd, "skill", completeSkills(f, false))
	return cmd
}

func taskListRun(ctx context.Context, o *TaskListOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	tasks, problems, err := task.ListTasksReadingWith(ctx, ws, o.Query, readFileMapped) // mapped, not read: list prints and exits
	if err != nil {
		return err
	}
	// Both rows of a duplicated ID are listed, and said to be (issue 19).
	if dups := matrix.DuplicateIDs(tasks); len(dups) > 0 {
		problems = append(problems, dups...)
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
	}
	if !o.JSON {
		printReadProblems(o.IO, ws, problems)
	}
	// What the supervised runs wait for, from their supervisors' markers
	// (no database in this binary).
	marks := waiting.ByTask(ws.Root)
	w := bufio.NewWriterSize(o.IO.Out, 64<<10)
	switch {
	case o.JSON:
		if err := WriteJSON(w, withWaiting(tasks, marks)); err != nil {
			return err
		}
	case o.IO.IsTTY:
		if len(tasks) == 0 {
			fmt.Fprintln(o.IO.ErrOut, "no tasks match")
		} else {
			writeTable(w, tasks, marks, o.IO.Width, useColor(o.IO, o.Getenv))
		}
	default:
		writeTSV(w, tasks)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if o.IO.IsTTY {
		noteContinuedRows(o.IO, tasks)
	}
	if len(problems) > 0 {
		// Never less data with exit code 0: a script must see that
		// rows are missing from what it read. With --json the problems
		// are the error object's diagnostics.
		name := rel(ws, ws.MatrixPath())
		for i := range problems {
			problems[i].File = name
		}
		return &ExitError{Code: 1, diagnostics: problems,
			Msg: fmt.Sprintf("%s could not be read whole (%d %s); the tasks listed are the rows that could be read", name, len(problems), Plural(len(problems), "problem", "problems"))}
	}
	return nil
}

// listedTask is a task as --json lists it: with what its supervised run
// waits for a person to answer, when it waits.
type listedTask struct {
	matrix.Task
	Waiting *waiting.Item `json:"waiting,omitempty"`
}

func withWaiting(tasks []matrix.Task, marks map[string]waiting.Mark) []listedTask {
	out := make([]listedTask, len(tasks))
	for i, t := range tasks {
		out[i].Task = t
		if m, ok := marks[t.ID]; ok {
			it := m.Item
			out[i].Waiting = &it
		}
	}
	return out
}

// printReadProblems prints the rows a read of the matrix could not return,
// one per line on stderr, as validate prints diagnostics.
func printReadProblems(ios *IOStreams, ws *workspace.Workspace, problems []matrix.Diagnostic) {
	name := rel(ws, ws.MatrixPath())
	for _, p := range problems {
		p.File = name
		fmt.Fprintln(ios.ErrOut, p.String())
	}
}

// noteContinuedRows tells a person that some listed rows go on over several
// lines (read whole, but an error for validate) and how to join them.
func noteContinuedRows(ios *IOStreams, tasks []matrix.Task) {
	n := 0
	for _, t := range tasks {
		if t.EndLine > 0 {
			n++
		}
	}
	switch {
	case n == 1:
		fmt.Fprintln(ios.ErrOut, "note: 1 row goes on over several lines; `agentinfra validate --fix` joins it into one line")
	case n > 1:
		fmt.Fprintf(ios.ErrOut, "note: %d rows go on over several lines; `agentinfra validate --fix` joins each into one line\n", n)
	}
}
