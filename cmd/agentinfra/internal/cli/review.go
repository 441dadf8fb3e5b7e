package cli

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

func NewCmdReview(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Review the change of a finished task: list, show, send back with comments, check, land",
		Long: `review works on the changes of tasks in REVIEW. When an agent's run on a task ends,
what it left on its branch agent/NAME becomes the task's change (its commits from the
base it started from, recorded in the task folder's change.json); review shows it
against that base, sends it back to the agent with comments, runs its checks
(review.checks in .agent/config.yaml), and lands it on the base branch.

Landing never touches your uncommitted work: where the base branch is checked out
with local changes, it is updated only if the change leaves those files alone;
otherwise it is refused naming them. A change that conflicts with the base is refused,
naming the files, and nothing changes. See docs/review.md.

Exit codes: 0 success, 1 failure (or failing checks), 2 usage error, 3 no such task
or change, 4 conflict (with the base, with local changes, a task not in REVIEW),
5 refused (checks not passed: --force).`,
		Example: `  agentinfra review list
  agentinfra review record 3f9a2c --agent papi
  agentinfra review show 3f9a2c
  agentinfra review changes 3f9a2c --comment "return the error" --file fetch.go --line 42
  agentinfra review check 3f9a2c
  agentinfra review approve 3f9a2c --squash`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		NewCmdReviewList(f, nil),
		NewCmdReviewRecord(f, nil),
		NewCmdReviewShow(f, nil),
		NewCmdReviewChanges(f, nil),
		NewCmdReviewCheck(f, nil),
		NewCmdReviewApprove(f, nil),
	)
	return cmd
}

// reviewService is the review service of the command's workspace.
func reviewService(ws func() (*workspace.Workspace, error), now func() time.Time) (*review.Service, *workspace.Workspace, error) {
	w, err := ws()
	if err != nil {
		return nil, nil, err
	}
	return review.New(w, now), w, nil
}

// age says how long ago in one unit: 45s, 12m, 3h, 2d.
func reviewAge(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(seconds, 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// inert makes text an agent wrote harmless on a terminal: control
// characters (escape sequences that clear the screen, hide lines, retitle
// the window) and the bidi and zero-width characters that reorder or hide
// code are shown as escapes; tabs stay. (internal/termsafe does this for
// every command once it lands.)
func reviewInert(s string) string {
	clean := true
	for _, r := range s {
		if reviewUnsafeRune(r) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && reviewUnsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case reviewUnsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func reviewUnsafeRune(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029, r == 0x061c, r == 0xfeff:
		return true
	}
	return false
}
