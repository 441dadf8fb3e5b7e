package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// promptCLIWorkspace writes a small workspace: two modes, three skills (one
// broken), a matrix with three rows and one task folder.
func promptCLIWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".agent/agents/coder.md":  "---\ndescription: Writes code\nmodel: fast\nskills: [code-review]\n---\nYou are a coder.\n",
		".agent/agents/oracle.md": "You answer design questions.\n",
		".agent/skills/go-testing/SKILL.md": "---\nname: Go testing\ndescription: Table-driven tests.\n---\n" +
			"# Go testing\n\n## Rules\n\nUse t.TempDir.\n\n## Examples\n\nfunc TestX(t *testing.T) {}\n",
		".agent/skills/go-testing/scripts/run.sh": "go test ./...\n",
		".agent/skills/code-review/SKILL.md":      "---\nname: Code review\ndescription: Review checklist.\n---\n## Checklist\n\n- tests\n",
		".agent/skills/broken/SKILL.md":           "---\nname: Broken\ntags: [a\n---\nbody\n",
		".agent/tasks/a1b2c3_add-retry/README.md": "# Add retry\n\nRetry three times.\n",
		"src/fetch.go": "package src\n",
		".agent/DEVELOPMENT_MATRIX.md": "# Matrix\n\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
			"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n" +
			"| a1b2c3 | TODO | P1 | hard | coder | go-testing | | Add retry | 2026-11-20 | 2026-11-20 |\n" +
			"| d4e5f6 | TODO | P2 | med | oracle | nope | | Decide cache | 2026-11-20 | 2026-11-20 |\n" +
			"| 0a0b0c | TODO | P3 | easy | explorer | | | Look around | 2026-11-20 | 2026-11-20 |\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCLISkillList(t *testing.T) {
	dir := promptCLIWorkspace(t)
	code, out, errs := runCLI(t, dir, cliOpts{}, "skill", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "code-review") || !strings.Contains(out, "go-testing") || strings.Contains(out, "broken ") {
		t.Errorf("list output:\n%s", out)
	}
	if !strings.Contains(errs, "broken/SKILL.md:3:") {
		t.Errorf("the broken skill should be reported with file:line on stderr: %q", errs)
	}

	code, out, _ = runCLI(t, dir, cliOpts{}, "skill", "list", "--json")
	var got struct {
		Skills []struct {
			Slug, Source, Path string
			Resources          []string
		}
		Problems []struct {
			Name, Path string
			Line       int
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d, json:\n%s", code, out)
	}
	if len(got.Skills) != 2 || got.Skills[1].Slug != "go-testing" || got.Skills[1].Path != ".agent/skills/go-testing/SKILL.md" ||
		strings.Join(got.Skills[1].Resources, ",") != "scripts/run.sh" {
		t.Errorf("skills = %+v", got.Skills)
	}
	if len(got.Problems) != 1 || got.Problems[0].Name != "broken" || got.Problems[0].Line != 3 {
		t.Errorf("problems = %+v", got.Problems)
	}
}

func TestCLISkillListGlobal(t *testing.T) {
	dir := promptCLIWorkspace(t)
	global := t.TempDir()
	os.MkdirAll(filepath.Join(global, "go-testing"), 0o755)
	os.MkdirAll(filepath.Join(global, "writing"), 0o755)
	os.WriteFile(filepath.Join(global, "go-testing", "SKILL.md"), []byte("---\ndescription: global copy\n---\n"), 0o644)
	os.WriteFile(filepath.Join(global, "writing", "SKILL.md"), []byte("---\ndescription: Clear prose.\n---\n"), 0o644)
	code, out, errs := runCLI(t, dir, cliOpts{Env: map[string]string{"AGENTINFRA_GLOBAL_SKILLS": global}}, "skill", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "writing" && f[1] == "global" {
			found = true
		}
	}
	if !found {
		t.Errorf("global skill missing:\n%s", out)
	}
	if strings.Contains(out, "global copy") {
		t.Errorf("the workspace go-testing must shadow the global one:\n%s", out)
	}
}

