package handoff

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/workspace"
)

var handoffNow = time.Date(2026, 11, 21, 23, 40, 5, 0, time.UTC)

// handoffGitCmd runs git in dir with fixed identities and dates and no user
// or system config, so commit hashes are the same on every machine.
func handoffGitCmd(t *testing.T, dir, date string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ada Tester", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Tester", "GIT_COMMITTER_EMAIL=ada@example.com",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// handoffFixture is the context fixture, optionally as a git repository with
// six commits and some uncommitted changes.
func handoffFixture(t *testing.T, withGit bool) *workspace.Workspace {
	t.Helper()
	ws := contextFixture(t)
	// Never let git find a repository above the temp dir.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(ws.Root))
	if !withGit {
		return ws
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := ws.Root
	handoffGitCmd(t, root, "", "init", "-q", "-b", "main")
	date := func(i int) string { return time.Date(2026, 11, 20, 10, i, 0, 0, time.UTC).Format(time.RFC3339) }
	// The symlink points outside the temp workspace; keep it out of the tree.
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("sneaky-link\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	handoffGitCmd(t, root, date(0), "add", ".")
	handoffGitCmd(t, root, date(0), "commit", "-q", "-m", "Initial workspace")
	for i := 1; i <= 5; i++ {
		if err := os.WriteFile(filepath.Join(root, "src", "fetch.go"), []byte("package src\n\n// v"+string(rune('0'+i))+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		handoffGitCmd(t, root, date(i), "commit", "-q", "-a", "-m", "fetch: step "+string(rune('0'+i)))
	}
	handoffGitCmd(t, root, date(9), "checkout", "-q", "-b", "feature/retry")
	// Uncommitted: a modification, a staged rename and an untracked file.
	if err := os.WriteFile(filepath.Join(root, "src", "fetch.go"), []byte("package src\n\n// wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	handoffGitCmd(t, root, date(9), "mv", "docs/design.md", "docs/design-v2.md")
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestHandoffGolden(t *testing.T) {
	ws := handoffFixture(t, true)
	ctx := context.Background()
	opts := Options{Done: 2, Next: 4, NoteBytes: 200}
	path, h, err := Write(ctx, ws, handoffNow, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(ws.HandoffsDir(), "261121_2340_handoff.md"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != h.Text {
		t.Error("the file does not hold the returned text")
	}
	golden.Check(t, "testdata/handoff_golden/"+"git.md", h.Text)
	h.Text = ""
	golden.Check(t, "testdata/handoff_golden/"+"git.json", golden.JSON(t, h))

	// Orders: recently done by Updated desc; next up by priority then Created.
	var done, next []string
	for _, x := range h.RecentlyDone {
		done = append(done, x.ID)
	}
	for _, x := range h.NextUp {
		next = append(next, x.ID)
	}
	if got := strings.Join(done, " "); got != "d0d0d1 d0d0d2" {
		t.Errorf("recently done = %s, want d0d0d1 d0d0d2 (2026-11-21 09:30 is after 2026-11-21)", got)
	}
	if got := strings.Join(next, " "); got != "70d003 70d002 70d001 70d005" {
		t.Errorf("next up = %s", got)
	}
	if h.DoneTotal != 4 || h.TodoTotal != 5 {
		t.Errorf("totals: done %d todo %d", h.DoneTotal, h.TodoTotal)
	}
	g := h.Git
	if !g.Repo || g.Branch != "feature/retry" || len(g.Commits) != 5 || g.Commits[0].Subject != "fetch: step 5" {
		t.Errorf("git = %+v", g)
	}
	status := map[string]string{}
	for _, f := range g.Uncommitted {
		status[f.Path] = f.Status + " " + f.From
	}
	for p, want := range map[string]string{"src/fetch.go": " M ", "docs/design-v2.md": "R  docs/design.md", "notes.txt": "?? "} {
		if status[p] != want {
			t.Errorf("git status of %s = %q, want %q (all: %v)", p, status[p], want, status)
		}
	}
}

func TestHandoffNeverOverwrites(t *testing.T) {
	ws := handoffFixture(t, false)
	ctx := context.Background()
	var paths []string
	for i := 0; i < 3; i++ {
		p, _, err := Write(ctx, ws, handoffNow, Options{})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(p))
	}
	if got := strings.Join(paths, " "); got != "261121_2340_handoff.md 261121_2340_handoff_2.md 261121_2340_handoff_3.md" {
		t.Errorf("names = %s", got)
	}
	// A symlink squatting on the next name is not followed.
	target := filepath.Join(filepath.Dir(ws.Root), "victim.md")
	os.WriteFile(target, []byte("keep me\n"), 0o644)
	later := handoffNow.Add(time.Minute)
	if err := os.Symlink(target, filepath.Join(ws.HandoffsDir(), "261121_2341_handoff.md")); err != nil {
		t.Fatal(err)
	}
	p, _, err := Write(ctx, ws, later, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "261121_2341_handoff_2.md" {
		t.Errorf("path = %s", p)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Error("handoff wrote through a symlink")
	}
}

func TestHandoffNoGit(t *testing.T) {
	ws := handoffFixture(t, false)
	ctx := context.Background()
	h, err := Build(ctx, ws, handoffNow, Options{Done: 2, Next: 4, NoteBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	if h.Git.Repo || !strings.HasSuffix(h.Text, "## Git\n\nThe workspace root is not in a git repository.\n") {
		t.Errorf("git section:\n%s", h.Text[strings.Index(h.Text, "## Git"):])
	}
	h, err = Build(ctx, ws, handoffNow, Options{Git: filepath.Join(t.TempDir(), "no-such-git")})
	if err != nil {
		t.Fatal(err)
	}
	if h.Git.Repo || !strings.Contains(h.Text, "git was not found") {
		t.Errorf("missing git not reported:\n%s", h.Text[strings.Index(h.Text, "## Git"):])
	}
	if h.Git.Commits == nil || h.Git.Uncommitted == nil {
		t.Error("git lists must be empty, not nil")
	}
}

func TestHandoffEmptyRepo(t *testing.T) {
	ws := handoffFixture(t, false)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	handoffGitCmd(t, ws.Root, "", "init", "-q", "-b", "trunk")
	h, err := Build(context.Background(), ws, handoffNow, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Git.Repo || h.Git.Branch != "trunk" || len(h.Git.Commits) != 0 || h.Git.UncommittedTotal == 0 ||
		!strings.Contains(h.Text, "no commits yet") {
		t.Errorf("git = %+v", h.Git)
	}
}

func TestHandoffOut(t *testing.T) {
	ws := handoffFixture(t, false)
	ctx := context.Background()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws.Root, "out-link")); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(ws.Root, "docs", "design.md")
	for _, tc := range []struct{ name, out, want string }{
		{"absolute outside", filepath.Join(outside, "h.md"), "outside the workspace"},
		{"relative escape", "../h.md", "outside the workspace"},
		{"through a symlink", "out-link/h.md", "outside the workspace"},
		{"existing file", "docs/design.md", "already exists"},
		{"missing folder", "no/such/dir/h.md", "must exist inside the workspace"},
		{"a folder", "docs/", "names a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Write(ctx, ws, handoffNow, Options{Out: tc.out})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files written outside the workspace: %v", ents)
	}
	if b, _ := os.ReadFile(existing); string(b) != "# Design\n" {
		t.Error("an existing file was changed")
	}
	if _, err := os.Stat(ws.HandoffsDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused --out still wrote to .agent/handoffs/")
	}
	p, h, err := Write(ctx, ws, handoffNow, Options{Out: "docs/HANDOFF.md"})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(ws.Root, "docs", "HANDOFF.md"))
	if p != real {
		t.Errorf("path = %s, want %s", p, real)
	}
	if b, _ := os.ReadFile(p); string(b) != h.Text {
		t.Error("--out file does not hold the handoff")
	}
	if _, _, err := Write(ctx, ws, handoffNow, Options{Out: "docs/HANDOFF.md"}); err == nil || !errors.Is(err, fs.ErrExist) {
		t.Errorf("second write to the same --out: err = %v, want fs.ErrExist", err)
	}
}

func TestHandoffWorkspaceInRepoSubfolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	top := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(top))
	handoffGitCmd(t, top, "", "init", "-q", "-b", "main")
	root := filepath.Join(top, "sub", "ws")
	if err := os.MkdirAll(filepath.Join(root, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte(matrixHeaderOnly), 0o644)
	ws, _ := workspace.New(root)
	h, err := Build(context.Background(), ws, handoffNow, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Git.Repo || h.Git.Prefix != "sub/ws/" || !strings.Contains(h.Text, "folder sub/ws/ of the repository") {
		t.Errorf("git = %+v", h.Git)
	}
	if len(h.Git.Uncommitted) != 1 || h.Git.Uncommitted[0].Path != "sub/ws/.agent/DEVELOPMENT_MATRIX.md" {
		t.Errorf("uncommitted = %+v", h.Git.Uncommitted)
	}
}

const matrixHeaderOnly = "# Development Matrix\n\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n"

func TestHandoffConcurrentWritersGetDistinctFiles(t *testing.T) {
	ws := handoffFixture(t, false)
	const n = 8
	paths := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			p, _, err := Write(context.Background(), ws, handoffNow, Options{Git: "/nonexistent/git"})
			paths <- p
			errs <- err
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		seen[<-paths] = true
	}
	ents, _ := os.ReadDir(ws.HandoffsDir())
	if len(seen) != n || len(ents) != n {
		t.Errorf("%d writers made %d distinct paths and %d files", n, len(seen), len(ents))
	}
}

func TestHandoffTrackingSymlinkedOutside(t *testing.T) {
	ws := handoffFixture(t, false)
	td := filepath.Join(ws.Root, ".agent", "tasks", "4e71e8_review-cli", "tracking")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("TOP SECRET\n"), 0o644)
	if err := os.RemoveAll(td); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, td); err != nil {
		t.Fatal(err)
	}
	h, err := Build(context.Background(), ws, handoffNow, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.Text, "TOP SECRET") || strings.Contains(h.Text, outside) {
		t.Error("the handoff shows a note from outside the workspace")
	}
}

func TestHandoffDirSymlinkedOutside(t *testing.T) {
	ws := handoffFixture(t, false)
	outside := t.TempDir()
	if err := os.Symlink(outside, ws.HandoffsDir()); err != nil {
		t.Fatal(err)
	}
	_, _, err := Write(context.Background(), ws, handoffNow, Options{})
	if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside the workspace: %v", ents)
	}
}

// contextFixture copies the task context's test workspace (shared so that the
// handoff and the context are tested on the same tasks) into a temp dir.
func contextFixture(t *testing.T) *workspace.Workspace {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	if err := os.CopyFS(root, os.DirFS("../taskcontext/testdata/context_ws")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
