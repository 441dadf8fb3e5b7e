package full

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// A flag's help names its value in one word: pflag takes a `quoted` part of
// the usage as the value's name, so `agentinfra approve` in
// --approval-mode's usage showed as "--approval-mode agentinfra approve"
// (issue 30).
func TestEveryFlagNamesItsValueInOneWord(t *testing.T) {
	f, _, _ := testFactory(t.TempDir(), cliOpts{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(fl); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s shows its value as %q", c.CommandPath(), fl.Name, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(f))
}