func TestCLISkillLoad(t *testing.T) {
	dir := promptCLIWorkspace(t)
	code, out, errs := runCLI(t, dir, cliOpts{}, "skill", "load", "go-testing", "--format", "instructions_only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Use t.TempDir.") || strings.Contains(out, "TestX") {
		t.Errorf("instructions_only output:\n%s", out)
	}
	code, out, _ = runCLI(t, dir, cliOpts{}, "skill", "load", "go-testing", "code-review", "--format", "summary", "--json")
	var got struct {
		Skills []struct {
			Slug, Format, Text string
			Bytes              int
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Skills) != 2 {
		t.Fatalf("exit %d json:\n%s", code, out)
	}
	if got.Skills[0].Format != "summary" || got.Skills[0].Bytes != len(got.Skills[0].Text) || !strings.Contains(got.Skills[0].Text, "- Rules") {
		t.Errorf("summary json = %+v", got.Skills[0])
	}

	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"skill", "load", "go-testin"}, 3, `did you mean "go-testing"`}, // not found
		{[]string{"skill", "load", "../go-testing"}, 2, "must not contain"},      // invalid
		{[]string{"skill", "load", "broken"}, 1, "broken/SKILL.md:3:"},
		{[]string{"skill", "load", "go-testing", "--format", "tiny"}, 2, "full, summary, instructions_only"},
		{[]string{"skill", "load"}, 2, "requires at least 1 arg"},
	}
	for _, tc := range cases {
		code, _, errs := runCLI(t, dir, cliOpts{}, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

func TestCLIModeList(t *testing.T) {
	dir := promptCLIWorkspace(t)
	code, out, errs := runCLI(t, dir, cliOpts{}, "mode", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Modes []struct {
			Name, Model, Path string
			Skills            []string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Modes) != 2 || got.Modes[0].Name != "coder" || got.Modes[0].Model != "fast" ||
		strings.Join(got.Modes[0].Skills, ",") != "code-review" || got.Modes[0].Path != ".agent/agents/coder.md" {
		t.Errorf("modes = %+v", got.Modes)
	}
	if got.Modes[1].Skills == nil {
		t.Error("skills must be [] not null")
	}
	code, out, _ = runCLI(t, dir, cliOpts{}, "mode", "list")
	if code != 0 || !strings.Contains(out, "coder") || !strings.Contains(out, "oracle") {
		t.Errorf("mode list:\n%s", out)
	}
}

func TestCLIModel(t *testing.T) {
	dir := promptCLIWorkspace(t)
	env := map[string]string{"GEMINI_MODEL_DEEP": "deep-x"}
	cases := []struct {
		args             []string
		model, tier, why string
		env              map[string]string
		difficulty, mode string
	}{
		// coder's front matter names the fast tier: that is its tier at med;
		// difficulty hard still gets the deep tier.
		{[]string{"model", "a1b2c3", "--json"}, "gemini-2.5-pro", "deep", "difficulty hard → deep", nil, "hard", "coder"},
		{[]string{"model", "a1b2c3", "--difficulty", "med", "--json"}, "gemini-2.5-flash", "fast", "difficulty med and mode coder sets model: fast in .agent/agents/coder.md", nil, "med", "coder"},
		// oracle has no model: in front matter; med + oracle → deep, from the env.
		{[]string{"model", "d4e5f6", "--json"}, "deep-x", "deep", "planning/research", env, "med", "oracle"},
		// explorer has no mode file: the rule applies.
		{[]string{"model", "0a0b0c", "--json"}, "gemini-2.5-flash", "fast", "difficulty easy", nil, "easy", "explorer"},
		{[]string{"model", "--mode", "planner", "--difficulty", "med", "--json"}, "gemini-2.5-pro", "deep", "planning/research", nil, "med", "planner"},
		{[]string{"model", "0a0b0c", "--difficulty", "hard", "--json"}, "gemini-2.5-pro", "deep", "difficulty hard", nil, "hard", "explorer"},
	}
	for _, tc := range cases {
		code, out, errs := runCLI(t, dir, cliOpts{Env: tc.env}, tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d %s", tc.args, code, errs)
			continue
		}
		var got modelJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Model != tc.model || got.Tier != tc.tier || !strings.Contains(got.Reason, tc.why) || got.Difficulty != tc.difficulty || got.Mode != tc.mode {
			t.Errorf("%v: got %+v", tc.args, got)
		}
	}
	// The workspace config names the mode's tier at difficulty med.
	os.WriteFile(filepath.Join(dir, ".agent", "config.yaml"), []byte("models:\n  modes:\n    explorer: deep\n"), 0o644)
	code, out, _ := runCLI(t, dir, cliOpts{}, "model", "0a0b0c", "--difficulty", "med")
	if code != 0 || !strings.HasPrefix(out, "gemini-2.5-pro\n") || !strings.Contains(out, "models.modes.explorer: deep in .agent/config.yaml") {
		t.Errorf("config override: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"model"}, 2, "pass a task ID"},
		{[]string{"model", "ffffff"}, 3, `"ffffff"`},
		{[]string{"model", "--mode", "x", "--difficulty", "extreme"}, 2, "easy, med or hard"},
	} {
		code, _, errs := runCLI(t, dir, cliOpts{}, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d stderr %q", tc.args, code, errs)
		}
	}
}

func TestCLIPrompt(t *testing.T) {
	dir := promptCLIWorkspace(t)
	// Context files are relative to the current folder.
	code, out, errs := runCLI(t, filepath.Join(dir, "src"), cliOpts{}, "prompt", "a1b2c3", "--context-file", "fetch.go", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got promptJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	sum := len(got.Parts) - 1
	for _, p := range got.Parts {
		kinds = append(kinds, p.Kind+":"+p.Name)
		sum += p.Bytes
	}
	if strings.Join(kinds, " ") != "mode:coder skill:go-testing skill:code-review task:a1b2c3 context:src/fetch.go protocol:protocol" {
		t.Errorf("parts = %v", kinds)
	}
	if sum != got.Bytes || got.Bytes != len(got.Text) {
		t.Errorf("sizes: parts sum %d, bytes %d, text %d", sum, got.Bytes, len(got.Text))
	}
	if !strings.Contains(got.Text, "# Context file: src/fetch.go\n\n```go\npackage src\n```\n") || !strings.Contains(got.Text, "Retry three times.") {
		t.Errorf("text:\n%s", got.Text)
	}

	// Plain text output is exactly the prompt, and stable.
	_, a, _ := runCLI(t, dir, cliOpts{}, "prompt", "a1b2c3", "--task-override", "Just plan.")
	_, b, _ := runCLI(t, dir, cliOpts{}, "prompt", "a1b2c3", "--task-override", "Just plan.")
	if a != b || !strings.Contains(a, "Just plan.") || strings.Contains(a, "Retry three times.") {
		t.Errorf("override output unstable or wrong:\n%s", a)
	}

	code, out, errs = runCLI(t, dir, cliOpts{}, "prompt", "d4e5f6", "--skip-missing-skills")
	if code != 0 || !strings.Contains(out, "## Skill: nope (not available)") || !strings.Contains(errs, `skill "nope"`) {
		t.Errorf("skip missing: exit %d stderr %q\n%s", code, errs, out)
	}

	// A task whose mode has no file gets a prompt without a mode prompt, and
	// a warning on stderr (and in --json); an explicit --mode must exist.
	code, out, errs = runCLI(t, dir, cliOpts{}, "prompt", "0a0b0c")
	wantWarn := `warning: mode "explorer" of task 0a0b0c has no .agent/agents/explorer.md; the prompt goes on without a mode prompt (existing modes: coder, oracle)`
	if code != 0 || !strings.HasPrefix(out, "# Agent mode: explorer\n\n# Task") || strings.TrimSpace(errs) != wantWarn {
		t.Errorf("unknown mode: exit %d stderr %q\n%s", code, errs, out)
	}
	code, out, _ = runCLI(t, dir, cliOpts{}, "prompt", "0a0b0c", "--json")
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "explorer.md") {
		t.Errorf("unknown mode --json: exit %d, %v, warnings %q", code, err, got.Warnings)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"prompt", "d4e5f6"}, 3, `names skill "nope"`},
		{[]string{"prompt", "a1b2c3", "--mode", "wizard"}, 3, "existing modes: coder, oracle"},
		{[]string{"prompt", "a1b2c3", "--context-file", "/etc/passwd"}, 2, "/etc/passwd"},
		{[]string{"prompt", "a1b2c3", "--context-file", "../../../../../../../../etc/passwd"}, 2, "outside the workspace"},
		{[]string{"prompt", "a1b2c3", "--skill-format", "tiny"}, 2, "--skill-format"},
		{[]string{"prompt"}, 2, "accepts 1 arg"},
	} {
		code, _, errs := runCLI(t, dir, cliOpts{}, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d stderr %q; want %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
