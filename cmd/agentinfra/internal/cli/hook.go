package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/workspace"
)

const (
	hookBegin = "# >>> agentinfra pre-commit >>>"
	hookEnd   = "# <<< agentinfra pre-commit <<<"
)

// hookBlock refuses a commit whose staged matrix has errors. It prefers the
// agentinfra on PATH and falls back to the binary that installed the hook;
// with neither it fails closed, saying how to install agentinfra or bypass.
func hookBlock(self string) string {
	return hookBegin + `
# Refuses a commit whose staged .agent/DEVELOPMENT_MATRIX.md has errors, is
# empty or has no task table (agentinfra validate --staged). Passes when no
# matrix is staged or tracked.
agentinfra_bin=$(command -v agentinfra || true)
[ -n "$agentinfra_bin" ] || agentinfra_bin=` + ShellQuote(self) + `
if [ ! -x "$agentinfra_bin" ]; then
  {
    echo "agentinfra pre-commit: agentinfra is not on PATH (nor at $agentinfra_bin), so the matrix cannot be checked; the commit is refused."
    echo "  Install it from a clone of https://github.com/agentinfra/agentinfra (no release is published yet):"
    echo "    go install ./cmd/agentinfra     # into \$(go env GOPATH)/bin; put that folder on PATH"
    echo "    go build -o /usr/local/bin/agentinfra ./cmd/agentinfra"
    echo "  Or commit without the check: git commit --no-verify"
  } >&2
  exit 1
fi
"$agentinfra_bin" validate --staged || {
  echo "agentinfra pre-commit: the staged matrix has errors (above); fix them, git add, and commit again (or skip the check: git commit --no-verify)" >&2
  exit 1
}
` + hookEnd + "\n"
}

func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func NewCmdHook(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Install git hooks that validate the matrix",
		Example: `  agentinfra hook install
  agentinfra validate --staged   # what the hook runs`,
	}
	cmd.AddCommand(NewCmdHookInstall(f, nil))
	return cmd
}

// HookInstallOptions is what `hook install` runs with.
type HookInstallOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
}

func NewCmdHookInstall(f *Factory, runF func(context.Context, *HookInstallOptions) error) *cobra.Command {
	o := &HookInstallOptions{IO: f.IO, Workspace: f.Workspace}
	return &cobra.Command{
		Use:   "install",
		Short: "Add a pre-commit hook that refuses commits with an invalid staged matrix, and register the matrix's merge driver",
		Long: `Writes .git/hooks/pre-commit. An existing shell hook (#!/bin/sh, bash, ...,
or no #! line) keeps everything it holds: the check goes right after its #!
line, so that it runs before the hook's own commands (appended at the end it
would never run after an 'exit 0' or an 'exec ...'). Running it again changes
nothing; an older agentinfra block is replaced. A hook in another language
(Python, Node, ...) and the pre-commit framework's hook are left alone and
refused (exit 1), saying what to do instead.

The hook runs 'agentinfra validate --staged' and refuses the commit when it
reports errors: a matrix with errors, empty, with no task table or no row (when
HEAD has rows), or deleted or moved (git rm, git mv, git rm -r .agent). It passes
when no matrix is staged or tracked (a repository whose .agent/ is not committed
yet, or is gitignored). Without agentinfra on PATH (or at the path that installed
the hook) it refuses the commit and says how to install it; 'git commit
--no-verify' skips it. The hook also warns (without refusing) when .gitattributes names
the matrix's merge driver and this clone's git config lacks it.

It also registers the matrix's merge driver (see 'agentinfra merge-driver --help'): the
line '.agent/DEVELOPMENT_MATRIX.md merge=agentinfra' in the workspace's .gitattributes
(added when missing; commit it, so that every clone names the driver) and this clone's
git config merge.agentinfra.name and merge.agentinfra.driver, which git never copies
with a clone: run it once in every clone. The driver runs this binary by its absolute
path (git is often run with another PATH: IDEs, GUI clients), else agentinfra on PATH,
else git's own line merge.

With the pre-commit framework (https://pre-commit.com), no release is
published yet: use a local hook in .pre-commit-config.yaml, with agentinfra
on PATH (or this repository's .pre-commit-hooks.yaml: repo: a clone of
agentinfra, rev: a commit, hooks: [{id: agentinfra-validate}]):
  repos:
    - repo: local
      hooks:
        - id: agentinfra-validate
          name: agentinfra validate --staged
          entry: agentinfra validate --staged
          language: system
          pass_filenames: false
          always_run: true`,
		Example: `  agentinfra hook install
  git commit -m "..."          # the hook checks the staged matrix
  git commit --no-verify       # skip the check once, on purpose`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return hookInstallRun(cmd.Context(), o)
		},
	}
}

func hookInstallRun(ctx context.Context, o *HookInstallOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	self, _ := os.Executable()
	path, action, err := installPreCommit(ctx, ws.Root, self)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "%s %s\n", action, path)
	notes, err := registerMergeDriver(ctx, ws.Root, self)
	if err != nil {
		return fmt.Errorf("register the matrix's merge driver: %w", err)
	}
	for _, n := range notes {
		fmt.Fprintln(o.IO.Out, n)
	}
	return nil
}

