package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
)

// parseVocabulary decodes a config file's matrix section.
func parseVocabulary(src string) (*matrix.Vocabulary, error) {
	c, err := Parse(Rel, []byte(src), "/repo", nil)
	if err != nil {
		return nil, err
	}
	return c.Vocabulary()
}

func vocabularyOf(t *testing.T, src string) (*matrix.Vocabulary, error) {
	t.Helper()
	return parseVocabulary(src)
}

const vocabConfig = `# workspace config
models:
  fast: gemini-2.5-flash
matrix:
  statuses: [Open, Doing, Done]
  difficulties: [S, M, L]
  aliases:
    status: { WIP: Doing, "in review": Doing }
    difficulty: { medium: M, small: S }
  canonicalize: true
`

func TestVocabularyFromConfig(t *testing.T) {
	v, err := vocabularyOf(t, vocabConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Statuses(), []string{"Open", "Doing", "Done"}) || !slices.Equal(v.Priorities(), matrix.Priorities) || !v.Canonicalize() {
		t.Errorf("statuses %v priorities %v canonicalize %v", v.Statuses(), v.Priorities(), v.Canonicalize())
	}
	for _, c := range []struct{ col, in, want string }{
		{matrix.ColStatus, "wip", "Doing"}, {matrix.ColStatus, "In Review", "Doing"}, {matrix.ColStatus, "DONE", "Done"},
		{matrix.ColStatus, "completed", "Done"}, // a default alias whose value the config keeps
		{matrix.ColDiff, "m", "M"}, {matrix.ColDiff, "Medium", "M"}, {matrix.ColDiff, "small", "S"},
	} {
		if got, err := v.Normalize(c.col, c.in); err != nil || got != c.want {
			t.Errorf("Normalize(%s, %q) = %q, %v; want %q", c.col, c.in, got, err, c.want)
		}
	}
	// The narrowed list refuses what it left out, and says where the list comes from.
	for _, in := range []string{"TODO", "REVIEW", "blocked"} {
		_, err := v.Status(in)
		if !errors.Is(err, matrix.ErrInvalid) || !strings.Contains(err.Error(), "valid: Open, Doing, Done") || !strings.Contains(err.Error(), "from .agent/config.yaml") {
			t.Errorf("Status(%q) = %v", in, err)
		}
	}
	// A file read with it: REVIEW is an error, WIP is not.
	d := matrix.ParseWith([]byte("| ID | Status | Diff |\n|---|---|---|\n| a1 | WIP | medium |\n| a2 | REVIEW | M |\n"), v)
	diags := d.Diagnostics()
	if len(diags) != 1 || diags[0].Line != 4 || !strings.Contains(diags[0].Message, `unknown status "REVIEW"; valid: Open, Doing, Done`) {
		t.Errorf("diagnostics = %+v", diags)
	}
	if tk, _ := d.Task("a1"); tk.Status != "Doing" || tk.Difficulty != "M" {
		t.Errorf("a1 = %+v", tk)
	}
}

func TestVocabularyConfigErrors(t *testing.T) {
	for _, c := range []struct{ name, src, mention string }{
		{"not a mapping", "matrix: [a, b]\n", ".agent/config.yaml:1:9: matrix: must be a mapping"},
		{"unknown key", "matrix:\n  colors: [red]\n", ".agent/config.yaml:2:3: matrix.colors: unknown key"},
		{"statuses not a list", "matrix:\n  statuses: TODO\n", ".agent/config.yaml:2:13: matrix.statuses: must be a list"},
		{"empty list", "matrix:\n  priorities: []\n", "matrix.priorities: must list at least one value"},
		{"alias to nothing", "matrix:\n  difficulties: [easy, hard]\n  aliases:\n    difficulty: {M: med}\n",
			`.agent/config.yaml:4:17: matrix.aliases.difficulty: difficulty alias "M" → "med": "med" is not one of easy, hard`},
		{"alias for a column without values", "matrix:\n  aliases:\n    mode: {c: coder}\n", ".agent/config.yaml:3:5: matrix.aliases.mode: unknown column"},
		{"duplicate value", "matrix:\n  statuses: [TODO, todo]\n", `status values "TODO" and "todo" are the same value`},
		{"canonicalize not a bool", "matrix:\n  canonicalize: maybe\n", ".agent/config.yaml:2:17: matrix.canonicalize: must be true or false"},
		{"bad YAML", "matrix:\n  statuses: [TODO\n", ".agent/config.yaml: yaml:"},
	} {
		_, err := parseVocabulary(c.src)
		if !errors.Is(err, ErrConfig) || agenterr.KindOf(err) != agenterr.Invalid || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: err = %v; want ErrConfig mentioning %q", c.name, err, c.mention)
		}
	}
	// No file, no section, other sections only: the defaults.
	for _, src := range []string{"", "models:\n  fast: x\n", "matrix:\n"} {
		v, err := parseVocabulary(src)
		if err != nil || v != matrix.DefaultVocabulary() {
			t.Errorf("%q: %v, %v; want the default vocabulary", src, v, err)
		}
	}
}

