package policy

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/contain"
)

// Registry is the named commands an operator may run in a session's
// workspace from a remote surface: nothing else runs remotely. A command is
// a plain argv (words, quotes allowed): it runs without a shell.
type Registry map[string][]string

func newRegistry(m map[string]string) (Registry, error) {
	r := Registry{}
	for name, line := range m {
		argv, err := PlainCommand(line)
		if err != nil {
			return r, fmt.Errorf("commands.%s: %w", name, err)
		}
		r[name] = argv
	}
	return r, nil
}

// PlainCommand splits a command line into the argv of one plain command,
// as bash would split its words (quotes allowed), for running it without
// a shell: the registry's commands, the review's checks. A line only a
// shell can run (a pipe, a redirection, a variable, a substitution, two
// commands) is refused.
func PlainCommand(line string) ([]string, error) {
	p := parseCommand(line)
	if p.Dynamic || len(p.Cmds) != 1 || len(p.Cmds[0].Redirects) > 0 {
		return nil, fmt.Errorf("%q must be one plain command (no pipes, redirections, variables or substitutions): it runs without a shell", line)
	}
	return p.Cmds[0].Args, nil
}

// Names lists the registered names, sorted.
func (r Registry) Names() []string {
	var out []string
	for n := range r {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Run runs the named command in dir and returns its combined output. A
// name not in the registry is refused. The command may run code an agent
// wrote (go test): it gets the environment an agent would
// (contain.ChildEnv), without agentinfra's credentials.
func (r Registry) Run(ctx context.Context, name, dir string) ([]byte, error) {
	argv, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("%q is not in the command registry (the commands section of .agent/%s): registered are %s", name, FileName, strings.Join(r.Names(), ", "))
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = contain.ChildEnv("", false)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
