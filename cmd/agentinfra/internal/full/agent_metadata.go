package full

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
)

// listedMetadata are the include_in_list fields of any agent, in the order
// they first appear: agent list's extra columns.
func listedMetadata(agents []fleet.Agent) []string {
	var cols []string
	seen := map[string]bool{}
	for _, a := range agents {
		for _, n := range a.MetadataNames() {
			if a.Metadata[n].Schema.IncludeInList && !seen[n] {
				seen[n] = true
				cols = append(cols, n)
			}
		}
	}
	return cols
}

func metadataHeader(cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		b.WriteString("\t" + strings.ToUpper(c))
	}
	return b.String()
}

// metadataCells are a's values for cols: "-" for none, "(error)" for an error
// (agent show says which).
func metadataCells(a fleet.Agent, cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		f, ok := a.Metadata[c]
		cell := "-"
		switch {
		case ok && f.Value != nil:
			cell = termsafe.Line(mdtext.Shorten(*f.Value, 40)) // what a task of the agent's worktree printed
		case ok && f.Error != nil:
			cell = "(error)"
		}
		b.WriteString("\t" + cell)
	}
	return b.String()
}

// printMetadata prints agent show's metadata section: one line per field,
// its description, then its value or its error (last: they may be long).
func printMetadata(w io.Writer, a fleet.Agent) {
	if a.MetadataError != "" {
		fmt.Fprintf(w, "%-14s%s\n", "Metadata:", "unreadable: "+termsafe.Line(a.MetadataError))
		return
	}
	if a.MetadataCount == 0 {
		fmt.Fprintf(w, "%-14s%s\n", "Metadata:", "none (no meta tasks in the worktree's Taskfile)")
		return
	}
	fmt.Fprintf(w, "Metadata (%d):\n", a.MetadataCount)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range a.MetadataNames() {
		f := a.Metadata[n]
		v := "-"
		if f.Value != nil {
			v = mdtext.Shorten(*f.Value, 60)
		}
		if f.Error != nil {
			v = strings.TrimPrefix(v+"  ", "-  ") + "error: " + mdtext.Shorten(*f.Error, 100)
		}
		listed := ""
		if f.Schema.IncludeInList {
			listed = " (listed)"
		}
		fmt.Fprintf(tw, "  %s\t%s%s\t%s\n", n, termsafe.Line(f.Schema.Description), listed, termsafe.Line(v))
	}
	tw.Flush()
}
