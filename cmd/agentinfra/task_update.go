package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

func newCmdTaskUpdate(f *Factory) *cobra.Command {
	var (
		status, priority, difficulty, mode, description string
		skillsFlag, agents, sets                        []string
		force, asJSON                                   bool
	)
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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			var u matrix.Update
			fl := cmd.Flags()
			for _, p := range []struct {
				name string
				v    string
				dst  **string
			}{{"status", status, &u.Status}, {"priority", priority, &u.Priority}, {"difficulty", difficulty, &u.Difficulty}, {"mode", mode, &u.Mode}, {"description", description, &u.Description}} {
				if fl.Changed(p.name) {
					*p.dst = matrix.Str(p.v)
				}
			}
			if fl.Changed("skills") {
				s := splitCSV(skillsFlag)
				u.Skills = &s
			}
			u.AddAgents = splitCSV(agents)
			for _, s := range sets {
				k, v, ok := strings.Cut(s, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return usageErrorf("--set %q: want COLUMN=VALUE, e.g. --set Owner=ana", s)
				}
				if u.Set == nil {
					u.Set = map[string]string{}
				}
				u.Set[strings.TrimSpace(k)] = v
			}
			if u.Status == nil && u.Priority == nil && u.Difficulty == nil && u.Mode == nil && u.Description == nil &&
				u.Skills == nil && len(u.AddAgents) == 0 && len(u.Set) == 0 {
				return usageErrorf("nothing to change: give at least one of --status, --priority, --difficulty, --mode, --agent, --skills, --description, --set\nrun 'agentinfra task update --help' for usage")
			}
			if u.Description != nil && strings.TrimSpace(*u.Description) == "" {
				return usageErrorf("--description must not be empty")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			res, err := task.UpdateTask(cmd.Context(), ws, id, u, f.Now(), task.UpdateOptions{Force: force, Getenv: f.Getenv})
			if err != nil {
				return taskErr(err)
			}
			printWarnings(f, res.Warnings)
			if asJSON {
				return writeJSON(f.IO.Out, struct {
					Task     matrix.Task `json:"task"`
					Before   matrix.Task `json:"before"`
					Changed  []string    `json:"changed"`
					LogFile  string      `json:"log_file"`
					Warnings []string    `json:"warnings,omitempty"`
				}{res.After, res.Before, res.Changed, rel(ws, res.LogFile), res.Warnings})
			}
			if len(res.Changed) == 0 {
				fmt.Fprintf(f.IO.Out, "%s: no field changed (Updated is %s)\n", id, res.After.Updated)
				return nil
			}
			var parts []string
			for _, c := range res.Changed {
				switch c {
				case "status":
					parts = append(parts, fmt.Sprintf("status %s → %s", res.Before.Status, res.After.Status))
				case "priority":
					parts = append(parts, fmt.Sprintf("priority %s → %s", res.Before.Priority, res.After.Priority))
				case "difficulty":
					parts = append(parts, fmt.Sprintf("difficulty %s → %s", res.Before.Difficulty, res.After.Difficulty))
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
			fmt.Fprintf(f.IO.Out, "updated %s: %s\n", id, strings.Join(parts, ", "))
			if res.LogFile != "" {
				fmt.Fprintf(f.IO.Out, "logged the status change in %s\n", rel(ws, res.LogFile))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&status, "status", "s", "", "TODO, IN_PROGRESS, BLOCKED, REVIEW or DONE, an alias (WIP, done, ...) or a value of .agent/config.yaml")
	fl.StringVarP(&priority, "priority", "p", "", "P1, P2, P3 or P4 (or an alias: 1, P0, high, ...)")
	fl.StringVar(&difficulty, "difficulty", "", "easy, med or hard (or an alias: S, M, L, XL, medium, trivial, ...)")
	fl.StringVarP(&mode, "mode", "m", "", "agent mode (a file in .agent/agents/)")
	fl.StringVarP(&description, "description", "d", "", "new description")
	fl.StringSliceVar(&skillsFlag, "skills", nil, "replace the skills, comma-separated")
	fl.StringSliceVar(&agents, "agent", nil, "add an @mention (repeatable; added only once)")
	fl.StringArrayVar(&sets, "set", nil, "COLUMN=VALUE for any column, e.g. an extra column (repeatable)")
	fl.BoolVar(&force, "force", false, "accept skills that do not exist (yet)")
	fl.BoolVar(&asJSON, "json", false, "print {task, before, changed, log_file} as JSON")
	return cmd
}
