package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/review"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// reviewMatrix holds three tasks ready at once.
const reviewMatrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|------|
| aaaa01 | TODO | P1 | easy | coder |  |  | Add the A function | 2026-11-01 | 2026-11-02 | - |
| bbbb02 | TODO | P1 | easy | coder |  |  | Add the B function | 2026-11-01 | 2026-11-02 | - |
| cccc03 | TODO | P1 | easy | coder |  |  | Add C and D | 2026-11-01 | 2026-11-02 | - |
`

// reviewWorld is a repository with reviewMatrix and config committed on
// main, and a fleet whose agents are the stub working by plan (STUB_PLAN),
// each prompt kept (STUB_PROMPTS), every run waiting for the gate file.
type reviewWorld struct {
	t       *testing.T
	ws      *workspace.Workspace
	f       *Fleet
	prompts string
	gate    string
}

type planStep struct {
	Agent     string            `json:"agent"`
	When      string            `json:"when"`
	Write     map[string]string `json:"write,omitempty"`
	Commit    string            `json:"commit,omitempty"`
	ThenWrite map[string]string `json:"then_write,omitempty"`
	Response  string            `json:"response,omitempty"`
}

func newReviewWorld(t *testing.T, config string, plan []planStep) *reviewWorld {
	t.Helper()
	ws := newRepo(t)
	if err := os.WriteFile(ws.MatrixPath(), []byte(reviewMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(ws.Root, ".agent", "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ws.Root, "git", "add", "-A")
	run(t, ws.Root, "git", "commit", "-q", "-m", "the tasks")
	dir := t.TempDir()
	w := &reviewWorld{t: t, ws: ws, prompts: filepath.Join(dir, "prompts"), gate: filepath.Join(dir, "gate")}
	if err := os.MkdirAll(w.prompts, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(plan)
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	w.open()
	w.f = testFleet(t, ws, "STUB_MODE=ok", "STUB_PLAN="+planFile, "STUB_PROMPTS="+w.prompts, "STUB_GATE="+w.gate)
	return w
}

// open lets the runs through; hold keeps the next ones running until open.
func (w *reviewWorld) open() {
	if err := os.WriteFile(w.gate, nil, 0o644); err != nil {
		w.t.Fatal(err)
	}
}
func (w *reviewWorld) hold() { os.Remove(w.gate) }

func (w *reviewWorld) create(names ...string) {
	w.t.Helper()
	for _, n := range names {
		if _, err := w.f.Create(context.Background(), fleet.CreateInput{Name: n, Spec: "work on the matrix"}); err != nil {
			w.t.Fatal(err)
		}
	}
	for _, n := range names {
		waitStatus(w.t, w.f, n, fleet.StatusIdle)
	}
}

// svc is the review service as a surface holds it: with the fleet.
func (w *reviewWorld) svc() *review.Service {
	return review.NewService(w.ws, review.Options{Fleet: w.f})
}

func (w *reviewWorld) status(id string) string {
	w.t.Helper()
	info, err := tasksvc.ShowTask(context.Background(), w.ws, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return info.Task.Status
}

// waitFor polls cond until it holds (poll.Eventually).
func (w *reviewWorld) waitFor(what string, cond func() bool) {
	w.t.Helper()
	poll.Eventually(w.t, cond, "never: %s", what)
}

// waitRound waits until task id's change is in review at round n, its
// agent idle.
func (w *reviewWorld) waitRound(id string, n int) review.Change {
	w.t.Helper()
	var c review.Change
	w.waitFor("task "+id+" in REVIEW at round "+string(rune('0'+n)), func() bool {
		d, err := w.svc().Show(context.Background(), id)
		if err != nil || d.Change == nil {
			return false
		}
		c = *d.Change
		return c.Round == n && c.State == review.StateReview && w.status(id) == "REVIEW"
	})
	waitStatus(w.t, w.f, c.Agent, fleet.StatusIdle)
	return c
}

// lastPrompt is the latest prompt the stub got as agent name.
func (w *reviewWorld) lastPrompt(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.prompts, name+".prompts"))
	if err != nil {
		w.t.Fatal(err)
	}
	ps := strings.Split(strings.TrimSuffix(string(b), "\n\x1e\n"), "\n\x1e\n")
	return ps[len(ps)-1]
}

func (w *reviewWorld) git(dir string, args ...string) string {
	w.t.Helper()
	return run(w.t, dir, append([]string{"git"}, args...)...)
}

// personsWork is a hash of the person's uncommitted work in the main
// checkout: the diff of the index and of the files against HEAD, and the
// untracked files' contents — all but .agent/, where agentinfra keeps the
// tasks' state (statuses, task folders) as files.
func personsWork(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	mine := []string{"--", ".", ":(exclude).agent"}
	h.Write([]byte(run(t, root, append([]string{"git", "diff", "--cached", "--binary"}, mine...)...)))
	h.Write([]byte(run(t, root, append([]string{"git", "diff", "--binary"}, mine...)...)))
	for _, f := range strings.Fields(run(t, root, append([]string{"git", "ls-files", "--others", "--exclude-standard"}, mine...)...)) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(f))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Three fleet agents finish three tasks in parallel — papi commits on its
// own, momo leaves everything uncommitted, lulu both —: each run's end
// records its change, and review list shows three. A change sent back
// while its agent is busy waits, and reaches the agent when its run ends:
// its prompt carries every comment with its file and line, the README has
// the Review section, the task is back in REVIEW after the run. Landing
// the three in turn puts every change on main, each task DONE, each
// agent's branch at the main it landed on; the person's uncommitted edits
// in the main checkout are the same bytes before and after.
func TestFleetRunsBecomeChangesThatLand(t *testing.T) {
	w := newReviewWorld(t, "", []planStep{
		{Agent: "papi", When: "aaaa01", Write: map[string]string{"a.go": "package main\n\nfunc A() {}\n"}, Commit: "add A"},
		{Agent: "momo", When: "was reviewed", Write: map[string]string{"b.go": "package main\n\n// B is the second letter.\nfunc B() {}\n"}},
		{Agent: "momo", When: "bbbb02", Write: map[string]string{"b.go": "package main\n\nfunc B() {}\n"}},
		{Agent: "lulu", When: "cccc03", Write: map[string]string{"c.go": "package main\n\nfunc C() {}\n"}, Commit: "add C",
			ThenWrite: map[string]string{"d.go": "package main\n\nfunc D() {}\n"}},
	})
	ctx := context.Background()
	root := w.ws.Root
	// The person's own work, which nothing may touch.
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\n// my edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scratch.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := personsWork(t, root)

	w.create("papi", "momo", "lulu")
	for name, id := range map[string]string{"papi": "aaaa01", "momo": "bbbb02", "lulu": "cccc03"} {
		if _, err := w.f.Start(ctx, fleet.StartInput{Name: name, TaskID: id}); err != nil {
			t.Fatal(err)
		}
	}
	cP, cM, cL := w.waitRound("aaaa01", 1), w.waitRound("bbbb02", 1), w.waitRound("cccc03", 1)
	items, err := w.svc().List(ctx)
	if err != nil || len(items) != 3 {
		t.Fatalf("review list: %d items, %v; want the three changes", len(items), err)
	}
	if cP.Committed != "" || len(cP.Commits) != 1 || cP.Commits[0].Subject != "add A" {
		t.Errorf("papi's change: %+v; want its own commit, nothing committed for it", cP.Commits)
	}
	if cM.Committed == "" || len(cM.Commits) != 1 || cM.Commits[0].Author != "momo <momo@agentinfra.invalid>" || cM.Run != "momo-2" {
		t.Errorf("momo's change: %+v (run %s); want its leftovers committed as momo, run momo-2", cM.Commits, cM.Run)
	}
	if len(cL.Commits) != 2 || cL.Commits[0].Subject != "add C" || cL.Committed != cL.Commits[1].Hash {
		t.Errorf("lulu's change: %+v; want its commit and one of its leftovers", cL.Commits)
	}
	if cM.FinalMessage != "stub response" {
		t.Errorf("momo's change keeps the run's final message %q", cM.FinalMessage)
	}

	// momo is busy on something else when its change is sent back.
	w.hold()
	if _, err := w.f.Start(ctx, fleet.StartInput{Name: "momo", Text: "tidy up"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, w.f, "momo", fleet.StatusBusy)
	res, err := w.svc().RequestChanges(ctx, "bbbb02", []review.CommentInput{
		{File: "b.go", Line: 3, Text: "say what B is"},
		{Text: "keep the file short"},
	}, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Delivery; d == nil || d.Run != "" || !strings.Contains(d.Waiting, "busy") {
		t.Fatalf("a change sent back to a busy agent: %+v; want it waiting", res.Delivery)
	}
	if st := w.status("bbbb02"); st != "IN_PROGRESS" {
		t.Errorf("task sent back is %s", st)
	}
	w.open() // momo's run ends, and its supervisor gives it the change
	c2 := w.waitRound("bbbb02", 2)
	prompt := w.lastPrompt("momo")
	for _, want := range []string{"b.go:3: say what B is", "the whole change: keep the file short", "bbbb02"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("momo's next prompt lacks %q:\n%s", want, prompt)
		}
	}
	if c2.Sent == nil || c2.Sent.Run != "momo-4" {
		t.Errorf("the change does not name the run it was sent in: %+v", c2.Sent)
	}
	readme, _ := os.ReadFile(filepath.Join(taskDir(t, w.ws, "bbbb02"), "README.md"))
	if !strings.Contains(string(readme), "## Review") || !strings.Contains(string(readme), "`b.go:3`: say what B is") {
		t.Errorf("the README's Review section:\n%s", readme)
	}

	// Landing the three in turn.
	for _, id := range []string{"aaaa01", "bbbb02", "cccc03"} {
		r, err := w.svc().Approve(ctx, id, review.ApproveOptions{By: "ana"})
		if err != nil {
			t.Fatalf("approve %s: %v", id, err)
		}
		tip := w.git(root, "rev-parse", "main")
		if w.status(id) != "DONE" || r.Reset != tip || w.git(root, "rev-parse", r.Change.Branch) != tip {
			t.Errorf("after landing %s: task %s, %s at %s, main at %s", id, w.status(id), r.Change.Branch, w.git(root, "rev-parse", r.Change.Branch), tip)
		}
	}
	for _, f := range []string{"a.go", "b.go", "c.go", "d.go"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s is not on main's checkout: %v", f, err)
		}
	}
	if got := w.git(root, "show", "main:b.go"); !strings.Contains(got, "B is the second letter") {
		t.Errorf("main has momo's first round, not its second: %s", got)
	}
	if after := personsWork(t, root); after != before {
		t.Errorf("the person's uncommitted work changed:\n%s", w.git(root, "status", "--short"))
	}
	if items, _ := w.svc().List(ctx); len(items) != 0 {
		t.Errorf("review list after landing: %d items", len(items))
	}
}

func taskDir(t *testing.T, ws *workspace.Workspace, id string) string {
	t.Helper()
	dir, _ := tasksvc.Folder(ws, nil, id)
	if dir == "" {
		t.Fatalf("task %s has no folder", id)
	}
	return dir
}

// verdict is a reviewer's final message with its fenced JSON verdict.
func verdict(v string, comments ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"verdict": v, "summary": "looked at it", "comments": comments})
	return "I read the change.\n\n```json\n" + string(b) + "\n```\n"
}

// The reviewer agent (review.reviewer) is started on each change that
// reaches REVIEW: its "changes" goes back to the agent as comments (its
// next prompt has them), its "approve" of a change whose checks passed
// lands it (review.auto_land); checks that fail keep a change the
// reviewer approved from landing on its own, and from a person's approve,
// until --force.
func TestReviewerAgentAndChecksThroughTheFleet(t *testing.T) {
	w := newReviewWorld(t, "review:\n  checks: [\"test -f ok.txt\", \"test ! -e broken\"]\n  reviewer: rita\n  auto_land: true\n", []planStep{
		{Agent: "rita", When: "independent reviewer&&aaaa01&&(round 2)", Response: verdict("approve")},
		{Agent: "rita", When: "independent reviewer&&aaaa01", Response: verdict("changes", map[string]any{"file": "a.go", "line": 3, "text": "name what A does"})},
		{Agent: "rita", When: "independent reviewer&&bbbb02", Response: "Looks fine to me.\n\n```json\n{\"verdict\": \"APPROVE\"}\n```"},
		{Agent: "papi", When: "was reviewed", Write: map[string]string{"ok.txt": "ok\n", "a.go": "package main\n\n// A does nothing yet.\nfunc A() {}\n"}},
		{Agent: "papi", When: "aaaa01", Write: map[string]string{"a.go": "package main\n\nfunc A() {}\n"}, Commit: "add A"},
		{Agent: "papi", When: "bbbb02", Write: map[string]string{"b.go": "package main\n\nfunc B() {}\n", "broken": "x\n"}},
	})
	ctx := context.Background()
	root := w.ws.Root
	w.create("papi", "rita")
	if _, err := w.f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "aaaa01"}); err != nil {
		t.Fatal(err)
	}
	w.waitFor("task aaaa01 DONE", func() bool { return w.status("aaaa01") == "DONE" })
	d, err := w.svc().Show(ctx, "aaaa01")
	if err != nil {
		t.Fatal(err)
	}
	c := d.Change
	if len(c.Verdicts) != 2 || c.Verdicts[0].Decision != "changes" || c.Verdicts[0].By != "@rita" || c.Verdicts[1].Decision != "approve" || c.Verdicts[1].Round != 2 {
		t.Errorf("verdicts: %+v; want rita's changes on round 1, approve on round 2", c.Verdicts)
	}
	if !slices.ContainsFunc(c.Comments, func(cm review.Comment) bool {
		return cm.By == "@rita" && cm.File == "a.go" && cm.Line == 3 && cm.Text == "name what A does" && cm.Round == 1
	}) {
		t.Errorf("rita's comment is not recorded: %+v", c.Comments)
	}
	if p := w.lastPrompt("papi"); !strings.Contains(p, "a.go:3: name what A does") {
		t.Errorf("papi's prompt after rita's verdict:\n%s", p)
	}
	if c.Landed == nil || c.Landed.By != "@rita" || c.Landed.Forced {
		t.Errorf("the landing: %+v; want rita's (auto_land), not forced", c.Landed)
	}
	readme, _ := os.ReadFile(filepath.Join(taskDir(t, w.ws, "aaaa01"), "README.md"))
	for _, want := range []string{"reviewed by @rita (run rita-2): changes — looked at it", "`a.go:3`: name what A does", "reviewed by @rita (run rita-3): approve", "landed on main"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the README lacks %q:\n%s", want, readme)
		}
	}
	if got := w.git(root, "show", "main:a.go"); !strings.Contains(got, "A does nothing yet") {
		t.Errorf("main's a.go: %s", got)
	}

	// Checks that fail: the reviewer's approve does not land it, nor a
	// person's; --force does.
	waitStatus(t, w.f, "papi", fleet.StatusIdle)
	if _, err := w.f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "bbbb02"}); err != nil {
		t.Fatal(err)
	}
	var cb review.Change
	w.waitFor("rita's verdict on bbbb02", func() bool {
		d, err := w.svc().Show(ctx, "bbbb02")
		if err != nil || d.Change == nil {
			return false
		}
		cb = *d.Change
		return cb.LastVerdict() != nil
	})
	waitStatus(t, w.f, "rita", fleet.StatusIdle)
	if v := cb.LastVerdict(); v.Decision != "approve" || cb.Checks == nil || cb.Checks.Passed || w.status("bbbb02") != "REVIEW" {
		t.Fatalf("bbbb02: verdict %+v, checks %+v, task %s; want approved, checks failed, still in REVIEW", v, cb.Checks, w.status("bbbb02"))
	}
	tip := w.git(root, "rev-parse", "main")
	if _, err := w.svc().Approve(ctx, "bbbb02", review.ApproveOptions{By: "ana"}); !errors.Is(err, review.ErrChecks) || !strings.Contains(err.Error(), "test ! -e broken") {
		t.Fatalf("approve with a failing check: %v", err)
	}
	if w.git(root, "rev-parse", "main") != tip || w.status("bbbb02") != "REVIEW" {
		t.Fatal("a refused approve moved main or the task")
	}
	if r, err := w.svc().Approve(ctx, "bbbb02", review.ApproveOptions{By: "ana", Force: true}); err != nil || !r.Change.Landed.Forced || w.status("bbbb02") != "DONE" {
		t.Fatalf("approve --force: %+v, %v", r.Change.Landed, err)
	}
}
