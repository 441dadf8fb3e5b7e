package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/workspace"
)

// testLibrary is the fixture workspace plus the fixture global folder.
func testLibrary(t *testing.T) (*workspace.Workspace, *Library) {
	t.Helper()
	ws, err := workspace.New("testdata/ws")
	if err != nil {
		t.Fatal(err)
	}
	global, _ := filepath.Abs("testdata/global")
	env := map[string]string{EnvGlobalSkills: global}
	return ws, NewLibrary(ws, func(k string) string { return env[k] })
}

func TestRenderGolden(t *testing.T) {
	_, lib := testLibrary(t)
	ctx := context.Background()
	for _, slug := range []string{"go-testing", "plain", "global-only"} {
		s, err := lib.Load(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Formats {
			t.Run(slug+"/"+f, func(t *testing.T) {
				got, err := Render(s, f)
				if err != nil {
					t.Fatal(err)
				}
				// A global skill shows its absolute folder: name it the same
				// wherever the repository is checked out.
				global, _ := filepath.Abs(filepath.Join("testdata", "global"))
				golden.Check(t, "testdata/golden/"+slug+"."+f+".md", strings.ReplaceAll(got, global, "$GLOBAL_SKILLS"))
				again, _ := Render(s, f)
				if again != got {
					t.Error("rendering twice gave different bytes")
				}
			})
		}
	}
}

func TestLoadKeepsMetaAndResources(t *testing.T) {
	_, lib := testLibrary(t)
	s, err := lib.Load(context.Background(), "go-testing")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "Go testing" || !strings.HasPrefix(s.Description, "How to write table-driven") {
		t.Errorf("name/description = %q / %q", s.Name, s.Description)
	}
	if s.Meta["license"] != "MIT" {
		t.Errorf("meta license = %v", s.Meta["license"])
	}
	md, ok := s.Meta["metadata"].(map[string]any)
	if !ok || md["author"] != "agentinfra" {
		t.Errorf("nested meta lost: %#v", s.Meta["metadata"])
	}
	if got, want := strings.Join(s.Resources, ","), "reference.md,scripts/run.sh"; got != want {
		t.Errorf("resources = %s, want %s (hidden files skipped, SKILL.md excluded, sorted)", got, want)
	}
	if s.Source != SourceWorkspace || s.DisplayDir != ".agent/skills/go-testing" {
		t.Errorf("source %q display %q", s.Source, s.DisplayDir)
	}
	if !strings.HasPrefix(s.Body, "# Go testing\n") {
		t.Errorf("body should start after the front matter: %q", s.Body[:min(30, len(s.Body))])
	}
}

func TestWorkspaceShadowsGlobal(t *testing.T) {
	_, lib := testLibrary(t)
	ctx := context.Background()
	s, err := lib.Load(ctx, "shadowed")
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != SourceWorkspace || s.Description != "the workspace copy" {
		t.Errorf("got %s copy %q", s.Source, s.Description)
	}
	g, err := lib.Load(ctx, "global-only")
	if err != nil {
		t.Fatal(err)
	}
	if g.Source != SourceGlobal {
		t.Errorf("global-only source = %s", g.Source)
	}
	list, _, err := lib.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range list {
		if s.Slug == "shadowed" {
			n++
			if s.Source != SourceWorkspace {
				t.Errorf("List returned the global copy of a shadowed skill")
			}
		}
	}
	if n != 1 {
		t.Errorf("shadowed listed %d times", n)
	}
}

func TestListReportsBrokenAndLoadsOthers(t *testing.T) {
	_, lib := testLibrary(t)
	list, problems, err := lib.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, s := range list {
		slugs = append(slugs, s.Slug)
	}
	if got, want := strings.Join(slugs, ","), "global-only,go-testing,plain,shadowed"; got != want {
		t.Errorf("listed %s, want %s", got, want)
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %v, want bad-type and broken", problems)
	}
	// bad-type: name is a list, at line 3 of the file.
	if problems[0].Slug != "bad-type" || problems[0].Line != 3 || !strings.Contains(problems[0].Error(), "name must be a single value") {
		t.Errorf("bad-type problem = %+v (%v)", problems[0], problems[0].Err)
	}
	// broken: the unclosed flow list on line 4 is reported by yaml at the
	// following line; either way it is within the front matter, not line 1-2.
	p := problems[1]
	if p.Slug != "broken" || p.Line < 4 || p.Line > 5 {
		t.Errorf("broken problem = %+v (%v)", p, p.Err)
	}
	wantPrefix := filepath.Join("testdata", "ws", ".agent", "skills", "broken", "SKILL.md") + ":" + fmt.Sprint(p.Line) + ":"
	if !strings.Contains(p.Error(), wantPrefix) {
		t.Errorf("error %q should name file:line %q", p.Error(), wantPrefix)
	}
}

func TestFrontMatterLineOffsets(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"bad indent", "---\nname: x\ndescription: y\n  bad: indent\n---\nbody\n", 4, ""},
		{"tab", "---\nname: x\n\tdescription: y\n---\n", 3, ""},
		{"not a mapping", "---\n- a\n- b\n---\n", 2, "must be a mapping"},
		{"unclosed", "---\nname: x\n", 1, "never closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFrontMatter("f.md", []byte(tc.src))
			var fe *FrontMatterError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FrontMatterError", err)
			}
			if fe.Line != tc.line || !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", fe.Line, fe.Msg, tc.line, tc.msg)
			}
		})
	}
	fm, err := parseFrontMatter("f.md", []byte("---\r\nname: x\r\n---\r\nBody\r\n"))
	if err != nil || fm.meta["name"] != "x" || fm.body != "Body\n" {
		t.Errorf("CRLF front matter: %v %#v %q", err, fm, fm.body)
	}
}

