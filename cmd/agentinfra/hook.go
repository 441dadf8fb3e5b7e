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
)

func init() { registerCommand(newCmdHook) }

const (
	hookBegin = "# >>> agentinfra pre-commit >>>"
	hookEnd   = "# <<< agentinfra pre-commit <<<"
)

// hookBlock refuses a commit whose staged matrix has errors. It prefers the
// agentinfra on PATH and falls back to the binary that installed the hook.
func hookBlock(self string) string {
	return hookBegin + `
# Refuses a commit whose staged .agent/DEVELOPMENT_MATRIX.md has errors.
agentinfra_bin=$(command -v agentinfra || true)
[ -n "$agentinfra_bin" ] || agentinfra_bin=` + shellQuote(self) + `
if [ -x "$agentinfra_bin" ]; then
  "$agentinfra_bin" validate --staged || {
    echo "agentinfra: the staged matrix has errors (above); fix them, git add, and commit again" >&2
    exit 1
  }
else
  echo "agentinfra: not found; skipping the matrix check (install it: go install github.com/agentinfra/agentinfra/cmd/agentinfra@latest)" >&2
fi
` + hookEnd + "\n"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func newCmdHook(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Install git hooks that validate the matrix",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "install",
		Short: "Add a pre-commit hook that refuses commits with an invalid staged matrix",
		Long: `Writes .git/hooks/pre-commit, or appends to the one that is there (never
replacing what it holds). Running it again changes nothing. The hook runs
'agentinfra validate --staged' and refuses the commit when it reports errors.

With the pre-commit framework, use .pre-commit-hooks.yaml instead:
  - repo: https://github.com/agentinfra/agentinfra
    hooks: [{id: agentinfra-validate}]`,
		Example: `  agentinfra hook install`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			self, _ := os.Executable()
			path, action, err := installPreCommit(cmd.Context(), ws.Root, self)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "%s %s\n", action, path)
			return nil
		},
	})
	return cmd
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
	if bytes.Contains(old, []byte(hookBegin)) {
		return path, "already installed in", nil
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
