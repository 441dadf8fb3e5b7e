package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskUpdateOptions is what `task update` runs with.
type TaskUpdateOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string

	ID string
	// Update has only the fields whose flags were given.
	Update matrix.Update
	Force  bool
	JSON   bool
}

// taskUpdateFlags are the raw flag values; only the changed ones go into the Update.
type taskUpdateFlags struct {
	status, priority, difficulty, mode, description string
	skills, agents, sets                            []string
}

func NewCmdTaskUpdate(f *Factory, runF func(context.Context, *TaskUpdateOptions) error) *cobra.Command {
	o := &TaskUpdateOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv}
	var fv taskUpdateFlags
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change fields of a task's row",
		Long: `update changes only the fields given, sets Updated to today, adds an @mention
only once, and refuses unknown values with the list of valid ones (exit 2).
When the status changes, a dated line is appended to the status or log section of
the task's README, if it has one.

--skills replaces the skill list (--skills "" clears it). --set COLUMN=VALUE sets any
column by header name, including extra columns.`,
		Example: `  agentinfra task update 3f9a2c --status IN_PROGRESS --agent @coder
  agentinfra task update 3f9a2c --priority P1 --difficulty hard
  agentinfra task update 3f9a2c --skills go-testing,code-review --set Owner=ana
  agentinfra task update 3f9a2c --status done --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			u, err := fv.update(cmd)
			if err != nil {
				return err
			}
			o.Update = u
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskUpdateRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&fv.status, "status", "s", "", "TODO, IN_PROGRESS, BLOCKED, REVIEW or DONE, an alias (WIP, done, ...) or a value of .agent/config.yaml")
	fl.StringVarP(&fv.priority, "priority", "p", "", "P1, P2, P3 or P4 (or an alias: 1, P0, high, ...)")
	fl.StringVar(&fv.difficulty, "difficulty", "", "easy, med or hard (or an alias: S, M, L, XL, medium, trivial, ...)")
	fl.StringVarP(&fv.mode, "mode", "m", "", "agent mode (a file in .agent/agents/)")
	fl.StringVarP(&fv.description, "description", "d", "", "new description")
	fl.StringSliceVar(&fv.skills, "skills", nil, "replace the skills, comma-separated")
	fl.StringSliceVar(&fv.agents, "agent", nil, "add an @mention (repeatable; added only once)")
	fl.StringArrayVar(&fv.sets, "set", nil, "COLUMN=VALUE for any column, e.g. an extra column (repeatable)")
	fl.BoolVar(&o.Force, "force", false, "accept a mode or skills that have no file and no row uses (yet)")
	fl.BoolVar(&o.JSON, "json", false, "print {task, before, changed, log_file} as JSON")
	RegisterFlagCompletion(cmd, "mode", CompleteModes(f))
	RegisterFlagCompletion(cmd, "skills", completeSkills(f, true))
	RegisterFlagCompletion(cmd, "status", cobra.FixedCompletions(matrix.Statuses, NoFiles))
	RegisterFlagCompletion(cmd, "priority", cobra.FixedCompletions(matrix.Priorities, NoFiles))
	return cmd
}

// update turns the flags given into a matrix.Update, refusing (exit 2) an
// update that changes nothing, a malformed --set and an empty description.
func (fv *taskUpdateFlags) update(cmd *cobra.Command) (matrix.Update, error) {
	var u matrix.Update
	fl := cmd.Flags()
	for _, p := range []struct {
		name string
		v    string
		dst  **string
	}{{"status", fv.status, &u.Status}, {"priority", fv.priority, &u.Priority}, {"difficulty", fv.difficulty, &u.Difficulty}, {"mode", fv.mode, &u.Mode}, {"description", fv.description, &u.Description}} {
		if fl.Changed(p.name) {
			*p.dst = matrix.Str(p.v)
		}
	}
	if fl.Changed("skills") {
		s := splitCSV(fv.skills)
		u.Skills = &s
	}
	u.AddAgents = splitCSV(fv.agents)
	for _, s := range fv.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return u, UsageErrorf("--set %q: want COLUMN=VALUE, e.g. --set Owner=ana", s)
		}
		if u.Set == nil {
			u.Set = map[string]string{}
		}
		u.Set[strings.TrimSpace(k)] = v
	}
	if u.Status == nil && u.Priority == nil && u.Difficulty == nil && u.Mode == nil && u.Description == nil &&
		u.Skills == nil && len(u.AddAgents) == 0 && len(u.Set) == 0 {
		return u, UsageErrorf("nothing to change: give at least one of --status, --priority, --difficulty, --mode, --agent, --skills, --description, --set\nrun 'agentinfra task update --help' for usage")
	}
	if u.Description != nil && strings.TrimSpace(*u.Description) == "" {
		return u, UsageErrorf("--description must not be empty")
	}
	return u, nil
}

func taskUpdateRun(ctx context.Context, o *TaskUpdateOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	res, err := task.UpdateTask(ctx, ws, o.ID, o.Update, o.Now(), task.UpdateOptions{Force: o.Force, Getenv: o.Getenv})
	if err != nil {
		return err
	}
	PrintWarnings(o.IO, res.Warnings)
	if o.JSON {
		return WriteJSON(o.IO.Out, struct {
			Task     matrix.Task `json:"task"`
			Before   matrix.Task `json:"before"`
			Changed  []string    `json:"changed"`
			LogFile  string      `json:"log_file"`
			Warnings []string    `json:"warnings,omitempty"`
		}{res.After, res.Before, res.Changed, rel(ws, res.LogFile), res.Warnings})
	}
	switch {
	case len(res.Changed) == 0 && res.Note != "":
		fmt.Fprintf(o.IO.Out, "%s: recorded in %s: %s\n", o.ID, rel(ws, res.LogFile), res.Note)
		return nil
	case len(res.Changed) == 0:
		fmt.Fprintf(o.IO.Out, "%s: no field changed (Updated is %s)\n", o.ID, res.After.Updated)
		return nil
	}
	fmt.Fprintf(o.IO.Out, "updated %s: %s\n", o.ID, describeChanges(res))
	if res.Note != "" {
		fmt.Fprintf(o.IO.Out, "recorded in %s: %s\n", rel(ws, res.LogFile), res.Note)
	} else if res.LogFile != "" {
		fmt.Fprintf(o.IO.Out, "logged the status change in %s\n", rel(ws, res.LogFile))
	}
	return nil
}

// describeChanges says what an update changed: "status TODO → DONE, agents +@coder".
func describeChanges(res task.UpdateResult) string {
	var parts []string
	for _, c := range res.Changed {
		switch c {
		case "status":
			parts = append(parts, fmt.Sprintf("status %s → %s", res.Before.Status, res.After.Status))
		case "priority":
			parts = append(parts, fmt.Sprintf("priority %s → %s", orNone(res.Before.Priority), orNone(res.After.Priority)))
		case "difficulty":
			parts = append(parts, fmt.Sprintf("difficulty %s → %s", orNone(res.Before.Difficulty), orNone(res.After.Difficulty)))
		case "agents":
			var added []string
			for _, a := range res.After.Agents {
				if !slices.Contains(res.Before.Agents, a) {
					added = append(added, "+"+a)
				}
			}
			parts = append(parts, "agents "+strings.Join(added, " "))
		case "skills":
			parts = append(parts, "skills "+strings.Join(res.After.Skills, ","))
		default:
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, ", ")
}

// orNone shows an empty value as "(none)".
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
