package contain

import (
	"fmt"
	"os"
	"path/filepath"
)

// RunDir makes a folder for the files agentinfra gives one agent CLI to
// read and that the agent must never write (its system prompt, gemini's
// policy, the socket of codex's hook): a new folder, 0700, below the
// user's state folder ($XDG_STATE_HOME/agentinfra/runs, else
// ~/.local/state/agentinfra/runs) — not below /tmp, where every agent may
// write (Sandbox.Write) and so could rewrite another run's policy before
// its CLI reads it. Where the state folder cannot be made, the folder is
// made in the temporary folder. remove deletes it.
//
// When env carries the run's sandbox (Sandbox.Env) and the kernel has
// Landlock, warning says so if the folder is one the sandbox lets the
// agent write after all, planned the way Setup will plan it for a CLI
// started in dir with env (clean as Setup's): a state folder inside the
// worktree, a HOME in /tmp. The run goes on, saying it once.
func RunDir(dir string, env []string, clean bool) (path, warning string, remove func(), err error) {
	base, berr := runsBase(os.Getenv)
	if berr == nil {
		berr = os.MkdirAll(base, 0o700)
	}
	if berr != nil {
		base = os.TempDir()
	}
	path, err = os.MkdirTemp(base, "run-")
	if err != nil {
		return "", "", nil, fmt.Errorf("create the folder of the run's own files: %w", err)
	}
	remove = func() { os.RemoveAll(path) }
	if s, _, boxed := fromEnv(env); boxed && Supported().ABI > 0 {
		s.plan(dir, ChildEnv(s.CLI, clean, env))
		real := path
		if r, err := filepath.EvalSymlinks(path); err == nil {
			real = r
		}
		for _, w := range s.Write {
			if within(real, w) {
				warning = fmt.Sprintf("the files agentinfra gives the agent CLI (its system prompt, its policy) are in %s, inside %s, which the agent may write: set XDG_STATE_HOME to a folder outside it", path, w)
				break
			}
		}
	}
	return path, warning, remove, nil
}

// runsBase is where RunDir makes its folders.
func runsBase(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "agentinfra", "runs"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "agentinfra", "runs"), nil
	}
	return "", fmt.Errorf("neither XDG_STATE_HOME nor HOME is set")
}
