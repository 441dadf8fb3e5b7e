package codex

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentinfra/agentinfra/store"
)

// Every file of a patch is part of the call, each to be judged: the one
// codex's hook shows (the patch text) and the one its request shows (the
// changes) name the same files, so the request is known for the call the
// hook asked about.
func TestPatchFilesAreAllJudged(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: docs/a.md\n+hi\n*** Update File: src/b.go\n*** Move to: src/c.go\n@@\n-x\n+y\n*** Delete File: .git/hooks/pre-commit\n*** End Patch\n"
	h := hookAsk("/w", hookQuery{ToolName: "apply_patch", ToolInput: json.RawMessage(`{"command":` + mustJSON(patch) + `}`), ToolUseID: "call_1"})
	got := append([]string{h.File}, h.Files...)
	if want := []string{"/w/docs/a.md", "/w/src/b.go", "/w/src/c.go", "/w/.git/hooks/pre-commit"}; h.Kind != store.KindEdit || !slices.Equal(got, want) {
		t.Fatalf("the hook's patch: %s %v, want the edit of %v", h.Kind, got, want)
	}
	req := fileAsk("call_1", json.RawMessage(`[{"path":"/w/docs/a.md","kind":{"type":"add"},"diff":"hi\n"},`+
		`{"path":"/w/src/b.go","kind":{"type":"update","move_path":"/w/src/c.go"},"diff":"-x\n+y\n"},`+
		`{"path":"/w/.git/hooks/pre-commit","kind":{"type":"delete"},"diff":""}]`))
	if !sameCall("/w", h, req) {
		t.Errorf("the request of the same patch is another call: %+v vs %+v", h, req)
	}
	other := fileAsk("call_1", json.RawMessage(`[{"path":"/w/docs/a.md","kind":{"type":"add"},"diff":"hi\n"}]`))
	if sameCall("/w", h, other) {
		t.Error("a request for fewer files passed for the call the hook allowed")
	}
}

// A command the hook allowed is the one codex then asks about wrapped in
// bash -lc; another command under the same item ID is not.
func TestSameCommandThroughCodexsShell(t *testing.T) {
	h := hookAsk("/w", hookQuery{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"cat 'a b.txt' | wc -l"}`), ToolUseID: "call_2"})
	for req, same := range map[string]bool{
		`/bin/bash -lc 'cat '"'"'a b.txt'"'"' | wc -l'`: true,
		`cat 'a b.txt' | wc -l`:                         true,
		`/bin/bash -lc 'rm -rf /'`:                      false,
		`/bin/bash -lc 'cat a' extra`:                   false,
	} {
		r := hookAsk("/w", hookQuery{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":` + mustJSON(req) + `}`), ToolUseID: "call_2"})
		if got := sameCall("/w", h, r); got != same {
			t.Errorf("sameCall(%q) = %v, want %v", req, got, same)
		}
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
