package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

func newCmdTaskList(f *Factory) *cobra.Command {
	var (
		q      matrix.Query
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List tasks, filtered and sorted",
		Long: `list prints the matrix's tasks that match every filter given. Filters match case-
insensitively; --status and --priority take comma-separated lists; --query matches
when every word appears in the ID, description, mode, skills, agents or an extra column.

On a terminal the output is an aligned table fitted to the terminal width (colour
unless NO_COLOR is set); piped, it is one tab-separated line per task with the fields
id, status, priority, difficulty, mode, skills, agents, description, created, updated.
--json prints an array of tasks ([] when none match).

--sort: file (default), priority (P1 first), created (oldest first), updated (newest
first); prefix - to reverse.

A row whose cell goes on over several lines is read whole. Rows that cannot be read
(a wrong number of cells, a row that never ends) and |-led lines that belong to no
table are printed to stderr as FILE:LINE:COL: severity: message; list still prints
the rows it read, and exits 1.`,
		Example: `  agentinfra task list --status TODO
  agentinfra task list --ready --sort priority
  agentinfra task list --status TODO
  agentinfra task list --ready --sort priority,IN_PROGRESS --priority P1,P2 --sort priority
  agentinfra task list --mode coder --agent @coder --skill go-testing
  agentinfra task list --query "retry fetcher" --limit 5 --json
  agentinfra task list --status DONE | cut -f1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Statuses and priorities are checked against the workspace's
			// vocabulary (ListTasks); the rest can be checked before.
			early := q
			early.Status, early.Priority = nil, nil
			if _, err := early.Normalize(); err != nil {
				return &usageError{err}
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			// Mapped, not read: list prints and exits (see readFileMapped).
			tasks, problems, err := task.ListTasksReadingWith(cmd.Context(), ws, q, readFileMapped)
			if err != nil {
				return taskErr(err)
			}
			printReadProblems(f, ws, problems)
			w := bufio.NewWriterSize(f.IO.Out, 64<<10)
			switch {
			case asJSON:
				if err := writeJSON(w, tasks); err != nil {
					return err
				}
			case f.IO.IsTTY:
				if len(tasks) == 0 {
					fmt.Fprintln(f.IO.ErrOut, "no tasks match")
				} else {
					writeTable(w, tasks, f.IO.Width, useColor(f))
				}
			default:
				writeTSV(w, tasks)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if f.IO.IsTTY {
				noteContinuedRows(f, tasks)
			}
			if len(problems) > 0 {
				// Never less data with exit code 0: a script must see that
				// rows are missing from what it read.
				return &exitError{code: 1}
			}
			return nil
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
	fl.BoolVar(&asJSON, "json", false, "print a JSON array of tasks")
	return cmd
}

func writeTSV(w *bufio.Writer, tasks []matrix.Task) {
	clean := strings.NewReplacer("\t", " ", "\n", " ")
	for _, t := range tasks {
		for i, v := range [...]string{t.ID, t.Status, t.Priority, t.Difficulty, t.Mode} {
			if i > 0 {
				w.WriteByte('\t')
			}
			w.WriteString(v)
		}
		w.WriteByte('\t')
		for i, s := range t.Skills {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(s)
		}
		w.WriteByte('\t')
		for i, a := range t.Agents {
			if i > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(a)
		}
		w.WriteByte('\t')
		if strings.ContainsAny(t.Description, "\t\n") {
			w.WriteString(clean.Replace(t.Description))
		} else {
			w.WriteString(t.Description)
		}
		w.WriteByte('\t')
		w.WriteString(t.Created)
		w.WriteByte('\t')
		w.WriteString(t.Updated)
		w.WriteByte('\n')
	}
}

// writeTable prints an aligned table; the description (last) is cut to fit width.
func writeTable(w io.Writer, tasks []matrix.Task, width int, color bool) {
	head := []string{"ID", "STATUS", "PRI", "DIFF", "MODE", "SKILLS", "AGENTS", "UPDATED", "DESCRIPTION"}
	rows := make([][]string, len(tasks))
	widths := make([]int, len(head))
	for i, h := range head {
		widths[i] = len(h)
	}
	for i, t := range tasks {
		desc := t.Description
		if t.EndLine > 0 {
			desc = strings.Join(strings.Fields(desc), " ") // a cell that goes on over several lines
		}
		r := []string{t.ID, t.Status, t.Priority, t.Difficulty, t.Mode, strings.Join(t.Skills, ","), strings.Join(t.Agents, " "), t.Updated, desc}
		for j, c := range r[:len(r)-1] {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
		rows[i] = r
	}
	const gap = 2
	used := 0
	for _, wd := range widths[:len(widths)-1] {
		used += wd + gap
	}
	descMax := -1 // no limit
	if width > 0 {
		descMax = max(width-used, 12)
	}
	line := func(cells []string, header bool) {
		var b strings.Builder
		for j, c := range cells {
			last := j == len(cells)-1
			if last && descMax >= 0 {
				c = truncate(c, descMax)
			}
			styled := c
			switch {
			case header:
				styled = colorize(color, "1", c)
			case j == 1:
				styled = colorize(color, statusColors[c], c)
			case j == 2 && c == "P1":
				styled = colorize(color, "1;31", c)
			case j == 0:
				styled = colorize(color, "2", c)
			}
			b.WriteString(styled)
			if !last {
				b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)+gap))
			}
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
	line(head, true)
	for _, r := range rows {
		line(r, false)
	}
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printReadProblems prints the rows a read of the matrix could not return,
// one per line on stderr, as validate prints diagnostics.
func printReadProblems(f *Factory, ws *workspace.Workspace, problems []matrix.Diagnostic) {
	name := rel(ws, ws.MatrixPath())
	for _, p := range problems {
		p.File = name
		fmt.Fprintln(f.IO.ErrOut, p.String())
	}
}

// noteContinuedRows tells a person that some listed rows go on over several
// lines (read whole, but an error for validate) and how to join them.
func noteContinuedRows(f *Factory, tasks []matrix.Task) {
	n := 0
	for _, t := range tasks {
		if t.EndLine > 0 {
			n++
		}
	}
	switch {
	case n == 1:
		fmt.Fprintln(f.IO.ErrOut, "note: 1 row goes on over several lines; `agentinfra validate --fix` joins it into one line")
	case n > 1:
		fmt.Fprintf(f.IO.ErrOut, "note: %d rows go on over several lines; `agentinfra validate --fix` joins each into one line\n", n)
	}
}