func TestLoadErrors(t *testing.T) {
	_, lib := testLibrary(t)
	ctx := context.Background()
	for _, slug := range []string{"../go-testing", "a/b", ".hidden", "..", ""} {
		_, err := lib.Load(ctx, slug)
		if !errors.Is(err, ErrInvalidSlug) {
			t.Errorf("Load(%q) = %v, want ErrInvalidSlug", slug, err)
		}
	}
	_, err := lib.Load(ctx, "go-testin")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `did you mean "go-testing"`) {
		t.Errorf("unknown skill error = %v", err)
	}
	_, err = lib.Load(ctx, "zzzzzzzz")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "agentinfra skill list") {
		t.Errorf("unknown skill without close match = %v", err)
	}
	_, err = lib.Load(ctx, "broken")
	if err == nil || !strings.Contains(err.Error(), "SKILL.md:") {
		t.Errorf("broken skill load = %v", err)
	}
}

func TestInstructionsOnlySections(t *testing.T) {
	body := strings.Join([]string{
		"# Title", "keep 1",
		"## Examples", "drop 1", "### Sub of examples", "drop 2",
		"## Steps", "keep 2",
		"```", "## Examples inside a fence are not headings", "```",
		"### Reference:", "drop 3",
		"### After", "keep 3",
		"#### Resources (files)", "drop 4",
		"# Next", "keep 4",
		"## Example-driven design", "keep 5",
		"## References and more", "keep 6",
	}, "\n")
	got := InstructionsOnly(body)
	for _, k := range []string{"keep 1", "keep 2", "keep 3", "keep 4", "keep 5", "keep 6", "## Examples inside a fence"} {
		if !strings.Contains(got, k) {
			t.Errorf("dropped %q:\n%s", k, got)
		}
	}
	for _, d := range []string{"drop 1", "drop 2", "drop 3", "drop 4", "Sub of examples"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q:\n%s", d, got)
		}
	}
}

func TestSummaryBoundedAndDeterministic(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "## Heading number %03d with some words é\n\ntext\n\n", i)
	}
	s := Skill{Slug: "long", Name: "Long", Description: strings.Repeat("word ", 400), DisplayDir: ".agent/skills/long", Body: b.String()}
	got := renderSummary(s)
	if n := utf8.RuneCountInString(got); n > SummaryLimit {
		t.Errorf("summary is %d runes, limit %d", n, SummaryLimit)
	}
	if !strings.Contains(got, "Heading number 000") || !strings.Contains(got, "more headings") {
		t.Errorf("summary should keep the first headings and say how many were cut:\n%s", got)
	}
	if !strings.Contains(got, "agentinfra skill load long") {
		t.Errorf("summary lost the load hint:\n%s", got)
	}
	golden.Check(t, "testdata/golden/"+"long.summary.md", got)
}

func TestSuggest(t *testing.T) {
	c := []string{"go-testing", "code-review", "matrix-editing", "go-style"}
	if got := Suggest("go-test", c); len(got) == 0 || got[0] != "go-testing" {
		t.Errorf("Suggest(go-test) = %v", got)
	}
	if got := Suggest("review", c); len(got) != 1 || got[0] != "code-review" {
		t.Errorf("Suggest(review) = %v", got)
	}
	if got := Suggest("xyzzy", c); len(got) != 0 {
		t.Errorf("Suggest(xyzzy) = %v", got)
	}
}

