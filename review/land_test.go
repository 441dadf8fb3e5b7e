package review

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Three agents finish three tasks — papi commits on its own, sony leaves
// everything uncommitted, kiki both —; the three changes are listed;
// landing them in turn puts every change on main, each task DONE, each
// agent's branch at the new main; the person's uncommitted edits in the
// main checkout (a tracked file changed, a file staged, an untracked file)
// are the same bytes before and after, and still uncommitted.
func TestThreeAgentsLandInTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	papi, sony, kiki := f.agent("papi"), f.agent("sony"), f.agent("kiki")
	idP := f.taskInReview("Add the A function", "papi")
	idS := f.taskInReview("Add B and make One return 11", "sony")
	idK := f.taskInReview("Add C and D", "kiki")

	// The person's own work in the main checkout, which nothing may touch.
	f.write(f.root, "notes.txt", "notes\nmy local thoughts\n")
	f.write(f.root, "scratch.txt", "untracked scratch\n")
	f.write(f.root, "staged.txt", "staged, not committed\n")
	f.git(f.root, "add", "staged.txt")
	mine := []string{"notes.txt", "scratch.txt", "staged.txt"}
	before := hashFiles(t, f.root, mine...)

	// papi commits on its own.
	f.write(papi, "a.go", "package util\n\nfunc A() {}\n")
	f.git(papi, "add", "a.go")
	f.git(papi, "commit", "-q", "-m", "add A")
	ownCommit := f.git(papi, "rev-parse", "HEAD")
	// sony leaves everything uncommitted: a new file and an edit.
	f.write(sony, "b.go", "package util\n\nfunc B() {}\n")
	f.write(sony, "util.go", strings.Replace(f.read(sony, "util.go"), "return 1", "return 11", 1))
	// kiki both.
	f.write(kiki, "c.go", "package util\n\nfunc C() {}\n")
	f.git(kiki, "add", "c.go")
	f.git(kiki, "commit", "-q", "-m", "add C")
	f.write(kiki, "c.go", "package util\n\nfunc C() int { return 3 }\n")
	f.write(kiki, "d.go", "package util\n\nfunc D() {}\n")

	cP, cS, cK := f.record(idP, "papi", papi), f.record(idS, "sony", sony), f.record(idK, "kiki", kiki)
	if cP.Committed != "" || len(cP.Commits) != 1 || cP.Commits[0].Hash != ownCommit {
		t.Errorf("papi's change: committed %q, commits %+v; want its own commit kept as it is and nothing committed for it", cP.Committed, cP.Commits)
	}
	if cS.Committed == "" || len(cS.Commits) != 1 || cS.Commits[0].Subject != idS+": Add B and make One return 11" || cS.Commits[0].Author != "sony <sony@agentinfra.invalid>" {
		t.Errorf("sony's change: %+v; want one commit of its leftovers, %q, by sony", cS.Commits, idS+": Add B and make One return 11")
	}
	if msg := f.git(sony, "log", "-1", "--format=%B"); !strings.Contains(msg, "Agentinfra-Run: sony-1") {
		t.Errorf("sony's commit message %q has no run trailer", msg)
	}
	if len(cK.Commits) != 2 || cK.Commits[0].Subject != "add C" || cK.Committed != cK.Head {
		t.Errorf("kiki's change: %+v (committed %s, head %s); want its commit then one of its leftovers", cK.Commits, cK.Committed, cK.Head)
	}
	for _, wt := range []string{papi, sony, kiki} {
		if s := f.git(wt, "status", "--porcelain"); s != "" {
			t.Errorf("%s is not clean after recording: %s", wt, s)
		}
	}

	items, err := f.svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 {
		t.Fatalf("review list: %d items, want 3", len(items))
	}
	for _, it := range items {
		want := map[string][3]int{idP: {1, 3, 0}, idS: {2, 4, 1}, idK: {2, 6, 0}}[it.Task.ID]
		if it.Change == nil || [3]int{it.Files, it.Added, it.Deleted} != want || it.Checks != ChecksNone || it.State() != StateReview {
			t.Errorf("list item %s: files %d +%d −%d, checks %q, state %q; want %v, none, review", it.Task.ID, it.Files, it.Added, it.Deleted, it.Checks, it.State(), want)
		}
	}

	for _, c := range []struct {
		id, agent, wt string
		files         []string
	}{{idP, "papi", papi, []string{"a.go"}}, {idS, "sony", sony, []string{"b.go"}}, {idK, "kiki", kiki, []string{"c.go", "d.go"}}} {
		res, err := f.svc.Approve(ctx, c.id, ApproveOptions{By: "ana"})
		if err != nil {
			t.Fatalf("approve %s: %v", c.id, err)
		}
		tip := f.git(f.root, "rev-parse", "main")
		if res.Change.Landed == nil || res.Change.Landed.Commit != tip || res.Change.Landed.Strategy != "squash" {
			t.Errorf("approve %s: landed %+v, main at %s", c.id, res.Change.Landed, tip)
		}
		if got := f.status(c.id); got != "DONE" {
			t.Errorf("task %s is %s after landing, want DONE", c.id, got)
		}
		if got := f.git(f.root, "rev-parse", "agent/"+c.agent); got != tip || res.Reset != tip {
			t.Errorf("agent/%s at %s after landing (reset %q), want main's %s", c.agent, got, res.Reset, tip)
		}
		if s := f.git(c.wt, "status", "--porcelain"); s != "" {
			t.Errorf("%s's worktree is not clean at the new base: %s", c.agent, s)
		}
		for _, file := range c.files {
			if got, want := f.read(f.root, file), f.read(c.wt, file); got != want {
				t.Errorf("%s in the main checkout = %q, want the change's %q", file, got, want)
			}
		}
		if !slices.Equal(res.Updated, []string{f.root}) {
			t.Errorf("updated worktrees %v, want the main checkout", res.Updated)
		}
		if pin := f.git(f.root, "for-each-ref", PinPrefix+c.id); pin != "" {
			t.Errorf("the pin of a landed change is still there: %s", pin)
		}
	}
	if got := f.read(f.root, "util.go"); !strings.Contains(got, "return 11") {
		t.Errorf("sony's edit of util.go did not land: %q", got)
	}
	if log := f.git(f.root, "log", "--format=%an|%s", "main"); log != "kiki|"+idK+": Add C and D\nsony|"+idS+": Add B and make One return 11\npapi|"+idP+": Add the A function\nAna Person|init" {
		t.Errorf("main's history:\n%s", log)
	}
	if after := hashFiles(t, f.root, mine...); after != before {
		t.Errorf("the person's uncommitted files changed: %s → %s", before, after)
	}
	if st := f.git(f.root, append([]string{"status", "--porcelain", "--"}, mine...)...); st != "M notes.txt\nA  staged.txt\n?? scratch.txt" {
		t.Errorf("the person's edits are no longer uncommitted: %q", st)
	}
	if items, _ := f.svc.List(ctx); len(items) != 0 {
		t.Errorf("review list after landing all: %d items", len(items))
	}
	// A landed change is still shown: as it landed.
	if d, err := f.svc.Show(ctx, idK); err != nil || d.Files != 2 || d.Added != 6 || len(d.Stat) != 2 || d.State() != StateLanded {
		t.Errorf("show of a landed change: %+v, %v", d.Item, err)
	}
	if r := f.readme(idS); !strings.Contains(r, "## Review") || !strings.Contains(r, "landed on main as") || !strings.Contains(r, "status REVIEW → DONE by @ana: landed on main") {
		t.Errorf("sony's task README does not tell the landing:\n%s", r)
	}
}

