package full

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/fix"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/handoff"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/skills"
)

func TestNewCmdDispatch(t *testing.T) {
	def := dispatch.Options{ID: "a1b2c3", CLI: runner.CLIGemini, ApprovalMode: runner.ApprovalDefault, Timeout: dispatch.DefaultTimeout}
	every := dispatch.Options{ID: "a1b2c3", Mode: "reviewer", Model: "claude-sonnet-4-5", CLI: "claude", TaskOverride: "-",
		ContextFiles: []string{"a.go", "b/c.go"}, Session: "s-1", ApprovalMode: "yolo", Timeout: 10 * time.Minute, DryRun: true, Force: true}
	testFlags(t, NewCmdDispatch, []flagCase[DispatchOptions]{
		{name: "defaults", argv: []string{"a1b2c3"}, want: DispatchOptions{Dispatch: def}},
		{name: "every flag; context files as given, stdin not read yet",
			argv: []string{"a1b2c3", "--mode", "reviewer", "--model", "claude-sonnet-4-5", "--cli", " Claude ", "--task-override", "-",
				"--context-file", "a.go", "--context-file", "b/c.go", "--session", "s-1", "--approval-mode", "yolo",
				"--timeout", "10m", "--dry-run", "--force", "--json"},
			want: DispatchOptions{Dispatch: every, JSON: true}},
		{name: "unknown CLI", argv: []string{"a1b2c3", "--cli", "cursor"}, wantErr: `--cli "cursor": use one of gemini, claude, codex`},
		{name: "unknown approval mode", argv: []string{"a1b2c3", "--approval-mode", "all"}, wantErr: `--approval-mode "all"`},
		{name: "zero timeout", argv: []string{"a1b2c3", "--timeout", "0s"}, wantErr: "--timeout must be positive"},
		{name: "a timeout that is not a duration", argv: []string{"a1b2c3", "--timeout", "10"}, wantErr: `invalid argument "10"`},
		{name: "no ID", argv: []string{"--dry-run"}, wantErr: "accepts 1 arg(s)"},
	})
}

func TestNewCmdPromptModel(t *testing.T) {
	testFlags(t, cli.NewCmdPrompt, []flagCase[cli.PromptOptions]{
		{name: "defaults", argv: []string{"a1b2c3"}, want: cli.PromptOptions{ID: "a1b2c3", SkillFormat: skills.FormatSummary}},
		{name: "every flag", argv: []string{"a1b2c3", "--mode", "reviewer", "--task-override", "Plan only", "--context-file", "x.go",
			"--skill-format", "full", "--skip-missing-skills", "--json"},
			want: cli.PromptOptions{ID: "a1b2c3", Mode: "reviewer", TaskOverride: "Plan only", ContextFiles: []string{"x.go"},
				SkillFormat: skills.FormatFull, SkipMissingSkills: true, JSON: true}},
		{name: "unknown format", argv: []string{"a1b2c3", "--skill-format", "short"}, wantErr: "--skill-format"},
	})
	testFlags(t, cli.NewCmdModel, []flagCase[cli.ModelOptions]{
		{name: "ID", argv: []string{"a1b2c3"}, want: cli.ModelOptions{ID: "a1b2c3"}},
		{name: "mode and difficulty", argv: []string{"--mode", "oracle", "--difficulty", "med", "--json"},
			want: cli.ModelOptions{Mode: "oracle", Difficulty: "med", JSON: true}},
		{name: "nothing", argv: nil, wantErr: "pass a task ID, or --mode and --difficulty"},
		{name: "two IDs", argv: []string{"a1b2c3", "b2c3d4"}, wantErr: "accepts at most 1 arg(s)"},
	})
}