// Every section of one file, decoded in one pass: the typed values the
// services get, with relative paths resolved against the workspace root.
func TestParseEverySection(t *testing.T) {
	const src = `# the whole file
matrix:
  statuses: [Open, Doing, Done]
models:
  fast: f-model
  deep: d-model
  modes: {coder: deep, reviewer: my-model}
fleet:
  backend: coder
  cli: claude
  role: reviewer
  branch_prefix: bots/
  worktree_dir: ../wt
  setup: npm ci
  timeout: 45m
  approval_mode: auto_edit
projects:
  - name: web
    display_name: Web app
    path: ../web
    base_branch: main
  - name: here
coder:
  url: https://coder.example.com
  token_file: ~/.config/coderv2/session
  app_slug: ccw
supervision:
  max_concurrent_sessions: 5
  operators: ["@ana", bo]
  mode: hybrid
  watchdog: {threshold: 5m, escalation_wait: 2m, max_retries: 3}
  prompts: {ask: always, timeout: 90, stop_status: blocked}
  budget: {max_turns: 20, max_duration: 2h, max_tokens: 2000000}
  checkpoint_before_edit: true
  retention_days: 30
slack:
  channel: C0123
  users: {ana: U0123ANA}
  inline_diff_lines: 40
other_tool: {anything: [1, 2]}
`
	env := map[string]string{"HOME": "/home/ana", EnvLockTimeout: "2m"}
	c, err := Parse(Rel, []byte(src), "/repo", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Vocabulary()
	if err != nil || !slices.Equal(v.Statuses(), []string{"Open", "Doing", "Done"}) {
		t.Errorf("vocabulary %v, %v", v.Statuses(), err)
	}
	m, err := c.Models()
	if err != nil || m.Fast != "f-model" || m.Deep != "d-model" || m.Modes["coder"] != "deep" || m.Modes["reviewer"] != "my-model" {
		t.Errorf("models %+v, %v", m, err)
	}
	f, err := c.Fleet()
	want := Fleet{Backend: "coder", CLI: "claude", Role: "reviewer", BranchPrefix: "bots/", WorktreeDir: "../wt", Setup: "npm ci",
		Timeout: 45 * time.Minute, ApprovalMode: "auto_edit", Projects: []Project{
			{Name: "web", DisplayName: "Web app", Path: "/web", BaseBranch: "main"},
			{Name: "here", Path: "/repo"},
		}}
	if err != nil || !equalFleet(f, want) {
		t.Errorf("fleet\n got %+v, %v\nwant %+v", f, err, want)
	}
	co, err := c.Coder()
	if err != nil || co.URL != "https://coder.example.com" || co.TokenFile != "/home/ana/.config/coderv2/session" || co.AppSlug != "ccw" {
		t.Errorf("coder %+v, %v", co, err)
	}
	sv, err := c.Supervision()
	wantSV := Supervision{MaxConcurrentSessions: 5, Operators: []string{"@ana", "bo"}, Mode: "hybrid",
		Watchdog:             Watchdog{Threshold: 5 * time.Minute, EscalationWait: 2 * time.Minute, MaxRetries: 3},
		Prompts:              Prompts{Ask: AskAlways, Timeout: 90 * time.Second, StopStatus: "blocked"},
		Budget:               Budget{MaxTurns: 20, MaxDuration: 2 * time.Hour, MaxTokens: 2000000},
		CheckpointBeforeEdit: true, RetentionDays: 30}
	if err != nil || !reflect.DeepEqual(sv, wantSV) {
		t.Errorf("supervision\n got %+v, %v\nwant %+v", sv, err, wantSV)
	}
	sl, err := c.Slack()
	if err != nil || sl.Channel != "C0123" || sl.Users["ana"] != "U0123ANA" || sl.InlineDiffLines != 40 {
		t.Errorf("slack %+v, %v", sl, err)
	}
	if c.LockTimeout != 2*time.Minute {
		t.Errorf("lock timeout %v", c.LockTimeout)
	}
}

func equalFleet(a, b Fleet) bool { return reflect.DeepEqual(a, b) }

// A wrong section fails its own services only, with the file, line and
// key; a file that is not YAML fails every section.
func TestSectionErrorsNameFileLineAndKey(t *testing.T) {
	for _, c := range []struct{ name, src, section, mention string }{
		{"fleet timeout", "fleet:\n  timeout: soon\n", "fleet", ".agent/config.yaml:2:12: fleet.timeout: use a duration such as 30m"},
		{"fleet unknown key", "fleet:\n  timout: 5m\n", "fleet", ".agent/config.yaml:2:3: fleet.timout: unknown key; the fleet section takes backend, cli"},
		{"fleet list value", "fleet:\n  cli: [gemini]\n", "fleet", ".agent/config.yaml:2:8: fleet.cli: must be a single value"},
		{"project without name", "projects:\n  - path: ../x\n", "fleet", ".agent/config.yaml:2:5: projects[0].name: a project needs a name"},
		{"projects not a list", "projects: web\n", "fleet", ".agent/config.yaml:1:11: projects: must be a list"},
		{"models mode list", "models:\n  modes:\n    coder: [deep]\n", "models", ".agent/config.yaml:3:12: models.modes.coder: must be a single value"},
		{"models unknown key", "models:\n  fastest: x\n", "models", "models.fastest: unknown key"},
		{"coder not a mapping", "coder: [url]\n", "coder", ".agent/config.yaml:1:8: coder: must be a mapping"},
		{"supervision sessions", "supervision:\n  max_concurrent_sessions: many\n", "supervision", ".agent/config.yaml:2:28: supervision.max_concurrent_sessions: must be a whole number"},
		{"watchdog threshold", "supervision:\n  watchdog:\n    threshold: soon\n", "supervision", ".agent/config.yaml:3:16: supervision.watchdog.threshold: use a duration such as 5m"},
		{"prompts ask", "supervision:\n  prompts: {ask: sometimes}\n", "supervision", ".agent/config.yaml:2:18: supervision.prompts.ask: use always, never or questions_and_errors"},
		{"prompts unknown key", "supervision:\n  prompts:\n    asks: never\n", "supervision", ".agent/config.yaml:3:5: supervision.prompts.asks: unknown key"},
		{"negative budget", "supervision:\n  budget: {max_turns: -1}\n", "supervision", ".agent/config.yaml:2:23: supervision.budget.max_turns: must be a whole number, 0 or more"},
		{"slack users", "slack:\n  users: [ana]\n", "slack", ".agent/config.yaml:2:10: slack.users: must map people to Slack member IDs"},
		{"slack unknown key", "slack:\n  chanel: C1\n", "slack", ".agent/config.yaml:2:3: slack.chanel: unknown key"},
		{"supervision operators", "supervision:\n  operators: ana\n", "supervision", ".agent/config.yaml:2:14: supervision.operators: must be a list"},
	} {
		cfg, err := Parse(Rel, []byte(c.src), "/repo", nil)
		if err != nil {
			t.Fatalf("%s: Parse: %v (a section's error is the section's)", c.name, err)
		}
		var got error
		switch c.section {
		case "fleet":
			_, got = cfg.Fleet()
		case "models":
			_, got = cfg.Models()
		case "coder":
			_, got = cfg.Coder()
		case "supervision":
			_, got = cfg.Supervision()
		case "slack":
			_, got = cfg.Slack()
		}
		e := agenterr.As(got)
		if !errors.Is(got, ErrConfig) || e == nil || e.Kind != agenterr.Invalid || e.File != Rel || e.Line == 0 || !strings.Contains(got.Error(), c.mention) {
			t.Errorf("%s: %v; want an Invalid ErrConfig mentioning %q", c.name, got, c.mention)
		}
		if _, err := cfg.Vocabulary(); err != nil {
			t.Errorf("%s: the matrix section fails too: %v", c.name, err)
		}
	}
	_, err := Parse(Rel, []byte("fleet: {timeout: 5m\n"), "/repo", nil)
	if e := agenterr.As(err); e == nil || e.Kind != agenterr.Invalid || e.Field != "config" || !errors.Is(err, ErrConfig) {
		t.Errorf("not YAML: %v", err)
	}
}

// Load reads the file once per call and counts it; a missing file is the
// defaults and is not counted.
func TestLoadCountsReads(t *testing.T) {
	root := t.TempDir()
	before := Loads()
	c, err := Load(root, nil, os.ReadFile)
	if err != nil || c.Exists || Loads() != before {
		t.Fatalf("no file: %+v, %v, loads %d → %d", c, err, before, Loads())
	}
	if err := os.MkdirAll(filepath.Join(root, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte("models: {fast: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Load(root, nil, os.ReadFile)
	if m, _ := c.Models(); err != nil || !c.Exists || m.Fast != "x" || Loads() != before+1 {
		t.Fatalf("file: %+v, %v, loads %d → %d", c, err, before, Loads())
	}
}
