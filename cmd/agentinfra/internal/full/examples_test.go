package full

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command and command group has examples in --help (issue 19: hook,
// role, project and metadata had none; task list repeated one): the whole
// tree, agentinfra-full's.
func TestEveryCommandHasExamples(t *testing.T) {
	f, _, _ := testFactory(t.TempDir(), cliOpts{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion" {
			return
		}
		if c.Example == "" {
			t.Errorf("%q has no examples", c.CommandPath())
		}
		seen := map[string]bool{}
		for _, l := range strings.Split(c.Example, "\n") {
			if l = strings.TrimSpace(l); l != "" && seen[l] {
				t.Errorf("%q repeats the example %q", c.CommandPath(), l)
			}
			seen[l] = true
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(f))
}