func TestNewCmdSkillHandoff(t *testing.T) {
	testFlags(t, cli.NewCmdSkillLoad, []flagCase[cli.SkillLoadOptions]{
		{name: "slugs", argv: []string{"go-testing", "code-review"}, want: cli.SkillLoadOptions{Slugs: []string{"go-testing", "code-review"}, Format: skills.FormatFull}},
		{name: "format", argv: []string{"go-testing", "--format", "instructions_only", "--json"},
			want: cli.SkillLoadOptions{Slugs: []string{"go-testing"}, Format: skills.FormatInstructionsOnly, JSON: true}},
		{name: "no slug", argv: nil, wantErr: "requires at least 1 arg(s)"},
		{name: "unknown format", argv: []string{"go-testing", "--format", "html"}, wantErr: "--format"},
	})
	testFlags(t, cli.NewCmdHandoff, []flagCase[cli.HandoffOptions]{
		{name: "defaults", argv: nil, want: cli.HandoffOptions{Handoff: handoff.Options{Done: handoff.DefaultDone, Next: handoff.DefaultNext}}},
		{name: "every flag", argv: []string{"--out", "docs/HANDOFF.md", "--done", "3", "--next", "0", "--json"},
			want: cli.HandoffOptions{JSON: true, Handoff: handoff.Options{Out: "docs/HANDOFF.md", Done: 3, Next: 0}}},
		{name: "negative", argv: []string{"--next", "-1"}, wantErr: "--done and --next must be positive"},
		{name: "an argument", argv: []string{"extra"}, wantErr: `unknown command "extra"`},
	})
}

func TestNewCmdAgent(t *testing.T) {
	testFlags(t, NewCmdAgentCreate, []flagCase[AgentCreateOptions]{
		{name: "every flag", argv: []string{"papi", "--spec", "Keep it green", "--role", "reviewer", "--project", "web", "--cli", "claude", "--json"},
			want: AgentCreateOptions{JSON: true, Create: fleet.CreateInput{Name: "papi", Spec: "Keep it green", Role: "reviewer",
				Project: "web", CLI: "claude", Source: fleet.SourceHuman}}},
		{name: "no name", argv: []string{"--spec", "s"}, wantErr: "accepts 1 arg(s)"},
	})
	testFlags(t, NewCmdAgentStart, []flagCase[AgentStartOptions]{
		{name: "free text", argv: []string{"papi", "Add", "a retry"},
			want: AgentStartOptions{Start: fleet.StartInput{Name: "papi", Text: "Add a retry", Source: fleet.SourceHuman}}},
		{name: "task", argv: []string{"papi", "--task", "3f9a2c", "--json"},
			want: AgentStartOptions{JSON: true, Start: fleet.StartInput{Name: "papi", TaskID: "3f9a2c", Source: fleet.SourceHuman}}},
		{name: "next", argv: []string{"papi", "--next"},
			want: AgentStartOptions{Start: fleet.StartInput{Name: "papi", Next: true, Source: fleet.SourceHuman}}},
		{name: "no name", argv: nil, wantErr: "requires at least 1 arg(s)"},
	})
	testFlags(t, NewCmdAgentList, []flagCase[AgentListOptions]{
		{name: "filters", argv: []string{"--status", "idle", "--project", "web", "--json"},
			want: AgentListOptions{JSON: true, Filter: fleet.ListFilter{Status: "idle", Project: "web"}}},
		{name: "watch needs a terminal", argv: []string{"--watch"}, wantErr: "--watch redraws a terminal"},
	})
	testFlags(t, NewCmdAgentHistory, []flagCase[AgentHistoryOptions]{
		{name: "defaults", argv: []string{"papi"}, want: AgentHistoryOptions{Name: "papi", Page: 1, PageSize: fleet.DefaultPageSize}},
		{name: "page", argv: []string{"papi", "--page", "2", "--page-size", "50"}, want: AgentHistoryOptions{Name: "papi", Page: 2, PageSize: 50}},
	})
	testFlags(t, NewCmdAgentDelete, []flagCase[AgentDeleteOptions]{
		{name: "force", argv: []string{"papi", "--force", "--json"}, want: AgentDeleteOptions{Name: "papi", Force: true, JSON: true}},
	})
	testFlags(t, NewCmdAgentShow, []flagCase[AgentShowOptions]{
		{name: "name", argv: []string{"papi"}, want: AgentShowOptions{Name: "papi"}},
	})
	testFlags(t, NewCmdAgentStop, []flagCase[AgentStopOptions]{
		{name: "name", argv: []string{"papi", "--json"}, want: AgentStopOptions{Name: "papi", JSON: true}},
	})
}

