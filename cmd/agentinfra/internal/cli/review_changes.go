package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

// ReviewChangesOptions is what `review changes` runs with.
type ReviewChangesOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	ID       string
	Comments []review.CommentInput
	JSON     bool
	// Deliver starts the idle agents on what waits for them (nil: `agent
	// deliver` of FullBinary, which links the fleet).
	Deliver func(ctx context.Context, root string) ([]review.Delivery, error)
}

func NewCmdReviewChanges(f *Factory, runF func(context.Context, *ReviewChangesOptions) error) *cobra.Command {
	o := &ReviewChangesOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Deliver: deliverThroughFull}
	cmd := &cobra.Command{
		Use:   "changes ID --comment TEXT [--file PATH [--line N]]...",
		Short: "Send a change back to its agent with comments; the task goes back to IN_PROGRESS",
		Long: `changes sends a task's change back: each --comment is kept with the task (in its
README's Review section, readable in git, and in change.json), the task goes from
REVIEW back to IN_PROGRESS with you as the actor, still held by the same agent, and
the prompt the agent will get — every comment with its file and line — is printed.
The agent is started on it (its CLI session goes on) when it is idle; a busy agent
gets it when its run ends (agent deliver starts it by hand).

--file and --line apply to the --comment before them: a comment on a line of a file,
on a file, or (alone) on the whole change. A file is a path in the repository.`,
		Example: `  agentinfra review changes 3f9a2c --comment "return the error instead of logging it" --file fetch.go --line 42
  agentinfra review changes 3f9a2c --comment "add a test for the retry" --comment "rename Do to Fetch" --file fetch.go
  agentinfra review changes 3f9a2c --comment "rebase onto main and resolve the conflict" --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "REVIEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if len(o.Comments) == 0 {
				return UsageErrorf("--comment is required: say what the agent is to change\nrun 'agentinfra review changes --help' for usage")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reviewChangesRun(cmd.Context(), o)
		},
	}
	cmd.Flags().Var(&commentFlag{o: o}, "comment", "a comment (repeat for more)")
	cmd.Flags().Var(&fileFlag{o: o}, "file", "the file the comment before it is about")
	cmd.Flags().Var(&lineFlag{o: o}, "line", "the line (from 1) of that file")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {change, task, prompt, warnings} as JSON")
	return cmd
}

// The flags of a comment: pflag sets them in command-line order, so
// --file and --line go to the --comment before them.
type (
	commentFlag struct{ o *ReviewChangesOptions }
	fileFlag    struct{ o *ReviewChangesOptions }
	lineFlag    struct{ o *ReviewChangesOptions }
)

func (c *commentFlag) Set(v string) error {
	c.o.Comments = append(c.o.Comments, review.CommentInput{Text: v})
	return nil
}

func (c *fileFlag) Set(v string) error {
	cm, err := lastComment(c.o, "--file")
	if err != nil {
		return err
	}
	if cm.File != "" {
		return fmt.Errorf("the comment %q has a file already (%s): give each comment its own --comment", cm.Text, cm.File)
	}
	cm.File = filepath.ToSlash(v)
	return nil
}

func (c *lineFlag) Set(v string) error {
	cm, err := lastComment(c.o, "--line")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("%q is not a line number (1 or more)", v)
	}
	if cm.File == "" {
		return fmt.Errorf("--line %d needs the comment's --file before it", n)
	}
	cm.Line = n
	return nil
}

func lastComment(o *ReviewChangesOptions, flag string) (*review.CommentInput, error) {
	if len(o.Comments) == 0 {
		return nil, fmt.Errorf("%s goes after the --comment it is about", flag)
	}
	return &o.Comments[len(o.Comments)-1], nil
}

func (*commentFlag) String() string { return "" }
func (*fileFlag) String() string    { return "" }
func (*lineFlag) String() string    { return "" }
func (*commentFlag) Type() string   { return "text" }
func (*fileFlag) Type() string      { return "path" }
func (*lineFlag) Type() string      { return "n" }

func reviewChangesRun(ctx context.Context, o *ReviewChangesOptions) error {
	svc, ws, err := reviewService(o.Workspace, o.Now)
	if err != nil {
		return err
	}
	res, err := svc.RequestChanges(ctx, o.ID, o.Comments, "")
	if err != nil {
		return err
	}
	res.Delivery = deliveryOf(ctx, o, ws.Root, res.Change)
	if o.JSON {
		return WriteJSON(o.IO.Out, res)
	}
	PrintWarnings(o.IO, res.Warnings)
	dir, _ := ws.FindTaskDir(o.ID)
	fmt.Fprintf(o.IO.Out, "%s is %s again, for @%s: %d comment(s) kept in %s (Review)\n",
		res.Task.ID, res.Task.Status, res.Change.Agent, len(o.Comments), rel(ws, filepath.Join(dir, "README.md")))
	switch d := res.Delivery; {
	case d.Run != "":
		fmt.Fprintf(o.IO.Out, "@%s started on it in run %s, with:\n\n%s", termsafe.Line(d.Agent), d.Run, reviewIndent(reviewText(res.Prompt))+"\n")
	default:
		fmt.Fprintf(o.IO.Out, "%s\n\nThe agent will be sent:\n\n%s", termsafe.Line(d.Waiting), reviewIndent(reviewText(res.Prompt))+"\n")
	}
	return nil
}

// deliveryOf starts the change's agent on it when it is idle (o.Deliver),
// or says why it waits.
func deliveryOf(ctx context.Context, o *ReviewChangesOptions, root string, c review.Change) *review.Delivery {
	later := &review.Delivery{Agent: c.Agent, Task: c.Task, Kind: review.KindChanges,
		Waiting: fmt.Sprintf("@%s gets it when one of the fleet's runs ends, or with agentinfra agent deliver", c.Agent)}
	if o.Deliver == nil {
		return later
	}
	ds, err := o.Deliver(ctx, root)
	if err != nil {
		later.Waiting = fmt.Sprintf("@%s was not started (%v): it gets it when one of the fleet's runs ends, or with agentinfra agent deliver", c.Agent, agenterr.Of(err).Reason)
		return later
	}
	for _, d := range ds {
		if d.Task == c.Task {
			return &d
		}
	}
	return later
}

// deliverThroughFull runs FullBinary's agent deliver in the workspace and
// reads what it started.
func deliverThroughFull(ctx context.Context, root string) ([]review.Delivery, error) {
	path, err := findFull()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, "--root", root, "agent", "deliver", "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, &agenterr.Error{Kind: agenterr.Unavailable, Reason: strings.TrimSpace(mdtext.Or(stderr.String(), err.Error())), Err: err}
	}
	var ds []review.Delivery
	if err := json.Unmarshal(out, &ds); err != nil {
		return nil, err
	}
	return ds, nil
}
