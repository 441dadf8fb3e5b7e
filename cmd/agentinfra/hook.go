package main

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
[ -n "$agentinfra_bin" ] || agentinfra_bin=` + shellQuote(self) + `
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

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func NewCmdHook(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Install git hooks that validate the matrix",
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
		Short: "Add a pre-commit hook that refuses commits with an invalid staged matrix",
		Long: `Writes .git/hooks/pre-commit, or appends to the one that is there (never
replacing what it holds). Running it again changes nothing. The hook runs
'agentinfra validate --staged' and refuses the commit when it reports errors.

The hook passes when no matrix is staged or tracked (a repository whose .agent/
is not committed yet, or is gitignored). Without agentinfra on PATH (or at the
path that installed the hook) it refuses the commit and says how to install it;
'git commit --no-verify' skips it.

With the pre-commit framework (https://pre-commit.com), no release is
published yet: use a local hook in .pre-commit-config.yaml, with agentinfra
on PATH:
  repos:
    - repo: local
      hooks:
        - id: agentinfra-validate
          name: agentinfra validate --staged
          entry: agentinfra validate --staged
          language: system
          pass_filenames: false
          always_run: true`,
		Example: `  agentinfra hook install`,
		Args:    cobra.NoArgs,
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
	return nil
}

// installPreCommit writes or extends the pre-commit hook of the repository at root.
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
	if i := bytes.Index(old, []byte(hookBegin)); i >= 0 {
		// Replace an older agentinfra block (it failed open without the binary).
		j := bytes.Index(old[i:], []byte(hookEnd+"\n"))
		if j < 0 {
			return "", "", fmt.Errorf("%s has %q but not %q: fix or remove the agentinfra block by hand, then run `agentinfra hook install` again", path, hookBegin, hookEnd)
		}
		block := hookBlock(self)
		cur := old[i : i+j+len(hookEnd)+1]
		if string(cur) == block {
			return path, "already installed in", nil
		}
		content := append(append(append([]byte{}, old[:i]...), block...), old[i+len(cur):]...)
		fi, err := os.Stat(path)
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(path, content, fi.Mode().Perm()|0o111); err != nil {
			return "", "", fmt.Errorf("update hook: %w", err)
		}
		return path, "updated", nil
	}
	content := append([]byte{}, old...)
	if len(content) > 0 && content[len(content)-1] != '\n' {
		content = append(content, '\n')
	}
	content = append(content, "\n"+hookBlock(self)...)
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, content, fi.Mode().Perm()|0o111); err != nil {
		return "", "", fmt.Errorf("append to hook: %w", err)
	}
	return path, "appended to", nil
}