func TestNewCmdServeMigrateInit(t *testing.T) {
	testFlags(t, NewCmdServe, []flagCase[ServeOptions]{
		{name: "stdio", argv: nil, want: ServeOptions{LogLevel: slog.LevelWarn}},
		{name: "http", argv: []string{"--http", "127.0.0.1:8765", "--toolsets", "fleet", "--log-level", "debug"},
			want: ServeOptions{Addr: "127.0.0.1:8765", Toolsets: []string{"fleet"}, LogLevel: slog.LevelDebug}},
		{name: "remote", argv: []string{"--http", "0.0.0.0:8765", "--allow-remote"},
			want: ServeOptions{Addr: "0.0.0.0:8765", AllowRemote: true, LogLevel: slog.LevelWarn}},
		{name: "remote without a token", argv: []string{"--http", "0.0.0.0:8765", "--allow-remote", "--no-token"}, wantErr: "needs a token"},
		{name: "no token", argv: []string{"--http", "127.0.0.1:8765", "--no-token"},
			want: ServeOptions{Addr: "127.0.0.1:8765", NoToken: true, LogLevel: slog.LevelWarn}},
		{name: "no token and a token file", argv: []string{"--http", "127.0.0.1:8765", "--no-token", "--token-file", "t"}, wantErr: "give one"},
		{name: "token without http", argv: []string{"--token-file", "t"}, wantErr: "apply to --http only"},
		{name: "unknown toolset", argv: []string{"--toolsets", "files"}, wantErr: "--toolsets"},
		{name: "unknown log level", argv: []string{"--log-level", "loud"}, wantErr: "--log-level"},
	})
	testFlags(t, cli.NewCmdMigrate, []flagCase[cli.MigrateOptions]{
		{name: "write", argv: nil, want: cli.MigrateOptions{}},
		{name: "dry run", argv: []string{"--dry-run", "--json"}, want: cli.MigrateOptions{DryRun: true, JSON: true}},
	})
	// init creates a workspace where it is told: --root, else
	// $AGENTINFRA_ROOT, else the current folder.
	dir := t.TempDir()
	for _, tc := range []struct {
		argv []string
		env  map[string]string
		want string
	}{
		{nil, nil, dir},
		{nil, map[string]string{"AGENTINFRA_ROOT": "/env/root"}, "/env/root"},
		{[]string{"--root", "/flag/root"}, map[string]string{"AGENTINFRA_ROOT": "/env/root"}, "/flag/root"},
	} {
		f, _, _ := testFactory(dir, cliOpts{Env: tc.env})
		root := newRootCmd(f)
		var got *cli.InitOptions
		old, _, _ := root.Find([]string{"init"})
		root.RemoveCommand(old)
		root.AddCommand(cli.NewCmdInit(f.Factory, func(_ context.Context, o *cli.InitOptions) error { got = o; return nil }))
		root.SetArgs(append([]string{"init", "--json"}, tc.argv...))
		if err := root.Execute(); err != nil || got == nil || got.Dir != tc.want || !got.JSON {
			t.Errorf("%v %v: err %v, options %+v; want Dir %s", tc.argv, tc.env, err, got, tc.want)
		}
	}
}

func TestNewCmdValidateFlags(t *testing.T) {
	testFlags(t, cli.NewCmdValidate, []flagCase[cli.ValidateOptions]{
		{name: "defaults", argv: nil, want: cli.ValidateOptions{Format: "text", Files: []string{}}},
		{name: "json alias", argv: []string{"--json"}, want: cli.ValidateOptions{Format: "json", Files: []string{}}},
		{name: "files", argv: []string{"a.md", "b.md"}, want: cli.ValidateOptions{Format: "text", Files: []string{"a.md", "b.md"}}},
		{name: "staged", argv: []string{"--staged"}, want: cli.ValidateOptions{Format: "text", Files: []string{}, Staged: true}},
		{name: "fix joins by default", argv: []string{"--fix"}, want: cli.ValidateOptions{Format: "text", Files: []string{}, Fix: true, FixMode: fix.Join}},
		{name: "fix move dry run", argv: []string{"--fix=move", "--dry-run"}, want: cli.ValidateOptions{Format: "text", Files: []string{}, Fix: true, FixMode: fix.Move, DryRun: true}},
		{name: "bad format", argv: []string{"--format", "xml"}, wantErr: "--format must be text or json"},
		{name: "staged with files", argv: []string{"--staged", "a.md"}, wantErr: "do not pass files"},
		{name: "dry run without fix", argv: []string{"--dry-run"}, wantErr: "--dry-run goes with --fix"},
		{name: "fix with a space", argv: []string{"--fix", "move"}, wantErr: "with '='"},
		{name: "fix with files", argv: []string{"--fix", "a.md", "b.md"}, wantErr: "cannot take --staged or FILE"},
		{name: "bad fix mode", argv: []string{"--fix=rewrite"}, wantErr: "--fix=rewrite"},
	})
}
