package review

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/supervision/policy"
	"github.com/agentinfra/agentinfra/workspace"
)

// CheckRun is one run of a change's checks.
type CheckRun struct {
	// Head is the commit they ran on: a run on an older commit is not the
	// change's.
	Head    string        `json:"head"`
	At      time.Time     `json:"at"`
	Passed  bool          `json:"passed"`
	Results []CheckResult `json:"results"`
}

// CheckResult is one check's outcome.
type CheckResult struct {
	Command string `json:"command"`
	// ExitCode is the command's (-1 when it did not run or was killed).
	ExitCode int  `json:"exit_code"`
	Passed   bool `json:"passed"`
	TimedOut bool `json:"timed_out,omitempty"`
	// DurationMS is how long it ran, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Output is the end of what it printed (stdout and stderr together).
	Output string `json:"output,omitempty"`
	// Error says why it did not run ("" when it ran).
	Error string `json:"error,omitempty"`
}

// Outcome says in a few words how the check ended.
func (r CheckResult) Outcome() string {
	switch {
	case r.Passed:
		return "passed"
	case r.TimedOut:
		return "timed out"
	case r.Error != "":
		return r.Error
	}
	return fmt.Sprintf("exit code %d", r.ExitCode)
}

// Commands are the commands the run ran, in order.
func (r *CheckRun) Commands() []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.Command)
	}
	return out
}

// The states of a change's checks, as list and show print them.
const (
	ChecksNone   = "none"    // none configured
	ChecksNotRun = "not run" // not on the change's last commit
	ChecksPassed = "passed"
	ChecksFailed = "failed"
)

// ChecksState is the state of c's checks against the configured ones.
func ChecksState(c Change, checks []string) string {
	switch r := c.Checks; {
	case len(checks) == 0:
		return ChecksNone
	case r == nil || r.Head != c.Head || !slices.Equal(r.Commands(), checks):
		return ChecksNotRun
	case r.Passed:
		return ChecksPassed
	}
	return ChecksFailed
}

// outputTail is how much of a check's output is kept with the change.
const outputTail = 4 << 10

// Check runs the review.checks of task id's change in the agent's
// worktree, one after the other, each without a shell (the command line
// split as the command registry splits it), within review.check_timeout,
// and keeps the results with the change. The worktree must be at the
// change's last commit with nothing uncommitted: the checks are the
// change's. No process a check started outlives it.
func (s *Service) Check(ctx context.Context, id string) (CheckRun, error) {
	set, err := s.settings()
	if err != nil {
		return CheckRun{}, err
	}
	c, _, err := s.load(ctx, id)
	if err != nil {
		return CheckRun{}, err
	}
	if c.State == StateLanded {
		return CheckRun{}, &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Reason: fmt.Sprintf("task %s's change has landed: there is nothing left to check", id)}
	}
	if len(set.Checks) == 0 {
		return CheckRun{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "review.checks", Reason: "no checks are configured: list them in the review section of .agent/config.yaml, e.g. checks: [\"go test ./...\"]"}
	}
	argvs := make([][]string, len(set.Checks))
	for i, line := range set.Checks {
		if argvs[i], err = policy.PlainCommand(line); err != nil {
			return CheckRun{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "review.checks", Reason: err.Error()}
		}
	}
	if err := atChange(ctx, c); err != nil {
		return CheckRun{}, err
	}
	run := CheckRun{Head: c.Head, At: s.now().UTC(), Passed: true}
	for i, argv := range argvs {
		r := runCheck(ctx, c.Worktree, set.Checks[i], argv, set.CheckTimeout)
		if ctx.Err() != nil {
			return CheckRun{}, ctx.Err()
		}
		run.Passed = run.Passed && r.Passed
		run.Results = append(run.Results, r)
	}
	_, err = s.updateChange(ctx, id, func(cur *Change) error {
		if cur.Head != run.Head || cur.State == StateLanded {
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Reason: fmt.Sprintf("task %s's change moved while its checks ran (now at %s): check it again", id, short(cur.Head))}
		}
		cur.Checks = &run
		return nil
	})
	if err == nil {
		s.publish(c, MoveChecked, checkWord(run.Passed), "")
	}
	return run, err
}

// checkWord is a run's outcome in one word.
func checkWord(passed bool) string {
	if passed {
		return ChecksPassed
	}
	return ChecksFailed
}

// atChange refuses a worktree that is not at the change's last commit
// with nothing uncommitted.
func atChange(ctx context.Context, c Change) error {
	if c.Remote != "" {
		return errRemoteChecks(c)
	}
	g := git{dir: c.Worktree}
	head, err := g.rev(ctx, "HEAD")
	if err != nil {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "worktree", Reason: fmt.Sprintf("the agent's worktree %s cannot be read: the checks run there", c.Worktree), Err: err}
	}
	if head != c.Head {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "worktree", Reason: fmt.Sprintf("the agent's worktree %s is at %s, not at the change's last commit %s (the agent has moved on, or committed since the change was recorded): the checks run on the change", c.Worktree, short(head), short(c.Head))}
	}
	dirty, err := g.dirty(ctx)
	if err != nil {
		return err
	}
	if len(dirty) > 0 {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "worktree", Reason: fmt.Sprintf("the agent's worktree %s has uncommitted changes (%s): the checks would not be the change's", c.Worktree, listFiles(dirty))}
	}
	return nil
}

// runCheck runs one check in dir.
func runCheck(ctx context.Context, dir, line string, argv []string, timeout time.Duration) CheckResult {
	r := CheckResult{Command: line, ExitCode: -1}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	scope := contain.New("check")
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = checkEnv(scope)
	out := &tail{max: outputTail}
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r.DurationMS = time.Since(start).Milliseconds()
	// What the check started and left behind (a server, a watcher) ends
	// with it.
	scope.Kill()
	r.Output = out.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.ExitCode, r.Passed = 0, true
	case cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		r.TimedOut = true
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
	default:
		r.Error = err.Error()
	}
	return r
}

// checkEnv is the environment of a check, a command of the repository an
// agent may have written: contain.ChildEnv's (no agentinfra credential; in
// the user's allowlist mode, only what it passes), without what would
// point the check elsewhere than the worktree it runs in (the workspace
// root an agent run's environment names, a hook's GIT_DIR), marked as the
// check's.
func checkEnv(scope contain.Scope) []string {
	env := slices.DeleteFunc(contain.ChildEnv("", false), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == workspace.EnvRoot || k == contain.EnvRun || repoVar(k)
	})
	return append(env, scope.Env())
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf, t.cut = append([]byte{}, t.buf[len(t.buf)-t.max:]...), true
	}
	return len(p), nil
}

func (t *tail) String() string {
	b := t.buf
	if len(b) > t.max {
		b, t.cut = b[len(b)-t.max:], true
	}
	if t.cut {
		return "…" + string(b)
	}
	return string(b)
}
