package console_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/task"
)

// reviewWorld is a world with one task in REVIEW whose change papi left in
// its worktree (branch agent/papi): a.go added, recorded as the fleet's
// run end records it. It returns the task and a function that records the
// agent's next round (a.go as given), the task back in REVIEW.
func reviewWorld(t *testing.T) (*world, string, func(a string)) {
	t.Helper()
	w := newWorld(t, worldOpts{git: true})
	ctx := context.Background()
	git := func(dir string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	c, err := task.CreateTask(ctx, w.ws, task.CreateOptions{Description: "Add the A function"}, now)
	if err != nil {
		t.Fatal(err)
	}
	id := c.Task.ID
	git(w.ws.Root, "add", "-A")
	git(w.ws.Root, "commit", "-q", "-m", "the task")
	wt := filepath.Join(t.TempDir(), "papi")
	git(w.ws.Root, "worktree", "add", "-q", "-b", "agent/papi", wt, "main")
	if _, err := task.Claim(ctx, w.ws, id, "papi", now); err != nil {
		t.Fatal(err)
	}
	round := func(a string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(wt, "a.go"), []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := task.Finish(ctx, w.ws, id, task.FinishOptions{OK: true}, "@papi", now); err != nil {
			t.Fatal(err)
		}
		if _, err := review.New(w.ws, nil).Record(ctx, review.RecordInput{Task: id, Agent: "papi", Run: "papi-1", Worktree: wt,
			Branch: "agent/papi", BaseBranch: "main", FinalMessage: "A is added."}); err != nil {
			t.Fatal(err)
		}
	}
	round("package a\n\n// A is the first.\nfunc A() int {\n\treturn 1\n}\n")
	return w, id, round
}

// The Review page in a real browser: the Board's REVIEW card links to it;
// the diff shows line numbers; a click on a line number opens a comment
// on that line, and Request changes sends it (the task IN_PROGRESS, the
// comment with its file and line in the task README); once the agent's
// next round is recorded, Approve & land puts it on main and the task is
// DONE. Both widths are checked (and photographed with
// AGENTINFRA_SCREENSHOTS=1).
func TestBrowserReviewPage(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w, id, round := reviewWorld(t)
	status := func() string {
		info, err := task.ShowTask(context.Background(), w.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		return info.Task.Status
	}
	w.open(t, ctx, "/board")
	run(t, ctx, "the REVIEW card links to its review", click(`#task-`+id+` a.rlink`), visible(`details.file[data-file="a.go"]`))
	if got := textOf(t, ctx, `h1`); !strings.Contains(got, "Add the A function") {
		t.Errorf("the review page's title: %q", got)
	}
	if got := textOf(t, ctx, `[data-live="review"]`); !strings.Contains(got, "@papi") || !strings.Contains(got, "none") || !strings.Contains(got, "A is added.") {
		t.Errorf("the change's panel:\n%s", got)
	}
	for _, vp := range viewports {
		run(t, ctx, "viewport "+vp.name, vp.set, chromedp.Reload(), visible(`#conn[data-state="live"]`), visible(`button.lc[data-line="3"]`))
		if over := evalJS[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
			t.Errorf("the review page at %s width overflows sideways by %.0f px", vp.name, over)
		}
		if screenshotsOn() {
			run(t, ctx, "comment shown", click(`button.lc[data-line="3"]`), visible(`tr.line-comment textarea`),
				chromedp.SendKeys(chromedp.CSS(`tr.line-comment textarea`), "say what A returns"))
			// The header sticks to the top of the scrolled view: a full-page
			// picture is taken from the top.
			evalJS[bool](t, ctx, `document.activeElement.blur(), window.scrollTo(0, 0), true`)
			time.Sleep(300 * time.Millisecond) // let the live refresh settle
			saveScreenshot(t, "review-"+vp.name+".png", value(t, ctx, "screenshot", chromedp.FullScreenshot(100)))
		}
	}
	run(t, ctx, "desktop", viewports[0].set, chromedp.Reload(), visible(`#conn[data-state="live"]`))
	if got := evalJS[string](t, ctx, `document.querySelector('button.lc[data-line="5"]').closest("tr").innerText`); !strings.Contains(got, "return 1") {
		t.Errorf("line 5 of a.go reads %q", got)
	}
	run(t, ctx, "a comment on line 3", click(`button.lc[data-line="3"]`), visible(`tr.line-comment textarea`),
		chromedp.SendKeys(chromedp.CSS(`tr.line-comment textarea`), "say what A returns"),
		chromedp.SendKeys(chromedp.CSS(`#cm-text`), "add a test"),
		click(`#changes-form button[type="submit"]`), visible(`#flash.ok`))
	if msg := textOf(t, ctx, `#flash`); !strings.Contains(msg, "sent back to @papi with 2 comment(s)") {
		t.Errorf("the flash after Request changes: %q", msg)
	}
	if st := status(); st != "IN_PROGRESS" {
		t.Fatalf("after Request changes the task is %s", st)
	}
	dir, _ := task.Folder(w.ws, nil, id)
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	for _, want := range []string{"`a.go:3`: say what A returns", "add a test"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the README lacks %q:\n%s", want, readme)
		}
	}
	waitText(t, ctx, `[data-live="review"]`, "say what A returns")
	if n := evalJS[int](t, ctx, `document.querySelectorAll("tr.line-comment").length`); n != 0 {
		t.Errorf("%d line comments are still open after they were sent", n)
	}

	// Approving before the next round is refused, and says why.
	run(t, ctx, "approve too early", click(`#approve-form button[type="submit"]`), visible(`#flash.error`))
	round("package a\n\n// A returns 1.\nfunc A() int {\n\treturn 1\n}\n")
	run(t, ctx, "reload", chromedp.Reload(), visible(`#conn[data-state="live"]`))
	waitText(t, ctx, `[data-live="review"]`, "REVIEW")
	run(t, ctx, "approve & land", click(`#approve-form button[type="submit"]`), visible(`#flash.ok`))
	if msg := textOf(t, ctx, `#flash`); !strings.Contains(msg, "landed on main") {
		t.Errorf("the flash after Approve & land: %q", msg)
	}
	if st := status(); st != "DONE" {
		t.Fatalf("after Approve & land the task is %s", st)
	}
	out, err := exec.Command("git", "-C", w.ws.Root, "show", "main:a.go").Output()
	if err != nil || !strings.Contains(string(out), "A returns 1.") {
		t.Errorf("main's a.go: %v %s", err, out)
	}
}
