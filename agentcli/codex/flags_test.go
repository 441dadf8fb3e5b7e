package codex

import (
	"strings"
	"testing"
)

// The trust hash agentinfra gives its hook is the one codex computes: the
// value codex 0.169.0's hooks/list reported for a hook `x` with matcher *
// and a timeout of 1 s (a change of codex's scheme shows at start too: the
// bridge refuses to run when hooks/list does not say trusted).
func TestHookHashIsCodexs(t *testing.T) {
	if got, want := hookHash("x", 1), "sha256:cd812b93524728e3ea9d91aac69cfc609734012cc880872ba321c27a204178aa"; got != want {
		t.Errorf("hookHash = %s, want codex's %s", got, want)
	}
}

// The command line never trusts the worktree (the inline-table form, the
// one that works), and installs the hook, quoted for sh, with its trust.
func TestCommandLine(t *testing.T) {
	argv := strings.Join(commandLine("codex", "/opt/agent infra/bin/agentinfra", `/w/it's "here"`, "gpt-5.5", "", []string{"-c", "x=1"}), "\n")
	for _, want := range []string{
		"app-server\n-c\nmodel=\"gpt-5.5\"",
		`projects={"/w/it's \"here\""={trust_level="untrusted"}}`,
		`command="'/opt/agent infra/bin/agentinfra' ` + HookArg + `",timeout=31536000`,
		`hooks.state={"/<session-flags>/config.toml:pre_tool_use:0:0"={trusted_hash="sha256:`,
	} {
		if !strings.Contains(argv, want) {
			t.Errorf("the command line lacks %q:\n%s", want, argv)
		}
	}
	if !strings.HasSuffix(argv, "-c\nx=1") {
		t.Errorf("the extra arguments are not last:\n%s", argv)
	}
}
