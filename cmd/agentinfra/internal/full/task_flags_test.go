package full

import (
	"testing"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/taskcontext"
)

func TestNewCmdTaskCreate(t *testing.T) {
	testFlags(t, cli.NewCmdTaskCreate, []flagCase[cli.TaskCreateOptions]{
		{name: "required only: priority and difficulty from the workspace",
			argv: []string{"-d", "Add retry", "-m", "coder"},
			want: cli.TaskCreateOptions{Create: task.CreateOptions{Description: "Add retry", Mode: "coder"}}},
		{name: "every flag, lists split on commas",
			argv: []string{"--description", "Review", "--mode", "reviewer", "-p", "P1", "--difficulty", "hard",
				"--skills", "go-testing, code-review", "--skills", "docs", "--agent", "@a,@b", "--agent", "@c",
				"--slug", "lock_review", "--force", "--json"},
			want: cli.TaskCreateOptions{JSON: true, Create: task.CreateOptions{Description: "Review", Mode: "reviewer",
				Priority: "P1", Difficulty: "hard", Skills: []string{"go-testing", "code-review", "docs"},
				Agents: []string{"@a", "@b", "@c"}, Slug: "lock_review", Force: true}}},
		{name: "no description", argv: []string{"-m", "coder"}, wantErr: "--description is required"},
		{name: "blank description", argv: []string{"-d", "  ", "-m", "coder"}, wantErr: "--description is required"},
		{name: "no mode", argv: []string{"-d", "x"}, wantErr: "--mode is required"},
		{name: "an argument", argv: []string{"-d", "x", "-m", "coder", "extra"}, wantErr: `unknown command "extra"`},
		{name: "unknown flag", argv: []string{"-d", "x", "-m", "coder", "--owner", "ana"}, wantErr: "unknown flag: --owner"},
	})
}

func TestNewCmdTaskUpdate(t *testing.T) {
	noSkills := []string(nil)
	testFlags(t, cli.NewCmdTaskUpdate, []flagCase[cli.TaskUpdateOptions]{
		{name: "status only", argv: []string{"a1b2c3", "--status", "done"},
			want: cli.TaskUpdateOptions{ID: "a1b2c3", Update: matrix.Update{Status: matrix.Str("done")}}},
		{name: "every field",
			argv: []string{"a1b2c3", "-s", "WIP", "-p", "1", "--difficulty", "L", "-m", "coder", "-d", "New words",
				"--skills", "a,b", "--agent", "@x", "--agent", "@y,@z", "--set", "Owner=ana", "--set", " Due =a=b", "--force", "--json"},
			want: cli.TaskUpdateOptions{ID: "a1b2c3", Force: true, JSON: true, Update: matrix.Update{
				Status: matrix.Str("WIP"), Priority: matrix.Str("1"), Difficulty: matrix.Str("L"), Mode: matrix.Str("coder"),
				Description: matrix.Str("New words"), Skills: &[]string{"a", "b"}, AddAgents: []string{"@x", "@y", "@z"},
				Set: map[string]string{"Owner": "ana", "Due": "a=b"}}}},
		{name: `--skills "" clears the skills`, argv: []string{"a1b2c3", "--skills", ""},
			want: cli.TaskUpdateOptions{ID: "a1b2c3", Update: matrix.Update{Skills: &noSkills}}},
		{name: "an empty status is still a change the service refuses", argv: []string{"a1b2c3", "--status", ""},
			want: cli.TaskUpdateOptions{ID: "a1b2c3", Update: matrix.Update{Status: matrix.Str("")}}},
		{name: "nothing to change", argv: []string{"a1b2c3", "--json"}, wantErr: "nothing to change"},
		{name: "--set without =", argv: []string{"a1b2c3", "--set", "Owner"}, wantErr: `--set "Owner": want COLUMN=VALUE`},
		{name: "--set without a column", argv: []string{"a1b2c3", "--set", "=ana"}, wantErr: "want COLUMN=VALUE"},
		{name: "empty description", argv: []string{"a1b2c3", "-d", " "}, wantErr: "--description must not be empty"},
		{name: "no ID", argv: []string{"--status", "DONE"}, wantErr: "accepts 1 arg(s), received 0"},
		{name: "two IDs", argv: []string{"a1b2c3", "b2c3d4", "--status", "DONE"}, wantErr: "accepts 1 arg(s), received 2"},
	})
}

