package cli

import (
	"strings"
	"testing"
)

// A task with no priority sorts last, in every direction (issue 19, item 8):
// task list --sort priority, --ready --sort priority and the handoff's next
// up; `--set Pri=` clears a priority.
func TestNoPrioritySortsLast(t *testing.T) {
	root := newValidateWorkspace(t, "# M\n\n| ID | Status | Pri | Diff | Mode | Description | Created | Updated |\n|---|---|---|---|---|---|---|---|\n"+
		"| a1 | TODO |  | easy | coder | none yet | 2026-01-01 | 2026-01-01 |\n"+
		"| b2 | TODO | P3 | easy | coder | low | 2026-01-02 | 2026-01-02 |\n"+
		"| c3 | TODO | - | easy | coder | a dash | 2026-01-03 | 2026-01-03 |\n"+
		"| d4 | TODO | P1 | easy | coder | urgent | 2026-01-04 | 2026-01-04 |\n"+
		"| e5 | TODO | P2 | easy | coder | normal |  | 2026-01-05 |\n")
	ids := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, root, cliOpts{}, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		return strings.Join(got, ",")
	}
	for args, want := range map[string]string{
		"task list --sort priority":           "d4,e5,b2,a1,c3",
		"task list --sort -priority":          "b2,e5,d4,a1,c3",
		"task list --ready --sort priority":   "d4,e5,b2,a1,c3",
		"task list --sort created":            "a1,b2,c3,d4,e5",
		"task list --sort -created":           "d4,c3,b2,a1,e5",
		"task list --sort priority --limit 2": "d4,e5",
	} {
		if got := ids(strings.Fields(args)...); got != want {
			t.Errorf("%s: %s, want %s", args, got, want)
		}
	}
	code, out, _ := runCLI(t, root, cliOpts{}, "handoff", "--out", "h.md")
	if code != 0 {
		t.Fatalf("handoff: %d %s", code, out)
	}
	h := readText(t, root+"/h.md")
	next := h[strings.Index(h, "## Next up"):]
	if strings.Index(next, "d4 P1") > strings.Index(next, "a1 ") || strings.Index(next, "b2 P3") > strings.Index(next, "a1 ") {
		t.Errorf("handoff next up does not put the task with no priority last:\n%s", next)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "update", "d4", "--set", "Pri="); code != 0 {
		t.Fatalf("--set Pri=: %d %s", code, errOut)
	}
	if got := ids("task", "list", "--sort", "priority"); got != "e5,b2,a1,c3,d4" {
		t.Errorf("after clearing d4's priority: %s", got)
	}
	if !strings.Contains(matrixOf(t, root), "| d4 | TODO |  | easy |") {
		t.Errorf("the cleared cell:\n%s", matrixOf(t, root))
	}
}
