package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

func noEnv(string) string { return "" }

// promptFixture copies testdata/prompt_ws into a temp dir (so tests may add
// symlinks) and returns the workspace and its parsed matrix.
func promptFixture(t *testing.T) (*workspace.Workspace, *matrix.Doc) {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS("testdata/prompt_ws")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dst)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := matrix.NewStore(ws.MatrixPath()).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ws, doc
}

func mustTask(t *testing.T, d *matrix.Doc, id string) matrix.Task {
	t.Helper()
	task, ok := d.Task(id)
	if !ok {
		t.Fatalf("fixture has no task %s", id)
	}
	return task
}

func TestAssemblePromptGolden(t *testing.T) {
	ws, doc := promptFixture(t)
	ctx := context.Background()
	task := mustTask(t, doc, "a1b2c3")
	cases := []struct {
		name string
		in   Input
	}{
		{"default", Input{Task: task}},
		{"full_skills_context", Input{Task: task, SkillFormat: "full", ContextFiles: []string{"src/fetch.go", filepath.Join(ws.Root, ".agent", "skills", "code-review", "checklists", "security.md")}}},
		{"instructions_override_mode", Input{Task: task, Mode: "oracle", SkillFormat: "instructions_only", TaskOverride: "Only write the design note; do not change code."}},
		{"no_task_dir", Input{Task: mustTask(t, doc, "0a0b0c"), Mode: "oracle"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Getenv = noEnv
			p, err := Assemble(ctx, ws, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/prompt_golden/"+tc.name+".md", p.Text)
			// Part sizes add up to the text (parts are joined by one newline).
			total := len(p.Parts) - 1
			for _, part := range p.Parts {
				total += part.Bytes
			}
			if total != len(p.Text) {
				t.Errorf("parts sum to %d bytes, text is %d", total, len(p.Text))
			}
			again, err := Assemble(ctx, ws, tc.in)
			if err != nil || again.Text != p.Text {
				t.Error("assembling twice gave different bytes")
			}
		})
	}
}

func TestAssemblePromptParts(t *testing.T) {
	ws, doc := promptFixture(t)
	p, err := Assemble(context.Background(), ws, Input{Task: mustTask(t, doc, "a1b2c3"), ContextFiles: []string{"src/fetch.go"}, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, part := range p.Parts {
		kinds = append(kinds, part.Kind+":"+part.Name)
	}
	// Row skills first (go-testing), then the mode's not already named (code-review).
	want := "mode:coder skill:go-testing skill:code-review task:a1b2c3 context:src/fetch.go protocol:protocol"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("parts = %s\nwant    %s", got, want)
	}
	if strings.Join(p.Skills, ",") != "go-testing,code-review" || len(p.MissingSkills) != 0 {
		t.Errorf("skills %v missing %v", p.Skills, p.MissingSkills)
	}
	// The context file holds a run of four backticks, so the fence is five.
	if !strings.Contains(p.Text, "\n`````go\npackage src") || !strings.Contains(p.Text, "inside.\nfunc Fetch() error { return nil }\n`````\n") {
		t.Errorf("context file not fenced with a longer fence:\n%s", p.Text)
	}
	for _, s := range []string{"agentinfra task update a1b2c3 --status REVIEW", ".agent/tasks/a1b2c3_add-retry/tracking/", ".agent/tasks/a1b2c3_add-retry/artifacts/", "- Owner: bob", "## README (.agent/tasks/a1b2c3_add-retry/README.md)"} {
		if !strings.Contains(p.Text, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
}

func TestAssemblePromptErrors(t *testing.T) {
	ws, doc := promptFixture(t)
	ctx := context.Background()
	task := mustTask(t, doc, "a1b2c3")

	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	link := filepath.Join(ws.Root, "src", "link.txt")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws.Root, "src", "bin.dat"), []byte("a\x00b"), 0o644)
	os.WriteFile(filepath.Join(ws.Root, "src", "big.txt"), bytes.Repeat([]byte("x"), MaxContextFileBytes+1), 0o644)

	cases := []struct {
		name string
		in   Input
		want []string
	}{
		{"traversal", Input{Task: task, ContextFiles: []string{"../../etc/passwd"}}, []string{"context file ../../etc/passwd", "outside the workspace"}},
		{"traversal to nothing", Input{Task: task, ContextFiles: []string{"../../no/such/file"}}, []string{"context file ../../no/such/file", "outside the workspace"}},
		{"missing", Input{Task: task, ContextFiles: []string{"src/nope.txt"}}, []string{`context_files "src/nope.txt": there is no such file`}},
		{"absolute outside", Input{Task: task, ContextFiles: []string{outside}}, []string{outside, "outside the workspace"}},
		{"symlink outside", Input{Task: task, ContextFiles: []string{"src/link.txt"}}, []string{"src/link.txt", "outside the workspace"}},
		{"folder", Input{Task: task, ContextFiles: []string{"src"}}, []string{`context_files "src": it is a folder`}},
		{"binary", Input{Task: task, ContextFiles: []string{"src/bin.dat"}}, []string{`context_files "src/bin.dat": it looks binary`}},
		{"over the limit", Input{Task: task, ContextFiles: []string{"src/big.txt"}}, []string{`context_files "src/big.txt": it is over the 1048576-byte limit`}},
		{"missing mode", Input{Task: task, Mode: "wizard"}, []string{`mode "wizard"`, "existing modes: coder, oracle"}},
		{"traversal mode", Input{Task: task, Mode: "../coder"}, []string{"invalid name"}},
		{"no mode", Input{Task: mustTask(t, doc, "0a0b0c")}, []string{"task 0a0b0c has no mode", "--mode", "coder, oracle"}},
		{"missing skill", Input{Task: mustTask(t, doc, "d4e5f6")}, []string{`task d4e5f6 names skill "nope-skill"`, ".agent/skills/nope-skill/SKILL.md", "--skip-missing-skills"}},
		{"bad format", Input{Task: task, SkillFormat: "tiny"}, []string{"full, summary, instructions_only"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Getenv = noEnv
			_, err := Assemble(ctx, ws, tc.in)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// A context file refused for what it is, is invalid input on context_files.
	for _, f := range []string{"src", "src/bin.dat", "src/big.txt"} {
		_, err := Assemble(ctx, ws, Input{Task: task, ContextFiles: []string{f}, Getenv: noEnv})
		if e := agenterr.As(err); e == nil || e.Kind != agenterr.Invalid || e.Field != "context_files" || e.Value != f {
			t.Errorf("context file %s: %#v; want invalid context_files %q", f, e, f)
		}
	}
	// Missing or outside the workspace: invalid input too (exit code 2), not a
	// bare file-system error.
	for _, f := range []string{"src/nope.txt", "../../etc/passwd", "../../no/such/file"} {
		_, err := Assemble(ctx, ws, Input{Task: task, ContextFiles: []string{f}, Getenv: noEnv})
		if k := agenterr.KindOf(err); k != agenterr.Invalid {
			t.Errorf("context file %s: kind %v (%v); want invalid", f, k, err)
		}
	}
	_, err := Assemble(ctx, ws, Input{Task: task, Mode: "wizard", Getenv: noEnv})
	if !errors.Is(err, skills.ErrNotFound) {
		t.Errorf("missing mode should wrap skills.ErrNotFound: %v", err)
	}
}

func TestAssemblePromptSkipMissingSkill(t *testing.T) {
	ws, doc := promptFixture(t)
	p, err := Assemble(context.Background(), ws, Input{Task: mustTask(t, doc, "d4e5f6"), SkipMissingSkills: true, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.MissingSkills, ",") != "nope-skill" || len(p.Skills) != 0 {
		t.Errorf("skills %v missing %v", p.Skills, p.MissingSkills)
	}
	if !strings.Contains(p.Text, "## Skill: nope-skill (not available)") {
		t.Errorf("a skipped skill must leave a note in the prompt:\n%s", p.Text)
	}
}

// BenchmarkAssemble measures what `agentinfra prompt ID` does on a
// 10,000-row matrix with 10 skills: find the row with LoadTask and assemble
// (load_and_assemble), and the assembly alone (assemble).
func BenchmarkAssemble(b *testing.B) {
	ws := benchWorkspace(b, b.TempDir())
	ctx := context.Background()
	id := testmatrix.ID(5000)
	load := func(b *testing.B) matrix.Task {
		task, err := LoadTask(ctx, ws, id)
		if err != nil {
			b.Fatal(err)
		}
		return task
	}
	b.Run("load_and_assemble", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Assemble(ctx, ws, Input{Task: load(b), Getenv: noEnv}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("assemble", func(b *testing.B) {
		task := load(b)
		b.ReportAllocs()
		for b.Loop() {
			p, err := Assemble(ctx, ws, Input{Task: task, Getenv: noEnv})
			if err != nil {
				b.Fatal(err)
			}
			if len(p.Skills) < 10 {
				b.Fatalf("only %d skills", len(p.Skills))
			}
		}
	})
}

// benchWorkspace writes a workspace with a 10,000-row matrix, a coder mode
// naming ten skills, and those skills (each with a resource file).
func benchWorkspace(tb testing.TB, dir string) *workspace.Workspace {
	tb.Helper()
	ws, _ := workspace.New(dir)
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(ws.AgentsDir(), 0o755))
	must(os.WriteFile(ws.MatrixPath(), testmatrix.Generate(10000, 1), 0o644))
	var slugs []string
	for i := range 10 {
		slug := fmt.Sprintf("skill-%02d", i)
		slugs = append(slugs, slug)
		d := filepath.Join(ws.SkillsDir(), slug)
		must(os.MkdirAll(filepath.Join(d, "scripts"), 0o755))
		var body strings.Builder
		for j := range 12 {
			fmt.Fprintf(&body, "## Section %d\n\n%s\n\n", j, strings.Repeat("Some guidance text. ", 20))
		}
		must(os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(fmt.Sprintf("---\nname: Skill %d\ndescription: Benchmark skill number %d.\n---\n# Skill %d\n\n%s", i, i, i, body.String())), 0o644))
		must(os.WriteFile(filepath.Join(d, "scripts", "run.sh"), []byte("echo hi\n"), 0o644))
	}
	for _, s := range []string{"go-testing", "code-review", "matrix-editing"} {
		d := filepath.Join(ws.SkillsDir(), s)
		must(os.MkdirAll(d, 0o755))
		must(os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("---\nname: "+s+"\ndescription: d\n---\n## Rules\n"), 0o644))
	}
	for _, m := range []string{"coder", "reviewer", "oracle", "explorer"} {
		must(os.WriteFile(ws.ModePath(m), []byte("---\nskills: ["+strings.Join(slugs, ", ")+"]\n---\nYou are the "+m+".\n"), 0o644))
	}
	return ws
}

// TestWriteBenchWorkspace writes the benchmark workspace to
// $AGENTINFRA_BENCH_WS for timing the whole process, e.g.
//
//	AGENTINFRA_BENCH_WS=/tmp/benchws go test ./prompt -run TestWriteBenchWorkspace
//	hyperfine -N 'agentinfra --root /tmp/benchws prompt 5c2bfb'
func TestWriteBenchWorkspace(t *testing.T) {
	dir := os.Getenv("AGENTINFRA_BENCH_WS")
	if dir == "" {
		t.Skip("set AGENTINFRA_BENCH_WS=DIR to write the benchmark workspace")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	benchWorkspace(t, dir)
	t.Logf("wrote %s; task %s is row 5000", dir, testmatrix.ID(5000))
}

// LoadTask returns the row with that exact ID even when its ID appears in an
// earlier row's text, and names close matches for an unknown ID.
func TestLoadTask(t *testing.T) {
	dir := t.TempDir()
	ws, _ := workspace.New(dir)
	os.MkdirAll(ws.AgentDir(), 0o755)
	src := testmatrix.Generate(300, 7)
	// A row whose description mentions another row's ID, before that row.
	extra := fmt.Sprintf("| ffff01 | TODO | P1 | easy | coder | | | mentions %s and %s | 2026-01-01 | 2026-01-01 |\n", testmatrix.ID(5), testmatrix.ID(200))
	s := strings.Replace(string(src), "|---------|\n", "|---------|\n"+extra, 1)
	os.WriteFile(ws.MatrixPath(), []byte(s), 0o644)
	doc := matrix.Parse([]byte(s))
	ctx := context.Background()
	for _, i := range []int{0, 5, 200} {
		want, _ := doc.Task(testmatrix.ID(i))
		got, err := LoadTask(ctx, ws, want.ID)
		if err != nil {
			t.Fatalf("%s: %v", want.ID, err)
		}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Fatalf("LoadTask(%s) = %+v\nfull parse  %+v", want.ID, got, want)
		}
	}
	_, err := LoadTask(ctx, ws, testmatrix.ID(5)[:5]+"z")
	if !errors.Is(err, matrix.ErrNotFound) || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("unknown ID error = %v", err)
	}
}

// With ModeAsSystem the mode's text is not in the prompt but apart in
// System, and the rest of the prompt is the same bytes.
func TestAssembleModeAsSystem(t *testing.T) {
	ws, doc := promptFixture(t)
	ctx := context.Background()
	in := Input{Task: mustTask(t, doc, "a1b2c3"), Mode: "oracle", Getenv: noEnv}
	whole, err := Assemble(ctx, ws, in)
	if err != nil {
		t.Fatal(err)
	}
	in.ModeAsSystem = true
	apart, err := Assemble(ctx, ws, in)
	if err != nil {
		t.Fatal(err)
	}
	mode, err := skills.LoadMode(ctx, ws, "oracle")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSpace(mode.Body)
	if body == "" || strings.TrimSpace(apart.System) != body {
		t.Fatalf("System = %q, want the mode's text %q", apart.System, body)
	}
	if whole.System != "" {
		t.Errorf("without ModeAsSystem, System = %q", whole.System)
	}
	if strings.Contains(apart.Text, body) || strings.Contains(apart.Text, "# Agent mode") {
		t.Errorf("the mode's text is still in the prompt:\n%s", apart.Text)
	}
	if whole.Parts[0].Kind != PartMode || whole.Text[whole.Parts[0].Bytes+1:] != apart.Text {
		t.Errorf("the prompt without the mode differs from the standard one after its mode section")
	}
	for _, part := range apart.Parts {
		if part.Kind == PartMode {
			t.Errorf("parts still list the mode: %+v", apart.Parts)
		}
	}
}

// With the matrix given, a task whose ID is another's plus "_..." (auth,
// auth_v2) does not take the other's folder into its prompt.
func TestAssembleFolderOfAPrefixID(t *testing.T) {
	root := t.TempDir()
	src := "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
		"|---|---|---|---|---|---|---|---|---|---|\n" +
		"| auth | TODO | P2 | med | coder | - | - | Log in with email | 2026-11-01 | 2026-11-01 |\n" +
		"| auth_v2 | TODO | P2 | med | coder | - | - | Log in with passkeys | 2026-11-02 | 2026-11-02 |\n"
	dir := filepath.Join(root, ".agent", "tasks", "auth_v2_login")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# auth_v2\n\nPASSKEYS-README\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := matrix.NewStore(ws.MatrixPath()).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// With the parsed matrix (dispatch, MCP) and without it (`agentinfra
	// prompt ID` reads one row; the matrix file settles the folder).
	for _, withDoc := range []*matrix.Doc{doc, nil} {
		for id, want := range map[string]bool{"auth": false, "auth_v2": true} {
			p, err := Assemble(context.Background(), ws, Input{Task: mustTask(t, doc, id), Doc: withDoc, Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(p.Text, "PASSKEYS-README"); got != want {
				t.Errorf("prompt of %s (doc %v) holds auth_v2's README: %v, want %v", id, withDoc != nil, got, want)
			}
		}
	}
}
