package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// In a process that cannot replace itself (ExecFull nil), a command of
// agentinfra-full fails with the unavailable kind's exit code and says
// which binary runs it; its name is still listed with its line, and no
// light command has its name.
func TestHeavyStubsWithoutHandOff(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"inbox"}, {"agent", "list", "--json"}, {"serve", "--help"}, {"help", "dispatch"}} {
		code, out, errOut := runCLI(t, dir, cliOpts{}, args...)
		if code != 6 || out != "" || !strings.Contains(errOut, FullBinary) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 6 naming %s", args, code, out, errOut, FullBinary)
		}
	}
	_, out, _ := runCLI(t, dir, cliOpts{}, "--help")
	for _, h := range HeavyCommands {
		if !strings.Contains(out, "  "+h.Name+" ") || !strings.Contains(out, h.Short) {
			t.Errorf("--help does not list %s with %q:\n%s", h.Name, h.Short, out)
		}
	}
	f, _, _ := testFactory(dir, cliOpts{})
	light := NewRootCmd(f, func(*Factory) []*cobra.Command { return nil })
	for _, h := range HeavyCommands {
		for _, c := range light.Commands() {
			if c.Name() == h.Name {
				t.Errorf("%s is both a light command and one of agentinfra-full's", h.Name)
			}
		}
	}
}
