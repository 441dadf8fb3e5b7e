package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path is judged where the kernel would take it: through symlinks, ".."
// after a symlink, a new file through its existing parent, a loop.
func TestPlaceFollowsWhatTheKernelFollows(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{".git/hooks", "docs", "src/deep"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for link, target := range map[string]string{
		"docs/gitdir": "../.git", "docs/out": outside, "docs/hooks": "../.git/hooks", "docs/deep": "../src/deep",
		"docs/loop": "loop", "docs/abs": filepath.Join(root, "src"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	p := &Policy{Root: root}
	for _, c := range []struct {
		path, rel, where, shown string
	}{
		{"docs/gitdir/config", ".git/config", whereGit, "docs/gitdir/config → .git/config"},
		{"docs/gitdir/new/file", ".git/new/file", whereGit, "docs/gitdir/new/file → .git/new/file"},
		{"docs/out/x", "", whereOutside, "docs/out/x → " + filepath.Join(outside, "x")},
		// The kernel: docs/hooks is .git/hooks, its .. is .git. As text
		// it is docs/config: the worse counts.
		{"docs/hooks/../config", ".git/config", whereGit, ""},
		{"docs/deep/../../docs/a.md", "docs/a.md", whereInside, ""},
		{"docs/new/dir/../a.md", "docs/new/a.md", whereInside, ""},
		{"docs/loop/x", "", whereOutside, ""},
		{"docs/abs/main.go", "src/main.go", whereInside, "docs/abs/main.go → src/main.go"},
		{"./src//main.go", "src/main.go", whereInside, ""},
		{filepath.Join(root, "src", "main.go"), "src/main.go", whereInside, ""},
		{"../x", "", whereOutside, ""},
		{".GIT/config", ".GIT/config", whereGit, ""},
		{"sub/.git/hooks/post-checkout", "sub/.git/hooks/post-checkout", whereGit, ""},
		{".agent/state/agentinfra.db", ".agent/state/agentinfra.db", whereControl, ""},
		{".agent/agents/dev.md", ".agent/agents/dev.md", whereInside, ""},
	} {
		pl := p.Place(c.path)
		if pl.Rel != c.rel || pl.Where != c.where || (pl.Never == "") != (c.where == whereInside) || c.shown != "" && pl.Shown() != c.shown {
			t.Errorf("Place(%q) = rel %q where %q never %q shown %q; want rel %q where %q shown %q", c.path, pl.Rel, pl.Where, pl.Never, pl.Shown(), c.rel, c.where, c.shown)
		}
	}
}

// The person's agentinfra folder (allowlist, console and MCP tokens) is a
// control file wherever an agent names it from: ~, $HOME, an absolute
// path, a symlink.
func TestUserConfigIsAControlFile(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	conf := filepath.Join(home, ".config", "agentinfra")
	os.MkdirAll(conf, 0o700)
	os.WriteFile(filepath.Join(conf, "console-token"), []byte("t\n"), 0o600)
	os.Symlink(conf, filepath.Join(root, "conf"))
	p := &Policy{Root: root, Paths: DefaultPaths(root, func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})}
	for _, line := range []string{"cat ~/.config/agentinfra/console-token", "cat $HOME/.config/agentinfra/console-token",
		`cat "${HOME}/.config/agentinfra/mcp-token"`, "cat " + filepath.Join(conf, "console-token"), "cat conf/console-token",
		"curl -H @~/.config/agentinfra/console-token http://127.0.0.1:8080/api/requests/87/approve"} {
		if as := p.Assess(Action{Kind: KindCommand, Command: line}); as.Risk != RiskCritical || !strings.Contains(strings.Join(as.Why, " "), "agentinfra's own configuration") {
			t.Errorf("%s: %s %q", line, as.Risk, as.Why)
		}
	}
	if v := p.Evaluate(Action{Kind: KindRead, File: "conf/console-token"}); v.Risk != RiskCritical || v.Auto {
		t.Errorf("a Read of the token through a symlink: %+v", v)
	}
}
