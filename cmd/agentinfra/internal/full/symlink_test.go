package full

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlinkWorkspace is a workspace a cloned repository could ship: a task
// README, a mode file and a SKILL.md that are symlinks to a secret outside
// it, and, allowed, a mode file linked to a file inside it and a skill of
// the global skills folder that links into another folder of it.
func symlinkWorkspace(t *testing.T) (root, secret string) {
	t.Helper()
	base := t.TempDir()
	secret = filepath.Join(base, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "repo")
	for _, d := range []string{".agent/agents", ".agent/skills/notes", ".agent/skills/ok", ".agent/tasks/a1_readme", "docs", "global/linked"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	write(".agent/DEVELOPMENT_MATRIX.md", "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n|---|---|---|---|---|---|---|---|---|---|\n"+
		"| a1 | TODO | P1 | easy | coder | | | README links out | 2026-01-01 | 2026-01-01 |\n"+
		"| b2 | TODO | P1 | easy | leaky | | | mode links out | 2026-01-01 | 2026-01-01 |\n"+
		"| c3 | TODO | P1 | easy | coder | notes | | skill links out | 2026-01-01 | 2026-01-01 |\n"+
		"| d4 | TODO | P1 | easy | inside | ok | | links that stay inside | 2026-01-01 | 2026-01-01 |\n")
	write("docs/coder.md", "You code, from docs/.\n")
	write(".agent/agents/coder.md", "You code.\n")
	write(".agent/skills/ok/SKILL.md", "---\nname: ok\ndescription: fine\n---\nBody\n")
	link(secret, ".agent/tasks/a1_readme/README.md")
	link(secret, ".agent/agents/leaky.md")
	link(secret, ".agent/skills/notes/SKILL.md")
	link("../../docs/coder.md", ".agent/agents/inside.md")
	return root, secret
}

// Issue 19, item 13: no reader follows a symlink out of the workspace; each
// refuses with the file it would not read, and nothing of the secret is
// printed. Symlinks that stay inside still work.
func TestReadersRefuseSymlinksOutOfTheWorkspace(t *testing.T) {
	root, _ := symlinkWorkspace(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"task", "show", "a1"}, ".agent/tasks/a1_readme/README.md resolves to"},
		{[]string{"task", "show", "a1", "--json"}, ".agent/tasks/a1_readme/README.md resolves to"},
		{[]string{"task", "context", "a1"}, "outside the workspace"},
		{[]string{"prompt", "a1"}, ".agent/tasks/a1_readme/README.md resolves to"},
		{[]string{"dispatch", "a1", "--dry-run"}, ".agent/tasks/a1_readme/README.md resolves to"},
		{[]string{"prompt", "b2"}, ".agent/agents/leaky.md resolves to"},
		{[]string{"dispatch", "b2", "--dry-run"}, ".agent/agents/leaky.md resolves to"},
		{[]string{"prompt", "c3"}, ".agent/skills/notes/SKILL.md resolves to"},
		{[]string{"skill", "load", "notes"}, ".agent/skills/notes/SKILL.md resolves to"},
	} {
		code, out, errOut := runCLI(t, root, cliOpts{Env: map[string]string{"PATH": ""}}, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "outside the workspace") { // invalid
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
		if strings.Contains(out+errOut, "TOP-SECRET") {
			t.Errorf("%v printed the secret:\n%s%s", c.args, out, errOut)
		}
	}
	// Listing names the broken mode and skill, and shows none of them.
	for _, args := range [][]string{{"mode", "list"}, {"skill", "list"}} {
		_, out, errOut := runCLI(t, root, cliOpts{}, args...)
		if strings.Contains(out+errOut, "TOP-SECRET") || !strings.Contains(errOut, "outside the workspace") {
			t.Errorf("%v: %s %s", args, out, errOut)
		}
	}
	// Links that stay inside: read as before.
	code, out, errOut := runCLI(t, root, cliOpts{}, "prompt", "d4")
	if code != 0 || !strings.Contains(out, "You code, from docs/.") {
		t.Errorf("prompt d4: %d %s %s", code, out, errOut)
	}
}

// A skill of the configured global skills folder may be a symlink into it
// (people keep skills in one folder and link them); it is read.
func TestGlobalSkillSymlinkInsideItIsRead(t *testing.T) {
	root, _ := symlinkWorkspace(t)
	global := filepath.Join(root, "..", "global")
	if err := os.MkdirAll(filepath.Join(global, "store", "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(global, "store", "shared", "SKILL.md"), []byte("---\nname: shared\ndescription: from the global folder\n---\nShared body\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(global, "store", "shared"), filepath.Join(global, "shared")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, root, cliOpts{Env: map[string]string{"AGENTINFRA_GLOBAL_SKILLS": global}}, "skill", "load", "shared", "--format", "full")
	if code != 0 || !strings.Contains(out, "Shared body") {
		t.Errorf("skill load shared: %d %s %s", code, out, errOut)
	}
}
