package gemini

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/supervision/policy"
)

// readTools are gemini's tools that only read.
var readTools = []string{"read_file", "read_many_files", "glob", "grep_search", "search_file_content", "list_directory"}

// PolicyTOML is a gemini policy file (--policy) of a supervised gemini,
// allowing what the policy approves and gemini can express; "" when there
// is nothing.
func PolicyTOML(p *policy.Policy) string {
	if p.AskAll {
		return ""
	}
	var b strings.Builder
	rule := func(tool, extra string) {
		fmt.Fprintf(&b, "[[rule]]\ntoolName = %q\n%sdecision = \"allow\"\npriority = 500\n\n", tool, extra)
	}
	for _, t := range p.File.AutoApprove.Tools {
		if slices.Contains(readTools, t) {
			rule(t, "")
		}
	}
	for _, c := range p.NativeCommands() {
		rule("run_shell_command", fmt.Sprintf("commandRegex = %q\n", "^"+regexp.QuoteMeta(c)+"$"))
	}
	return b.String()
}