func TestNewCmdTaskClaim(t *testing.T) {
	testFlags(t, cli.NewCmdTaskClaim, []flagCase[cli.TaskClaimOptions]{
		{name: "agent", argv: []string{"a1b2c3", "--agent", "@coder"}, want: cli.TaskClaimOptions{ID: "a1b2c3", Agent: "@coder"}},
		{name: "json", argv: []string{"--json", "a1b2c3", "--agent", "coder"}, want: cli.TaskClaimOptions{ID: "a1b2c3", Agent: "coder", JSON: true}},
		{name: "no agent", argv: []string{"a1b2c3"}, wantErr: "--agent is required"},
		{name: "no ID", argv: []string{"--agent", "@coder"}, wantErr: "accepts 1 arg(s)"},
	})
}

func TestNewCmdTaskList(t *testing.T) {
	testFlags(t, cli.NewCmdTaskList, []flagCase[cli.TaskListOptions]{
		{name: "no filter", argv: nil, want: cli.TaskListOptions{}},
		{name: "every filter",
			argv: []string{"--status", "TODO,IN_PROGRESS", "-p", "P1", "-p", "P2", "-m", "coder", "--agent", "@coder",
				"--skill", "go-testing", "-q", "retry fetcher", "--ready", "--sort", "-priority", "-n", "5", "--json"},
			want: cli.TaskListOptions{JSON: true, Query: matrix.Query{Status: []string{"TODO", "IN_PROGRESS"}, Priority: []string{"P1", "P2"},
				Mode: "coder", Agent: "@coder", Skill: "go-testing", Text: "retry fetcher", Ready: true, Sort: "-priority", Limit: 5}}},
		{name: "unknown sort", argv: []string{"--sort", "sideways"}, wantErr: "sideways"},
		{name: "a limit that is not a number", argv: []string{"-n", "all"}, wantErr: `invalid argument "all"`},
		{name: "an argument", argv: []string{"TODO"}, wantErr: `unknown command "TODO"`},
	})
}

func TestNewCmdTaskShowScaffoldContextArchive(t *testing.T) {
	testFlags(t, cli.NewCmdTaskShow, []flagCase[cli.TaskShowOptions]{
		{name: "ID", argv: []string{"a1b2c3"}, want: cli.TaskShowOptions{ID: "a1b2c3"}},
		{name: "json", argv: []string{"a1b2c3", "--json"}, want: cli.TaskShowOptions{ID: "a1b2c3", JSON: true}},
		{name: "no ID", argv: nil, wantErr: "accepts 1 arg(s)"},
	})
	testFlags(t, cli.NewCmdTaskScaffold, []flagCase[cli.TaskScaffoldOptions]{
		{name: "ID", argv: []string{"260120204151"}, want: cli.TaskScaffoldOptions{ID: "260120204151"}},
		{name: "slug", argv: []string{"a1b2c3", "--slug", "login_fix", "--json"},
			want: cli.TaskScaffoldOptions{ID: "a1b2c3", Scaffold: task.ScaffoldOptions{Slug: "login_fix"}, JSON: true}},
	})
	defaults := taskcontext.Options{TrackingFiles: taskcontext.DefaultTrackingFiles, TrackingBytes: taskcontext.DefaultTrackingBytes}
	testFlags(t, cli.NewCmdTaskContext, []flagCase[cli.TaskContextOptions]{
		{name: "defaults", argv: []string{"a1b2c3"}, want: cli.TaskContextOptions{ID: "a1b2c3", Context: defaults}},
		{name: "limits", argv: []string{"a1b2c3", "--tracking", "1", "--tracking-bytes", "100", "--json"},
			want: cli.TaskContextOptions{ID: "a1b2c3", JSON: true, Context: taskcontext.Options{TrackingFiles: 1, TrackingBytes: 100}}},
		{name: "negative", argv: []string{"a1b2c3", "--tracking", "-1"}, wantErr: "must be positive"},
	})
	testFlags(t, cli.NewCmdTaskArchive, []flagCase[cli.TaskArchiveOptions]{
		{name: "ID", argv: []string{"e5f6a7"}, want: cli.TaskArchiveOptions{ID: "e5f6a7"}},
		{name: "all done", argv: []string{"--all-done", "--json"}, want: cli.TaskArchiveOptions{AllDone: true, JSON: true}},
		{name: "neither", argv: nil, wantErr: "give either a task ID or --all-done"},
		{name: "both", argv: []string{"e5f6a7", "--all-done"}, wantErr: "give either a task ID or --all-done"},
		{name: "two IDs", argv: []string{"e5f6a7", "a1b2c3"}, wantErr: "accepts at most 1 arg(s)"},
	})
}