// A change that conflicts with main is refused naming the file: main, the
// agent's branch and its worktree are byte for byte as before, the task
// stays in REVIEW marked conflict; the agent's prompt, once sent back,
// says which files to rebase.
func TestConflictChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	zed := f.agent("zed")
	id := f.taskInReview("Make One return 10", "zed")
	f.write(zed, "util.go", strings.Replace(f.read(zed, "util.go"), "return 1", "return 10", 1))
	f.record(id, "zed", zed)
	// Meanwhile the person changes the same line on main.
	f.write(f.root, "util.go", strings.Replace(f.read(f.root, "util.go"), "return 1", "return 100", 1))
	f.git(f.root, "commit", "-q", "-am", "One is 100")
	mainBefore, branchBefore := f.git(f.root, "rev-parse", "main"), f.git(f.root, "rev-parse", "agent/zed")
	files := []string{"util.go", "notes.txt"}
	checkout, agentTree := hashFiles(t, f.root, files...), hashFiles(t, zed, files...)

	_, err := f.svc.Approve(ctx, id, ApproveOptions{By: "ana"})
	if !errors.Is(err, ErrConflict) || !strings.Contains(agenterrReason(err), "util.go") {
		t.Fatalf("approve of a conflicting change: %v; want ErrConflict naming util.go", err)
	}
	if m, b := f.git(f.root, "rev-parse", "main"), f.git(f.root, "rev-parse", "agent/zed"); m != mainBefore || b != branchBefore {
		t.Errorf("main %s → %s, agent/zed %s → %s: a refused landing moved them", mainBefore, m, branchBefore, b)
	}
	if hashFiles(t, f.root, files...) != checkout || hashFiles(t, zed, files...) != agentTree {
		t.Error("a refused landing changed files")
	}
	if got := f.status(id); got != "REVIEW" {
		t.Errorf("task is %s, want REVIEW", got)
	}
	items, _ := f.svc.List(ctx)
	if len(items) != 1 || items[0].State() != StateConflict || !slices.Equal(items[0].Change.Conflict, []string{"util.go"}) {
		t.Errorf("list after the conflict: %+v", items)
	}
	if r := f.readme(id); !strings.Contains(r, "landing refused: the change conflicts with main in util.go") {
		t.Errorf("README does not say the landing was refused:\n%s", r)
	}
	res, err := f.svc.RequestChanges(ctx, id, []CommentInput{{Text: "rebase onto main, keep 100"}}, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Prompt, "conflicts with main in util.go") || !strings.Contains(res.Prompt, "git rebase main") {
		t.Errorf("prompt does not ask to rebase util.go:\n%s", res.Prompt)
	}
}

