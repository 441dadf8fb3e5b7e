package task

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

// A workspace with its own words for the workflow's statuses (Open,
// Doing, Review, Closed, Blocked), each named by an alias, is moved through
// the workflow in its own words: claim writes Doing, a second agent is
// refused as the holder says, the end of a run moves Doing to Review, the
// ready queue and archive read Open and Closed.
func TestWorkflowInTheWorkspacesOwnWords(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	writeFile(t, filepath.Join(ws.AgentDir(), "config.yaml"), `matrix:
  statuses: [Open, Doing, Review, Closed, Blocked]
  aliases:
    status: { TODO: Open, IN_PROGRESS: Doing, REVIEW: Review, DONE: Closed, BLOCKED: Blocked }
`)
	writeFile(t, ws.MatrixPath(), `# Tasks

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Deps | Created | Updated |
|---|---|---|---|---|---|---|---|---|---|---|
| T-1 | Open | P2 | med | coder | - | - | Log in with email | - | 2026-11-01 | 2026-11-01 |
| T-2 | Open | P2 | med | coder | - | - | Log in with passkeys | T-1 | 2026-11-02 | 2026-11-02 |
`)
	a := matrix.Task{ID: "T-1"}
	b := matrix.Task{ID: "T-2"}
	r, err := Claim(ctx, ws, a.ID, "papi", now)
	if err != nil || r.After.Status != "Doing" {
		t.Fatalf("claim: %+v, %v", r.After, err)
	}
	if _, err := Claim(ctx, ws, a.ID, "papi", now); err != nil {
		t.Fatalf("the holder claiming again: %v", err)
	}
	_, err = Claim(ctx, ws, a.ID, "sony", now)
	var re *agenterr.Error
	if !errors.As(err, &re) || re.Holder != "@papi" || !strings.Contains(err.Error(), "Doing, held by @papi") {
		t.Fatalf("a second agent's claim: %v", err)
	}
	res, err := Finish(ctx, ws, a.ID, FinishOptions{OK: true, Holder: "@papi"}, "@papi", now)
	if err != nil || res.After.Status != "Review" {
		t.Fatalf("finish Doing → Review: %+v, %v", res.After, err)
	}

	// T-2 depends on T-1: ready once T-1 is Closed; a Closed task is archived.
	ready := func() []string {
		st, err := OpenStore(ws)
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, t := range matrix.ReadyTasks(d.Tasks(), d.Vocabulary()) {
			ids = append(ids, t.ID)
		}
		return ids
	}
	if got := ready(); len(got) != 0 {
		t.Fatalf("ready while a is Review: %v", got)
	}
	if _, err := UpdateTask(ctx, ws, a.ID, matrix.Update{Status: matrix.Str("Closed")}, now, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ready(); len(got) != 1 || got[0] != b.ID {
		t.Fatalf("ready once a is Closed: %v, want [%s]", got, b.ID)
	}
	if _, _, err := ScaffoldTask(ctx, ws, a.ID, ScaffoldOptions{}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := Archive(ctx, ws, a.ID); err != nil {
		t.Fatalf("archive of a Closed task: %v", err)
	}
}

// A vocabulary with no word for IN_PROGRESS cannot be claimed in: the
// error says which alias to add, and nothing is written.
func TestClaimWithoutAWordForInProgress(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	writeFile(t, filepath.Join(ws.AgentDir(), "config.yaml"), "matrix:\n  statuses: [TODO, DOING, REVIEW, DONE, BLOCKED]\n")
	a, _, err := createTask(ctx, ws, CreateOptions{Description: "x", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	treehash.Guard(t, ws.Root)
	_, err = Claim(ctx, ws, a.ID, "papi", now)
	if !errors.Is(err, ErrWorkflowStatus) || !strings.Contains(err.Error(), "matrix.aliases.status: {IN_PROGRESS: DOING}") {
		t.Fatalf("claim without a word for IN_PROGRESS: %v", err)
	}
}