func TestModes(t *testing.T) {
	ws, _ := testLibrary(t)
	ctx := context.Background()
	modes, problems, err := ListModes(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(modes) != 2 || modes[0].Name != "coder" || modes[1].Name != "oracle" {
		t.Fatalf("modes = %+v", modes)
	}
	c := modes[0]
	if c.Model != "fast" || c.Description != "Writes and tests code" || strings.Join(c.Skills, ",") != "go-testing" || c.Body != "You are a careful coder.\n" {
		t.Errorf("coder = %+v", c)
	}
	if o := modes[1]; o.Model != "" || o.Skills == nil || len(o.Skills) != 0 {
		t.Errorf("oracle without front matter = %+v", o)
	}
	if len(problems) != 1 || problems[0].Slug != "broken-mode" || problems[0].Line != 3 {
		t.Errorf("problems = %+v", problems)
	}
	_, err = LoadMode(ctx, ws, "coderr")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "existing modes: broken-mode, coder, oracle") || !strings.Contains(err.Error(), `did you mean "coder"`) {
		t.Errorf("missing mode error = %v", err)
	}
	if _, err := LoadMode(ctx, ws, "../coder"); !errors.Is(err, ErrInvalidSlug) {
		t.Errorf("traversal mode = %v", err)
	}
}

func TestYAMLErrorLines(t *testing.T) {
	// Each case marks the offending file line; the reported line must be it
	// (or the line after, where YAML only notices the problem).
	cases := []struct {
		src  string
		want int
	}{
		{"---\nname: x\ndescription: d\ntags: [a, b\n---\n", 4},
		{"---\ntags: [a, b\n---\n", 2},
		{"---\nname: x\nb: \"unclosed\n---\n", 3},
		{"---\nname: x\n  y: z\n---\n", 3},
		{"---\na: {x: 1\nb: 2\n---\n", 2},
		{"---\nname: x\nname: y\n---\n", 3},
	}
	for _, tc := range cases {
		_, err := parseFrontMatter("f.md", []byte(tc.src))
		var fe *FrontMatterError
		if !errors.As(err, &fe) {
			t.Errorf("%q: err = %v", tc.src, err)
			continue
		}
		if fe.Line != tc.want && fe.Line != tc.want+1 {
			t.Errorf("%q: line %d (%s), want %d", tc.src, fe.Line, fe.Msg, tc.want)
		}
	}
}

func TestMetaAlwaysEncodesAsJSON(t *testing.T) {
	fm, err := parseFrontMatter("f.md", []byte("---\nname: x\nmeta:\n  1: one\n  nested: {true: yes}\nlist: [{2: two}]\nwhen: 2026-11-21\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(fm.meta)
	if err != nil {
		t.Fatalf("meta does not encode as JSON: %v (%#v)", err, fm.meta)
	}
	for _, want := range []string{`"1":"one"`, `"true":"yes"`, `"2":"two"`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("%s lacks %s", j, want)
		}
	}
}

func TestGlobalFolderFromHome(t *testing.T) {
	home := t.TempDir()
	d := filepath.Join(home, ".agent", "global_skills", "writing")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("---\ndescription: Clear prose.\n---\n"), 0o644)
	lib := NewLibrary(nil, func(k string) string { return map[string]string{"HOME": home}[k] })
	s, err := lib.Load(context.Background(), "writing")
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != SourceGlobal || s.DisplayDir != "~/.agent/global_skills/writing" {
		t.Errorf("source %s display %s", s.Source, s.DisplayDir)
	}
	// Without HOME or AGENTINFRA_GLOBAL_SKILLS there is no global folder.
	if dirs := NewLibrary(nil, func(string) string { return "" }).Dirs(); len(dirs) != 0 {
		t.Errorf("dirs = %v", dirs)
	}
}

// README.md and files or folders starting with '_' or '.' are notes, drafts
// and templates that people keep next to their modes and skills.
func TestNotesNextToModesAndSkillsAreNotModesOrSkills(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, ".agent", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents/coder.md", "You code.\n")
	write("agents/README.md", "# Modes\n\nOne file per mode.\n")
	write("agents/readme.md", "# lower-case notes\n")
	write("agents/_template.md", "---\ndescription: [fill in]\n---\n")
	write("agents/.hidden.md", "x\n")
	write("skills/go-testing/SKILL.md", "---\nname: go-testing\n---\nTest.\n")
	write("skills/_template/SKILL.md", "---\nname: template\n---\n")
	write("skills/.cache/SKILL.md", "---\nname: cache\n---\n")
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	modes, problems, err := ListModes(ctx, ws)
	if err != nil || len(problems) != 0 || len(modes) != 1 || modes[0].Name != "coder" {
		t.Fatalf("ListModes = %+v, %v, %v; want only coder", modes, problems, err)
	}
	if got := strings.Join(ModeNames(ws), ","); got != "coder" {
		t.Errorf("ModeNames = %s, want coder", got)
	}
	for _, name := range []string{"README", "readme", "_template"} {
		if _, err := LoadMode(ctx, ws, name); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "existing modes: coder") {
			t.Errorf("LoadMode(%s) = %v, want not found listing coder", name, err)
		}
	}
	lib := NewLibrary(ws, func(string) string { return "" })
	if got := strings.Join(lib.Slugs(), ","); got != "go-testing" {
		t.Errorf("skills = %s, want go-testing", got)
	}
	if _, err := lib.Load(ctx, "_template"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load(_template) = %v, want not found", err)
	}
}
