package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/task"
)

// Shell completion reads the workspace as the command would (--root is
// parsed first) and offers each value with its description, cobra's
// "value\tdescription" form. A workspace that cannot be read completes
// nothing: completion must never print an error into the shell.

const CompletionDescWidth = 60

const NoFiles = cobra.ShellCompDirectiveNoFileComp

// CompleteTaskIDs completes the first argument with the matrix's task IDs,
// those in one of statuses when any are given.
func CompleteTaskIDs(f *Factory, statuses ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, NoFiles
		}
		ws, err := f.Workspace()
		if err != nil {
			return nil, NoFiles
		}
		tasks, err := task.ListTasks(cmd.Context(), ws, matrix.Query{Status: statuses})
		if err != nil && len(statuses) > 0 {
			// A vocabulary of its own may not know the statuses: offer every ID.
			tasks, err = task.ListTasks(cmd.Context(), ws, matrix.Query{})
		}
		if err != nil {
			return nil, NoFiles
		}
		var out []cobra.Completion
		for _, t := range tasks {
			if strings.HasPrefix(t.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(t.ID, mdtext.Shorten(t.Description, CompletionDescWidth)))
			}
		}
		return out, NoFiles
	}
}

// CompleteModes completes an agent mode (the files in .agent/agents/).
func CompleteModes(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ws, err := f.Workspace()
		if err != nil {
			return nil, NoFiles
		}
		modes, _, err := skills.ListModes(cmd.Context(), ws)
		if err != nil {
			return nil, NoFiles
		}
		var out []cobra.Completion
		for _, m := range modes {
			if strings.HasPrefix(m.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(m.Name, mdtext.Shorten(m.Description, CompletionDescWidth)))
			}
		}
		return out, NoFiles
	}
}

// completeSkills completes skill slugs. A comma-separated list (--skills
// a,b) completes its last element and keeps the others; with listed, an
// argument list (skill load a b) does not offer a slug twice.
func completeSkills(f *Factory, commaList bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ws, err := f.Workspace()
		if err != nil {
			return nil, NoFiles
		}
		list, _, err := skills.NewLibrary(ws, f.Getenv).List(cmd.Context())
		if err != nil {
			return nil, NoFiles
		}
		taken := map[string]bool{}
		for _, a := range args {
			taken[a] = true
		}
		prefix, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); commaList && i >= 0 {
			prefix, last = toComplete[:i+1], toComplete[i+1:]
			for _, s := range strings.Split(prefix, ",") {
				taken[s] = true
			}
		}
		var out []cobra.Completion
		for _, s := range list {
			if strings.HasPrefix(s.Slug, last) && !taken[s.Slug] {
				out = append(out, cobra.CompletionWithDesc(prefix+s.Slug, mdtext.Shorten(s.Description, CompletionDescWidth)))
			}
		}
		return out, NoFiles
	}
}

// RegisterFlagCompletion attaches fn to the command's flag name; the flag
// is declared by the command, so an error is a programming mistake.
func RegisterFlagCompletion(cmd *cobra.Command, name string, fn cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(name, fn); err != nil {
		panic(err)
	}
}