// installPreCommit writes the pre-commit hook of the repository at root, or
// puts the agentinfra block into the shell hook that is there, right after
// its #! line: appended at the end it would never run after the hook's own
// `exit 0` or `exec ...`. A hook in another language (Python, Node, ...)
// cannot hold a shell block, and the pre-commit framework's hook is rewritten
// by `pre-commit install`: both are refused (errHookNotShell), saying what to
// do instead, and left as they are.
func installPreCommit(ctx context.Context, root, self string) (path, action string, err error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--git-path", "hooks").Output()
	if err != nil {
		return "", "", fmt.Errorf("find git hooks folder in %s: %w; is it a git repository? (run `git init`)", root, err)
	}
	dir := strings.TrimSpace(string(out))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create hooks folder: %w", err)
	}
	path = filepath.Join(dir, "pre-commit")
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		content := "#!/bin/sh\n" + hookBlock(self)
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			return "", "", fmt.Errorf("write hook: %w", err)
		}
		return path, "created", nil
	case err != nil:
		return "", "", fmt.Errorf("read hook: %w", err)
	}
	if err := hookTakesShellBlock(path, old); err != nil {
		return "", "", err
	}
	rest, had, err := withoutHookBlock(path, old)
	if err != nil {
		return "", "", err
	}
	content := insertHookBlock(rest, hookBlock(self))
	if bytes.Equal(content, old) {
		return path, "already installed in", nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, content, fi.Mode().Perm()|0o111); err != nil {
		return "", "", fmt.Errorf("write hook: %w", err)
	}
	if had {
		return path, "updated", nil
	}
	return path, "added the check (at the top, so it runs before the hook's own commands) to", nil
}

// errHookNotShell marks an existing pre-commit hook agentinfra does not edit.
var errHookNotShell = errors.New("the pre-commit hook is not a shell script agentinfra can add its check to")

// preCommitConfigSnippet is how a pre-commit framework user adds the check.
const preCommitConfigSnippet = `  - repo: local
    hooks:
      - id: agentinfra-validate
        name: agentinfra validate --staged
        entry: agentinfra validate --staged
        language: system
        pass_filenames: false
        always_run: true`

// hookTakesShellBlock refuses a hook agentinfra's shell block cannot go
// into: the pre-commit framework's, or a script in another language.
func hookTakesShellBlock(path string, hook []byte) error {
	if bytes.Contains(hook, []byte("File generated by pre-commit")) {
		return fmt.Errorf("%w: %s is the pre-commit framework's hook (https://pre-commit.com), which `pre-commit install` rewrites; nothing was changed. Add agentinfra to .pre-commit-config.yaml instead, under repos:\n%s\n(or, from a clone of agentinfra pinned to a commit: repo: /path/to/agentinfra, rev: <commit>, hooks: [{id: agentinfra-validate}]; see .pre-commit-hooks.yaml), then run `pre-commit install`",
			errHookNotShell, path, preCommitConfigSnippet)
	}
	if interp := hookInterpreter(hook); interp != "" && !shellInterpreter(interp) {
		return fmt.Errorf("%w: %s is a %s script, and agentinfra's check is a shell block that cannot go into it; nothing was changed. Run the check from your hook instead — it must fail the commit when this fails:\n  agentinfra validate --staged\n(in Python: subprocess.run([\"agentinfra\", \"validate\", \"--staged\"], check=True)), or move your hook to a file of its own and call it from a shell hook that `agentinfra hook install` can then extend",
			errHookNotShell, path, interp)
	}
	return nil
}

// hookInterpreter names the program a hook's #! line runs ("" without one:
// git runs such a file with the shell).
func hookInterpreter(hook []byte) string {
	if !bytes.HasPrefix(hook, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(hook[2:], []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return ""
	}
	prog := filepath.Base(f[0])
	if prog == "env" {
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") {
				return filepath.Base(a)
			}
		}
	}
	return prog
}

func shellInterpreter(prog string) bool {
	switch prog {
	case "sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "busybox":
		return true
	}
	return false
}

// withoutHookBlock returns the hook with an agentinfra block (of any version,
// wherever it is) taken out, and whether there was one.
func withoutHookBlock(path string, hook []byte) ([]byte, bool, error) {
	i := bytes.Index(hook, []byte(hookBegin))
	if i < 0 {
		return hook, false, nil
	}
	j := bytes.Index(hook[i:], []byte(hookEnd+"\n"))
	if j < 0 {
		return nil, false, fmt.Errorf("%s has %q but not %q: fix or remove the agentinfra block by hand, then run `agentinfra hook install` again", path, hookBegin, hookEnd)
	}
	end := i + j + len(hookEnd) + 1
	if i > 0 && hook[i-1] == '\n' && end < len(hook) && hook[end] == '\n' && (i < 2 || hook[i-2] == '\n') {
		end++ // the blank line an older install left around the block
	}
	return append(append([]byte{}, hook[:i]...), hook[end:]...), true, nil
}

// insertHookBlock puts block after the hook's #! line (at the start of a
// hook without one).
func insertHookBlock(hook []byte, block string) []byte {
	at := 0
	if bytes.HasPrefix(hook, []byte("#!")) {
		if k := bytes.IndexByte(hook, '\n'); k >= 0 {
			at = k + 1
		} else {
			hook, at = append(append([]byte{}, hook...), '\n'), len(hook)+1
		}
	}
	out := make([]byte, 0, len(hook)+len(block))
	out = append(out, hook[:at]...)
	out = append(out, block...)
	return append(out, hook[at:]...)
}
