package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/task"
)

// FileName is the change record's name in the task folder
// (.agent/tasks/{id}_{slug}/change.json).
const FileName = "change.json"

// PinPrefix is where each change's last commit is pinned
// (refs/agentinfra/changes/{task ID}), so that it stays in the repository
// whatever happens to the agent's branch, until the change lands.
const PinPrefix = "refs/agentinfra/changes/"

// fetchPrefix is where a change published on a remote is fetched before
// it is checked (refs/agentinfra/fetch/{task ID}); gone once recorded.
const fetchPrefix = "refs/agentinfra/fetch/"

// The states of a change.
const (
	// StateReview: waiting for a person (or lands with approve).
	StateReview = "review"
	// StateChanges: sent back with comments; the agent works on it again.
	StateChanges = "changes_requested"
	// StateConflict: a landing was refused because the change conflicts
	// with the base branch; the task stays in REVIEW.
	StateConflict = "conflict"
	// StateLanded: on the base branch.
	StateLanded = "landed"
)

// Change is a task's change: the commits of an agent's branch from the
// base it started from, as recorded when the agent's run ended, with its
// checks, the review's comments and, once approved, its landing.
type Change struct {
	Version int    `json:"version"`
	Task    string `json:"task"`
	Agent   string `json:"agent"`
	// Run is the run whose end recorded the change ("" when recorded by hand).
	Run string `json:"run,omitempty"`
	// Worktree is the agent's worktree (absolute), where checks run; ""
	// for a change made in a Coder workspace (Remote).
	Worktree string `json:"worktree"`
	// Remote is the remote a change made in a Coder workspace was fetched
	// from ("" for a change made on this machine).
	Remote string `json:"remote,omitempty"`
	// GitDir is the repository's common git directory (absolute).
	GitDir string `json:"git_dir"`
	// Branch is the agent's branch (agent/papi), BaseBranch the branch the
	// change lands on (main).
	Branch     string `json:"branch"`
	BaseBranch string `json:"base_branch"`
	// Base is the commit the work started from; Head the change's last
	// commit. The change is Base..Head.
	Base    string   `json:"base"`
	Head    string   `json:"head"`
	Commits []Commit `json:"commits"`
	// Committed is the commit that recording made of what the agent left
	// uncommitted ("" when it left nothing).
	Committed  string    `json:"committed,omitempty"`
	RecordedAt time.Time `json:"recorded_at"`
	// Round counts the recordings: 1, then one more after each request for
	// changes.
	Round int `json:"round"`
	// Summary and FinalMessage are the run's, when the caller had them.
	Summary      string `json:"summary,omitempty"`
	FinalMessage string `json:"final_message,omitempty"`
	State        string `json:"state"`
	// Conflict names the files of the refused landing (StateConflict).
	Conflict []string  `json:"conflict,omitempty"`
	Checks   *CheckRun `json:"checks,omitempty"`
	Comments []Comment `json:"comments,omitempty"`
	Landed   *Landing  `json:"landed,omitempty"`
	// Sent is the run a request for changes was given to the agent in
	// (nil until it is: the agent was busy, it gets it when idle).
	Sent *Sent `json:"sent,omitempty"`
	// Reviewing is the reviewer agent's run on the change (review.reviewer),
	// Verdicts what reviewers said, round by round.
	Reviewing *Sent     `json:"reviewing,omitempty"`
	Verdicts  []Verdict `json:"verdicts,omitempty"`
}

// Sent is a run an agent was started in for a change: its agent, the run,
// the round of the change and when.
type Sent struct {
	Agent string    `json:"agent"`
	Run   string    `json:"run"`
	Round int       `json:"round"`
	At    time.Time `json:"at"`
}

// Commit is one commit of a change.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
}

// Comment is one review comment: on a line of a file, on a file, or on the
// whole change (File "").
type Comment struct {
	Round int       `json:"round"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
	File  string    `json:"file,omitempty"`
	Line  int       `json:"line,omitempty"`
	Text  string    `json:"text"`
}

// Where is the comment's place as the prompt and the README say it:
// "review/land.go:42", "review/land.go", or "" for the whole change.
func (c Comment) Where() string {
	switch {
	case c.File == "":
		return ""
	case c.Line > 0:
		return fmt.Sprintf("%s:%d", c.File, c.Line)
	}
	return c.File
}

// Landing is how a change landed.
type Landing struct {
	// Commit is the base branch's new tip; "" when the change made no
	// difference to the base (nothing was committed).
	Commit   string `json:"commit,omitempty"`
	Strategy string `json:"strategy"`
	// Onto is the base branch's tip the change landed on.
	Onto   string    `json:"onto"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Forced bool      `json:"forced,omitempty"`
}

const recordVersion = 1

// Span is the two commits whose diff is the change: its base and last
// commit, or once it has landed, the base branch before and after (the
// agent's commits may be gone by then: a squash or rebase replaced them).
func (c Change) Span() (from, to string) {
	if l := c.Landed; l != nil && l.Commit != "" {
		return l.Onto, l.Commit
	}
	return c.Base, c.Head
}

// folder is task id's folder, or a NotFound error.
func (s *Service) folder(ctx context.Context, id string) (string, error) {
	info, err := task.ShowTask(ctx, s.ws, id)
	if err != nil {
		return "", err
	}
	if info.Dir == "" {
		return "", &agenterr.Error{Kind: agenterr.NotFound, Field: "id", Value: id,
			Reason: fmt.Sprintf("task %s has no folder, so no change is recorded for it", id)}
	}
	return info.Dir, nil
}

// load reads the change record of task id.
func (s *Service) load(ctx context.Context, id string) (Change, string, error) {
	dir, err := s.folder(ctx, id)
	if err != nil {
		return Change{}, "", err
	}
	c, err := readChange(filepath.Join(dir, FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return Change{}, "", &agenterr.Error{Kind: agenterr.NotFound, Field: "id", Value: id,
			Reason: fmt.Sprintf("task %s has no change recorded: a change is recorded when an agent's run on the task ends (%s)", id, s.ws.RelPath(filepath.Join(dir, FileName)))}
	}
	return c, dir, err
}

func readChange(path string) (Change, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Change{}, err
	}
	var c Change
	if err := json.Unmarshal(b, &c); err != nil {
		return Change{}, &agenterr.Error{Kind: agenterr.Invalid, File: path, Reason: "the change record does not parse: " + err.Error() + "; repair it, or remove it and record the change again"}
	}
	if c.Version > recordVersion {
		return Change{}, &agenterr.Error{Kind: agenterr.Invalid, File: path, Reason: fmt.Sprintf("the change record is version %d; this agentinfra reads up to %d: upgrade agentinfra", c.Version, recordVersion)}
	}
	return c, nil
}

// save replaces the change record in dir.
func save(dir string, c Change) error {
	c.Version = recordVersion
	b, err := jsonout.Marshal(c)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, FileName), b)
}

// updateChange is the one way a recorded change is modified: under the
// repository's review lock, it reads the record again, lets fn change it
// (fn's error writes nothing), and replaces the file.
func (s *Service) updateChange(ctx context.Context, id string, fn func(c *Change) error) (Change, error) {
	c, dir, err := s.load(ctx, id)
	if err != nil {
		return Change{}, err
	}
	err = withLock(ctx, c.GitDir, func() error {
		cur, err := readChange(filepath.Join(dir, FileName))
		if err != nil {
			return err
		}
		if err := fn(&cur); err != nil {
			return err
		}
		c = cur
		return save(dir, c)
	})
	return c, err
}
