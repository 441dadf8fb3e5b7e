package taskcontext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// ctxFixture copies testdata/context_ws into a temp dir and adds a symlink
// from the c0ffee task folder to a file outside the workspace.
func ctxFixture(t *testing.T) *workspace.Workspace {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	if err := os.CopyFS(root, os.DirFS("testdata/context_ws")); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "secret.md")
	if err := os.WriteFile(secret, []byte("outside the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, ".agent", "tasks", "c0ffee_fetch-retry", "sneaky-link")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestTaskContextGolden(t *testing.T) {
	ws := ctxFixture(t)
	ctx := context.Background()
	opts := Options{TrackingFiles: 3, TrackingBytes: 300, Getenv: noEnv}
	for _, id := range []string{"c0ffee", "bead01", "5a5a5a", "b10c4d"} {
		t.Run(id, func(t *testing.T) {
			c, err := Build(ctx, ws, id, opts)
			if err != nil {
				t.Fatal(err)
			}
			text := Render(c)
			golden.Check(t, "testdata/context_golden/"+id+".md", text)
			golden.Check(t, "testdata/context_golden/"+id+".json", golden.JSON(t, c))
			again, err := Build(ctx, ws, id, opts)
			if err != nil || Render(again) != text {
				t.Error("building the context twice gave different bytes")
			}
		})
	}
}

func TestTaskContextContent(t *testing.T) {
	ws := ctxFixture(t)
	c, err := Build(context.Background(), ws, "c0ffee", Options{TrackingFiles: 3, TrackingBytes: 300, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	// Links: every Markdown link once, anchors and fenced code skipped.
	got := map[string]string{}
	for _, l := range c.Links {
		if _, dup := got[l.Target]; dup {
			t.Errorf("link %s listed twice", l.Target)
		}
		got[l.Target] = l.Status + " " + l.Path
	}
	want := map[string]string{
		"../../../src/fetch.go":         "ok src/fetch.go",
		"/docs/design.md#retry":         "ok docs/design.md",
		"../../../docs/spec%20v2.md":    "ok docs/spec v2.md",
		"artifacts/diagram.txt":         "ok .agent/tasks/c0ffee_fetch-retry/artifacts/diagram.txt",
		"plan.md":                       "missing .agent/tasks/c0ffee_fetch-retry/plan.md",
		"artifacts/sub/":                "ok .agent/tasks/c0ffee_fetch-retry/artifacts/sub",
		"../../../../outside.md":        "outside ",
		"sneaky-link":                   "outside ",
		"https://example.com/fetch?x=1": "external ",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("link %s: got %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d links, want %d: %v", len(got), len(want), got)
	}
	// Tracking: the last 3 of 4 files by name, the long one cut to its end.
	if c.Tracking.Total != 4 || len(c.Tracking.Entries) != 3 {
		t.Fatalf("tracking: total %d, %d entries; want 4 and 3", c.Tracking.Total, len(c.Tracking.Entries))
	}
	if first := c.Tracking.Entries[0].Path; !strings.HasSuffix(first, "2026-11-18_start.md") {
		t.Errorf("oldest entry shown is %s, want 2026-11-18_start.md", first)
	}
	last := c.Tracking.Entries[2]
	if !last.Truncated || len(last.Content) > 300 || !strings.Contains(last.Content, "Left: wire the budget") {
		t.Errorf("long entry: truncated=%v, %d bytes, want its end within 300 bytes:\n%s", last.Truncated, len(last.Content), last.Content)
	}
	// Skills: the row's (one missing, reported not fatal), then the mode's.
	var slugs []string
	for _, s := range c.Skills {
		slugs = append(slugs, s.Slug+"/"+s.From)
		if s.Slug == "lost-skill" && (s.Found || !strings.Contains(s.Error, "lost-skill")) {
			t.Errorf("missing skill: %+v", s)
		}
		if s.Found && !strings.Contains(s.Summary, s.Slug) && s.Summary == "" {
			t.Errorf("skill %s has no summary", s.Slug)
		}
	}
	if strings.Join(slugs, " ") != "go-testing/task lost-skill/task code-review/mode" {
		t.Errorf("skills = %v", slugs)
	}
	if c.Mode.Path != ".agent/agents/coder.md" || !c.Mode.Exists {
		t.Errorf("mode = %+v", c.Mode)
	}
	if c.ArtifactsTotal != 3 || len(c.Artifacts) != 3 {
		t.Errorf("artifacts = %+v", c.Artifacts)
	}
	// Nothing from outside the workspace leaks into the context.
	if strings.Contains(golden.JSON(t, c), "outside the workspace\n") || strings.Contains(Render(c), filepath.Dir(ws.Root)) {
		t.Error("the context shows content or paths from outside the workspace")
	}
}

func TestTaskContextBounds(t *testing.T) {
	ws := ctxFixture(t)
	c, err := Build(context.Background(), ws, "c0ffee", Options{TrackingFiles: 1, ReadmeBytes: 40, Artifacts: 2, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Readme.Truncated || len(c.Readme.Content) > 40 || c.Readme.Bytes <= 40 {
		t.Errorf("readme: truncated=%v content=%d bytes total=%d", c.Readme.Truncated, len(c.Readme.Content), c.Readme.Bytes)
	}
	if len(c.Links) == 0 {
		t.Error("links must come from the whole README, not the truncated part")
	}
	if len(c.Tracking.Entries) != 1 || !strings.HasSuffix(c.Tracking.Entries[0].Path, "2026-11-20_session.md") {
		t.Errorf("tracking entries = %+v", c.Tracking.Entries)
	}
	if len(c.Artifacts) != 2 || c.ArtifactsTotal != 3 {
		t.Errorf("artifacts: %d shown of %d", len(c.Artifacts), c.ArtifactsTotal)
	}
	text := Render(c)
	for _, s := range []string{"truncated: the first", "The last 1 of 4 files", "and 1 more (showing 2 of 3)"} {
		if !strings.Contains(text, s) {
			t.Errorf("rendered context does not say %q", s)
		}
	}
}

func TestTaskContextUnknownID(t *testing.T) {
	ws := ctxFixture(t)
	_, err := Build(context.Background(), ws, "c0ffe", Options{Getenv: noEnv})
	if !errors.Is(err, matrix.ErrNotFound) {
		t.Fatalf("err = %v, want matrix.ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "did you mean c0ffee") {
		t.Errorf("error does not suggest the close ID: %v", err)
	}
	_, err = Build(context.Background(), ws, "zzzzzzzz", Options{Getenv: noEnv})
	var nf *agenterr.Error
	if !errors.As(err, &nf) || nf.Kind != agenterr.NotFound || nf.Value != "zzzzzzzz" || len(nf.Suggestions) != 0 {
		t.Errorf("err = %v, want a NotFound agenterr.Error without suggestions", err)
	}
}

func TestTaskContextReadmeSymlinkOutside(t *testing.T) {
	ws := ctxFixture(t)
	readme := filepath.Join(ws.Root, ".agent", "tasks", "c0ffee_fetch-retry", "README.md")
	outside := filepath.Join(filepath.Dir(ws.Root), "secret.md")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, readme); err != nil {
		t.Fatal(err)
	}
	_, err := Build(context.Background(), ws, "c0ffee", Options{Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("err = %v, want a refusal naming the workspace boundary", err)
	}
}

func noEnv(string) string { return "" }

func TestTrackingSymlinkedOutsideIsNotRead(t *testing.T) {
	ws := ctxFixture(t)
	td := filepath.Join(ws.Root, ".agent", "tasks", "4e71e8_review-cli", "tracking")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("TOP SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(td); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, td); err != nil {
		t.Fatal(err)
	}
	c, err := Build(context.Background(), ws, "4e71e8", Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tracking.Entries) != 0 || !strings.Contains(c.Tracking.Error, "outside the workspace") {
		t.Errorf("tracking = %+v", c.Tracking)
	}
	if strings.Contains(Render(c), "TOP SECRET") {
		t.Error("the context shows a note from outside the workspace")
	}
}

// A task whose ID is another task's ID plus "_..." (auth and auth_v2) does
// not take the other task's folder: auth_v2_login is auth_v2's, so auth has
// none.
func TestTaskContextFolderOfAPrefixID(t *testing.T) {
	root := t.TempDir()
	matrixText := `# Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| auth | TODO | P2 | med | coder | - | - | Log in with email | 2026-11-01 | 2026-11-01 |
| auth_v2 | TODO | P2 | med | coder | - | - | Log in with passkeys | 2026-11-02 | 2026-11-02 |
`
	if err := os.MkdirAll(filepath.Join(root, ".agent", "tasks", "auth_v2_login"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "tasks", "auth_v2_login", "README.md"), []byte("# auth_v2\n\nPASSKEYS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte(matrixText), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Build(context.Background(), ws, "auth", Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if c.TaskDir != "" || strings.Contains(Render(c), "PASSKEYS") {
		t.Fatalf("auth took auth_v2's folder: TaskDir %q", c.TaskDir)
	}
	c, err = Build(context.Background(), ws, "auth_v2", Options{Getenv: noEnv})
	if err != nil || c.TaskDir != ".agent/tasks/auth_v2_login/" {
		t.Fatalf("auth_v2: TaskDir %q, %v", c.TaskDir, err)
	}
}