// A local edit in the main checkout of a file the change touches refuses
// the landing, naming the file; nothing changes.
func TestLocalEditOfTouchedFileRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	papi := f.agent("papi")
	id := f.taskInReview("Write the notes", "papi")
	f.write(papi, "notes.txt", "notes\nby papi\n")
	f.record(id, "papi", papi)
	f.write(f.root, "notes.txt", "notes\nmy own edit\n")
	mainBefore, branchBefore := f.git(f.root, "rev-parse", "main"), f.git(f.root, "rev-parse", "agent/papi")

	_, err := f.svc.Approve(ctx, id, ApproveOptions{})
	if !errors.Is(err, ErrLocalChanges) || !strings.Contains(agenterrReason(err), "notes.txt") || !strings.Contains(agenterrReason(err), f.root) {
		t.Fatalf("approve over a local edit: %v; want ErrLocalChanges naming notes.txt and the checkout", err)
	}
	if got := f.read(f.root, "notes.txt"); got != "notes\nmy own edit\n" {
		t.Errorf("the person's edit became %q", got)
	}
	if m, b := f.git(f.root, "rev-parse", "main"), f.git(f.root, "rev-parse", "agent/papi"); m != mainBefore || b != branchBefore {
		t.Error("a refused landing moved a branch")
	}
	if got := f.status(id); got != "REVIEW" {
		t.Errorf("task is %s, want REVIEW", got)
	}
	// Once the person puts their edit aside, it lands.
	f.git(f.root, "stash", "push", "-q", "--", "notes.txt")
	if _, err := f.svc.Approve(ctx, id, ApproveOptions{}); err != nil {
		t.Fatalf("approve with the edit stashed: %v", err)
	}
	if got := f.read(f.root, "notes.txt"); got != "notes\nby papi\n" {
		t.Errorf("notes.txt after landing = %q", got)
	}
}

