package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The replays of issue 27's vectors, through Load and Evaluate as the
// bridge and the agent-side tools call them: each was auto-approved, or
// graded low, before paths were judged where they lead and commands by
// what they run.

// issueRepo is a git repository with the issue's committed symlinks:
// docs/gitdir → ../.git, docs/out → a folder outside, docs/envlink →
// ../.env; a nested repository sub/ and agentinfra's config.
func issueRepo(t *testing.T) (root, outside string) {
	t.Helper()
	root, outside = t.TempDir(), t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(root, "init", "-q")
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	git(filepath.Join(root, "sub"), "init", "-q")
	os.MkdirAll(filepath.Join(root, ".agent"), 0o755)
	os.WriteFile(filepath.Join(root, ".env"), []byte("API_KEY=secret\n"), 0o600)
	os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte("supervision:\n  operators: []\n"), 0o644)
	for link, target := range map[string]string{"docs/gitdir": "../.git", "docs/out": outside, "docs/envlink": "../.env"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// load writes the workspace policy and the user's allowlist and loads them.
func load(t *testing.T, root, policy, allow string) *Policy {
	t.Helper()
	paths := Paths{Workspace: filepath.Join(root, ".agent", FileName), Allowlist: filepath.Join(t.TempDir(), AllowlistName)}
	if err := os.WriteFile(paths.Workspace, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if allow != "" {
		if err := os.WriteFile(paths.Allowlist, []byte(allow), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Load(root, paths)
}

// High item 1: the docs' own write: ["docs/**"] and a symlink into .git,
// out of the workspace, or to the secrets file.
func TestReplaySymlinkedPaths(t *testing.T) {
	root, outside := issueRepo(t)
	p := load(t, root, "auto_approve:\n  write: [\"docs/**\"]\n  read: [\"**\"]\n", "write: [\"**\"]\nread: [\"**\"]\n")
	for _, c := range []struct {
		a     Action
		risk  string
		shown string
	}{
		{Action{Kind: KindEdit, Tool: "Write", File: "docs/gitdir/config"}, RiskCritical, "docs/gitdir/config → .git/config"},
		{Action{Kind: KindEdit, Tool: "Write", File: filepath.Join(root, "docs/gitdir/hooks/pre-commit")}, RiskCritical, ".git/hooks/pre-commit"},
		{Action{Kind: KindEdit, Tool: "Write", File: "docs/out/planted.txt"}, RiskCritical, "docs/out/planted.txt → " + filepath.Join(outside, "planted.txt")},
		{Action{Kind: KindRead, Tool: "Read", File: "docs/envlink"}, RiskHigh, "docs/envlink → .env"},
		{Action{Kind: KindRead, Tool: "Read", File: "docs/out/x"}, RiskCritical, "outside the worktree"},
	} {
		v := p.Evaluate(c.a)
		if v.Auto || v.Risk != c.risk || !strings.Contains(strings.Join(v.Why, "\n"), c.shown) {
			t.Errorf("%s %s: auto=%v risk=%s why=%q rule=%q; want asked, risk %s, the path shown as %q", c.a.Kind, c.a.File, v.Auto, v.Risk, v.Why, v.Rule, c.risk, c.shown)
		}
	}
	// A new file in a real folder through no symlink is still approved.
	if v := p.Evaluate(Action{Kind: KindEdit, Tool: "Write", File: "docs/new/guide.md"}); !v.Auto {
		t.Errorf("a new file under docs/: %+v", v)
	}
}

// issueCommands are the commands the issue saw auto-approved as low under
// the documented git * / go test * rules.
var issueCommands = []string{
	"git -c alias.x='!agentinfra approve 87 --reason approved-by-agent-B' x",
	"git -c core.pager='touch /tmp/pwned' log",
	"git config core.fsmonitor 'touch /tmp/pwned'",
	"git config --global core.hooksPath /tmp/hooks",
	"go test -exec 'touch /tmp/pwned' ./...",
	"git log --output=/tmp/outside.txt",
	"git submodule add https://example.com/r.git",
	"git apply --unsafe-paths p.diff",
}

// High item 2: each command form, with the documented git * / go test *
// rules in the policy and the allowlist, is critical and asked.
func TestReplayCommandsThatRunCode(t *testing.T) {
	root, _ := issueRepo(t)
	globs := "[\"git *\", \"go test *\", \"go *\", \"npm *\", \"find *\", \"env *\", \"xargs *\", \"echo *\", \"make *\", \"python3 *\", \"sh *\", \"agentinfra *\"]"
	p := load(t, root, "auto_approve:\n  commands: "+globs+"\n  max_risk: high\n", "commands: "+globs+"\n")
	for _, line := range append(slices.Clone(issueCommands),
		"git -c alias.x='!touch /tmp/pwned' x",
		"git fetch --upload-pack='touch /tmp/pwned' origin",
		"git clone -u 'touch /tmp/pwned' https://example.com/r.git",
		"GIT_SSH_COMMAND='touch /tmp/pwned' git fetch",
		"go test -toolexec /tmp/x ./...",
		"go generate ./...",
		"go run ./cmd/x",
		"npm test",
		"npm install",
		"find . -exec touch /tmp/pwned \\;",
		"env sh -c id",
		"git log | xargs rm",
		"echo $(touch /tmp/pwned)",
		"make",
		"python3 -c 'import os'",
		"sh script.sh",
		"agentinfra approve 87 --reason x",
		"agentinfra session stop 3",
		"git status && git -c alias.x='!id' x",
		"echo ok > .git/hooks/pre-commit",
		"echo ok > docs/gitdir/hooks/pre-commit",
	) {
		v := p.Evaluate(Action{Kind: KindCommand, Tool: "Bash", Command: line})
		if v.Auto || v.Risk != RiskCritical {
			t.Errorf("%s: auto=%v risk=%s (%s; %v); want critical, asked", line, v.Auto, v.Risk, v.Rule, v.Why)
		}
	}
	// What the rules are for still runs without a person.
	for _, line := range []string{"git status", "git log --oneline -5", "go test ./...", "git diff HEAD~1 -- docs"} {
		if v := p.Evaluate(Action{Kind: KindCommand, Tool: "Bash", Command: line}); !v.Auto {
			t.Errorf("%s was not auto-approved: %+v", line, v)
		}
	}
}

// Item 7: with no allowlist, a workspace's max_risk: critical and **
// patterns do not auto-approve the policy, a hook, or reading .env.
func TestReplayWorkspaceCannotWidenTheAllowlist(t *testing.T) {
	root, _ := issueRepo(t)
	p := load(t, root, "auto_approve:\n  write: [\"**\"]\n  read: [\"**\"]\n  tools: [Read]\n  max_risk: critical\n", "")
	for _, a := range []Action{
		{Kind: KindEdit, Tool: "Write", File: ".agent/policy.yaml"},
		{Kind: KindEdit, Tool: "Write", File: ".git/hooks/pre-commit"},
		{Kind: KindRead, Tool: "Read", File: ".env"},
		{Kind: KindEdit, Tool: "Write", File: "README.md"}, // no allowlist: nothing at all
		{Kind: KindTool, Tool: "Read"},
	} {
		if v := p.Evaluate(a); v.Auto {
			t.Errorf("%s %s was auto-approved with no allowlist: %+v", a.Kind, a.File+a.Tool, v)
		}
	}
	// An allowlist that allows every file and high risk still does not
	// make .git or the control files auto-approved.
	p = load(t, root, "auto_approve:\n  write: [\"**\"]\n  read: [\"**\"]\n  max_risk: critical\n", "write: [\"**\"]\nread: [\"**\"]\nmax_risk: high\n")
	for _, a := range []Action{
		{Kind: KindEdit, Tool: "Write", File: ".agent/policy.yaml"},
		{Kind: KindEdit, Tool: "Write", File: ".agent/config.yaml"},
		{Kind: KindEdit, Tool: "Write", File: ".git/hooks/pre-commit"},
		{Kind: KindEdit, Tool: "Write", File: ".env"},
	} {
		if v := p.Evaluate(a); v.Auto || v.Risk != RiskCritical {
			t.Errorf("%s %s: %+v; want critical, asked", a.Kind, a.File, v)
		}
	}
	if v := p.Evaluate(Action{Kind: KindEdit, Tool: "Write", File: "README.md"}); !v.Auto {
		t.Errorf("README.md under both files' **: %+v", v)
	}
}

// Item 8: a nested repository's hook, and agentinfra's own config.
func TestReplayNestedGitAndControlFiles(t *testing.T) {
	root, _ := issueRepo(t)
	p := load(t, root, "auto_approve:\n  write: [\"**\"]\n  max_risk: high\n", "write: [\"**\"]\nmax_risk: high\n")
	for _, f := range []string{"sub/.git/hooks/post-checkout", ".agent/config.yaml", ".agent/state/agentinfra.db"} {
		if v := p.Evaluate(Action{Kind: KindEdit, Tool: "Write", File: f}); v.Auto || v.Risk != RiskCritical {
			t.Errorf("%s: %+v; want critical, asked", f, v)
		}
	}
}

// Item 5: a policy that is a symlink to /dev/zero, or too large, is read
// no further than the cap: every action asks, and the warning says why.
func TestReplayPolicyFileIsCapped(t *testing.T) {
	root := t.TempDir()
	paths := Paths{Workspace: filepath.Join(root, ".agent", FileName), Allowlist: filepath.Join(root, "allow", AllowlistName)}
	os.MkdirAll(filepath.Dir(paths.Workspace), 0o755)
	os.MkdirAll(filepath.Dir(paths.Allowlist), 0o755)
	if err := os.Symlink("/dev/zero", paths.Workspace); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", paths.Allowlist); err != nil {
		t.Fatal(err)
	}
	p := Load(root, paths)
	if !p.AskAll || len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], "not a regular file") || !strings.Contains(p.Warnings[1], "not a regular file") {
		t.Fatalf("a policy and an allowlist linked to /dev/zero: AskAll=%v %q", p.AskAll, p.Warnings)
	}
	os.Remove(paths.Workspace)
	big := "auto_approve:\n  commands:\n" + strings.Repeat("    - \"git status\"\n", MaxFileSize/19+1)
	os.WriteFile(paths.Workspace, []byte(big), 0o644)
	if p := Load(root, paths); !p.AskAll || !strings.Contains(p.Warnings[0], "over the limit") {
		t.Fatalf("a policy over the cap: AskAll=%v %q", p.AskAll, p.Warnings)
	}
}
