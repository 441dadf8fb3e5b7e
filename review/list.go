package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Item is one task in review, with its change.
type Item struct {
	Task matrix.Task `json:"task"`
	// Change is nil when the task has none recorded (moved to REVIEW by
	// hand, or by an agent with no worktree).
	Change *Change `json:"change"`
	// Files, Added and Deleted are the change's size against its base
	// (binary files count as files, not lines).
	Files   int `json:"files"`
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
	// Checks is ChecksState's word.
	Checks string `json:"checks"`
	// Age is how long the change has waited (since it was recorded), in
	// seconds.
	AgeSeconds int64 `json:"age_seconds"`
	// Problem says why the change could not be read ("" when it could).
	Problem string `json:"problem,omitempty"`
}

// State is the change's state, or "no change" without one.
func (it Item) State() string {
	if it.Change == nil {
		return "no change"
	}
	return it.Change.State
}

// List returns the tasks in REVIEW, in the matrix's order, each with its
// change. A change that cannot be read is listed with its Problem.
func (s *Service) List(ctx context.Context) ([]Item, error) {
	set, err := s.settings()
	if err != nil {
		return nil, err
	}
	v, err := task.LoadVocabulary(s.ws)
	if err != nil {
		return nil, err
	}
	word, err := task.WorkflowStatus(v, task.StatusReview)
	if err != nil {
		return nil, err
	}
	tasks, err := task.ListTasks(ctx, s.ws, matrix.Query{Status: []string{word}})
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, s.item(t, set.Checks))
	}
	measure(ctx, out)
	return out, nil
}

// item is t with its change, not yet measured.
func (s *Service) item(t matrix.Task, checks []string) Item {
	it := Item{Task: t}
	dir, _ := task.Folder(s.ws, nil, t.ID)
	if dir == "" {
		return it
	}
	c, err := readChange(filepath.Join(dir, FileName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return it
	case err != nil:
		it.Problem = err.Error()
		return it
	}
	it.Change, it.Checks = &c, ChecksState(c, checks)
	it.AgeSeconds = int64(s.now().Sub(c.RecordedAt) / time.Second)
	return it
}

// measure fills the items' sizes: one git diff-tree per repository for
// all its changes (a process per change made a list of 50 take a second
// on a busy machine).
func measure(ctx context.Context, items []Item) {
	byRepo := map[string][]int{}
	for i, it := range items {
		if it.Change != nil && it.Problem == "" {
			byRepo[it.Change.GitDir] = append(byRepo[it.Change.GitDir], i)
		}
	}
	for gitDir, idx := range byRepo {
		var in strings.Builder
		for _, i := range idx {
			from, to := items[i].Change.Span()
			fmt.Fprintf(&in, "%s %s\n", to, from) // the commit to, with from as its parent
		}
		b, err := git{dir: gitDir}.run(ctx, strings.NewReader(in.String()), "diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-textconv", "--numstat")
		if err != nil {
			// One change's commits are missing: measured one by one, the
			// error goes to its own item.
			for _, i := range idx {
				from, to := items[i].Change.Span()
				if items[i].Files, items[i].Added, items[i].Deleted, err = stat(ctx, git{dir: gitDir}, from, to); err != nil {
					items[i].Problem = err.Error()
				}
			}
			continue
		}
		byHead := map[string][]FileStat{}
		head := ""
		for _, f := range splitNUL(b) {
			if !strings.Contains(f, "\t") {
				head = f // a diff's header: the commit
				continue
			}
			byHead[head] = append(byHead[head], parseNumstat(f))
		}
		for _, i := range idx {
			from, to := items[i].Change.Span()
			if from == to {
				continue
			}
			for _, fs := range byHead[to] {
				items[i].Files++
				items[i].Added += fs.Added
				items[i].Deleted += fs.Deleted
			}
		}
	}
}

// FileStat is one file of a change.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// fileStats is git's --numstat of base..head.
func fileStats(ctx context.Context, g git, base, head string) ([]FileStat, error) {
	if base == head {
		return nil, nil
	}
	recs, err := g.list(ctx, "diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--numstat", "-z", base, head)
	if err != nil {
		return nil, err
	}
	out := make([]FileStat, 0, len(recs))
	for _, r := range recs {
		out = append(out, parseNumstat(r))
	}
	return out, nil
}

// parseNumstat reads one record of git's --numstat -z: added, deleted,
// path, tab-separated ("-" for a binary file's counts).
func parseNumstat(r string) FileStat {
	f := strings.SplitN(r, "\t", 3)
	if len(f) != 3 {
		return FileStat{Path: r}
	}
	fs := FileStat{Path: f[2], Binary: f[0] == "-"}
	fs.Added, _ = strconv.Atoi(f[0])
	fs.Deleted, _ = strconv.Atoi(f[1])
	return fs
}

// stat is the change's size: files, lines added and deleted.
func stat(ctx context.Context, g git, base, head string) (files, added, deleted int, err error) {
	st, err := fileStats(ctx, g, base, head)
	for _, f := range st {
		added += f.Added
		deleted += f.Deleted
	}
	return len(st), added, deleted, err
}

// Detail is a change as review show prints it.
type Detail struct {
	Item
	Stat []FileStat `json:"stat"`
	// Review is the task README's Review section, item by item.
	Review []string `json:"review"`
}

// Show returns task id's change (in review or not) with its files and
// the task README's Review section.
func (s *Service) Show(ctx context.Context, id string) (Detail, error) {
	set, err := s.settings()
	if err != nil {
		return Detail{}, err
	}
	info, err := task.ShowTask(ctx, s.ws, id)
	if err != nil {
		return Detail{}, err
	}
	if _, _, err := s.load(ctx, id); err != nil {
		return Detail{}, err
	}
	items := []Item{s.item(info.Task, set.Checks)}
	measure(ctx, items)
	d := Detail{Item: items[0], Review: task.ReviewLines([]byte(info.Readme))}
	if d.Review == nil {
		d.Review = []string{}
	}
	if c := d.Change; c != nil {
		from, to := c.Span()
		if d.Stat, err = fileStats(ctx, git{dir: c.GitDir}, from, to); err != nil {
			return Detail{}, err
		}
	}
	return d, nil
}

// DiffOptions say how Diff prints a change.
type DiffOptions struct {
	// Stat prints git's --stat instead of the patch.
	Stat bool
	// Width is the terminal's width for --stat (0: git's default).
	Width int
}

// Diff writes task id's change against its base (Change.Span), as git diff prints it
// (no colour: callers colour it, after making what the agent wrote inert
// for a terminal).
func (s *Service) Diff(ctx context.Context, id string, w io.Writer, o DiffOptions) error {
	c, _, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	args := []string{"-C", c.GitDir, "diff", "--no-ext-diff", "--no-textconv", "--no-color"}
	if o.Stat {
		args = append(args, "--stat")
		if o.Width > 0 {
			args = append(args, fmt.Sprintf("--stat-width=%d", o.Width))
		}
	}
	from, to := c.Span()
	cmd := exec.CommandContext(ctx, "git", append(args, from, to, "--")...)
	cmd.Env = gitEnv()
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return &gitError{args: args[2:], stderr: stderr.String(), err: err}
	}
	return nil
}