// Each strategy lands the change: squash one commit by the agent, merge a
// merge commit of main and the change, rebase the agent's commits one by
// one with their authors and messages; the files are the same.
func TestStrategies(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"squash", "merge", "rebase"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			papi := f.agent("papi")
			id := f.taskInReview("Two files", "papi")
			f.write(papi, "x.go", "package util\n")
			f.git(papi, "add", "x.go")
			f.git(papi, "-c", "user.name=Papi Own", "commit", "-q", "-m", "first: x")
			f.write(papi, "y.go", "package util\n")
			f.git(papi, "add", "y.go")
			f.git(papi, "commit", "-q", "-m", "second: y")
			f.write(papi, "x.go", "package util // x\n") // left uncommitted
			c := f.record(id, "papi", papi)
			// main moves on meanwhile: the change lands on the new tip.
			f.write(f.root, "m.go", "package util\n")
			f.git(f.root, "add", "m.go")
			f.git(f.root, "commit", "-q", "-m", "main moves")
			onto := f.git(f.root, "rev-parse", "main")

			res, err := f.svc.Approve(ctx, id, ApproveOptions{Strategy: strategy, By: "ana"})
			if err != nil {
				t.Fatal(err)
			}
			tip := f.git(f.root, "rev-parse", "main")
			if res.Change.Landed.Commit != tip || res.Change.Landed.Onto != onto {
				t.Errorf("landed %+v; main %s, was %s", res.Change.Landed, tip, onto)
			}
			for file, want := range map[string]string{"x.go": "package util // x\n", "y.go": "package util\n", "m.go": "package util\n"} {
				if got := f.read(f.root, file); got != want {
					t.Errorf("%s = %q, want %q", file, got, want)
				}
			}
			log := f.git(f.root, "log", "--format=%an|%s|%P", onto+".."+tip)
			lines := strings.Split(log, "\n")
			switch strategy {
			case "squash":
				if len(lines) != 1 || !strings.HasPrefix(lines[0], "papi|"+id+": Two files|"+onto) {
					t.Errorf("squash history:\n%s", log)
				}
				if body := f.git(f.root, "log", "-1", "--format=%B", tip); !strings.Contains(body, "first: x") || !strings.Contains(body, "Agentinfra-Approved-By: ana") {
					t.Errorf("squash message:\n%s", body)
				}
			case "merge":
				if parents := f.git(f.root, "log", "-1", "--format=%P", tip); parents != onto+" "+c.Head {
					t.Errorf("merge parents %q, want %s %s", parents, onto, c.Head)
				}
			case "rebase":
				want := []string{"papi|" + id + ": Two files", "Ana Person|second: y", "Papi Own|first: x"}
				var got []string
				for _, l := range lines {
					got = append(got, l[:strings.LastIndex(l, "|")])
				}
				if !slices.Equal(got, want) || !strings.HasSuffix(lines[2], "|"+onto) {
					t.Errorf("rebase history:\n%s\nwant %q on %s", log, want, onto)
				}
			}
			if got := f.git(f.root, "rev-parse", "agent/papi"); got != tip {
				t.Errorf("agent/papi at %s, want %s", got, tip)
			}
		})
	}
}

// Landing is a compare-and-set of main: a landing that finds main moved
// since it read it changes nothing and says to approve again.
func TestLandRefusesAMovedBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	papi := f.agent("papi")
	id := f.taskInReview("A file", "papi")
	f.write(papi, "p.go", "package util\n")
	c := f.record(id, "papi", papi)
	g := git{dir: f.root}
	onto := f.git(f.root, "rev-parse", "main")
	tip, conflicts, err := build(ctx, g, c, "squash", onto, "", taskOf(t, f, id))
	if err != nil || len(conflicts) > 0 {
		t.Fatal(err, conflicts)
	}
	// Another landing moves main first.
	f.write(f.root, "q.go", "package util\n")
	f.git(f.root, "add", "q.go")
	f.git(f.root, "commit", "-q", "-m", "another landing")
	moved := f.git(f.root, "rev-parse", "main")
	wts, err := worktrees(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := land(ctx, g, wts, "main", onto, tip); err == nil || !strings.Contains(agenterrReason(err), "main moved while the change was landing") {
		t.Fatalf("land over a moved main: %v", err)
	}
	if got := f.git(f.root, "rev-parse", "main"); got != moved {
		t.Errorf("main at %s, want %s (the other landing kept)", got, moved)
	}
	if _, err := f.svc.Approve(ctx, id, ApproveOptions{}); err != nil {
		t.Fatalf("approve again: %v", err)
	}
	if f.read(f.root, "q.go") == "" || f.read(f.root, "p.go") == "" {
		t.Error("both landings are not on main")
	}
}

func agenterrReason(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func taskOf(t *testing.T, f *fixture, id string) matrix.Task {
	info, err := task.ShowTask(context.Background(), f.ws, id)
	if err != nil {
		t.Fatal(err)
	}
	return info.Task
}

// Two approvals at once both land, one after the other: neither is lost.
func TestConcurrentApprovals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	ids := map[string]string{}
	for _, name := range []string{"papi", "sony"} {
		wt := f.agent(name)
		ids[name] = f.taskInReview("File of "+name, name)
		f.write(wt, name+".go", "package util\n")
		f.record(ids[name], name, wt)
	}
	errs := make(chan error, 2)
	for _, id := range ids {
		go func() {
			_, err := f.svc.Approve(ctx, id, ApproveOptions{})
			errs <- err
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Errorf("approve: %v", err)
		}
	}
	if n := f.git(f.root, "rev-list", "--count", "main"); n != "3" {
		t.Errorf("main has %s commits, want 3 (init and both landings)", n)
	}
	for name, id := range ids {
		if f.read(f.root, name+".go") == "" || f.status(id) != "DONE" {
			t.Errorf("%s's change did not land", name)
		}
	}
}
