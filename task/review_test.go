package task

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// A review sends a task in REVIEW back (IN_PROGRESS) or lands it (DONE),
// writing its Review section and status log line together; the section is
// made once, at the README's end, and grows below; a move of a task that
// is not in REVIEW writes nothing.
func TestReviewMovesAndSection(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	tk, dir, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "README.md")
	readme0 := readFile(t, readme)

	// Not in REVIEW: refused, nothing written.
	same := treehash.Guard(t, ws.Root)
	_, err = Review(ctx, ws, tk.ID, ReviewNote{To: StatusDone, Lines: []string{"landed"}}, "alice", now)
	if !errors.Is(err, ErrNotInReview) {
		t.Fatalf("landing a TODO task: %v, want ErrNotInReview", err)
	}
	same()

	if _, err := Claim(ctx, ws, tk.ID, "papi", now); err != nil {
		t.Fatal(err)
	}
	if _, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: true, Holder: "@papi"}, "@papi", now); err != nil {
		t.Fatal(err)
	}
	// A note alone keeps the status and adds no status line.
	r, err := Review(ctx, ws, tk.ID, ReviewNote{Lines: []string{"2026-11-21 14:05: change recorded"}}, "@papi", now)
	if err != nil || r.After.Status != "REVIEW" || len(r.Changed) != 0 {
		t.Fatalf("note: %+v, %v", r, err)
	}
	r, err = Review(ctx, ws, tk.ID, ReviewNote{To: StatusInProgress, Reason: "changes requested",
		Lines: []string{"2026-11-21 14:05: changes requested by @alice:\n- `a.go:3`: use CAS\n- the tests"}}, "alice", now)
	if err != nil || r.After.Status != "IN_PROGRESS" {
		t.Fatalf("send back: %+v, %v", r, err)
	}
	if h := Holder(r.After); h != "@papi" {
		t.Errorf("holder after send back = %q, want @papi (the same agent works on it again)", h)
	}
	if _, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: true, Holder: "@papi"}, "@papi", now); err != nil {
		t.Fatal(err)
	}
	if _, err := Review(ctx, ws, tk.ID, ReviewNote{To: StatusDone, Reason: "landed", Lines: []string{"2026-11-21 14:05: landed"}}, "alice", now); err != nil {
		t.Fatal(err)
	}
	want := readme0 +
		"- 2026-11-21 14:05: status TODO → IN_PROGRESS by @papi\n" +
		"- 2026-11-21 14:05: status IN_PROGRESS → REVIEW by @papi\n" +
		"- 2026-11-21 14:05: status REVIEW → IN_PROGRESS by @alice: changes requested\n" +
		"- 2026-11-21 14:05: status IN_PROGRESS → REVIEW by @papi\n" +
		"- 2026-11-21 14:05: status REVIEW → DONE by @alice: landed\n" +
		"\n## Review\n\n" +
		"- 2026-11-21 14:05: change recorded\n" +
		"- 2026-11-21 14:05: changes requested by @alice:\n  - `a.go:3`: use CAS\n  - the tests\n" +
		"- 2026-11-21 14:05: landed\n"
	got := readFile(t, readme)
	if got != want {
		t.Fatalf("README:\n%s\nwant:\n%s", got, want)
	}
	items := ReviewLines([]byte(got))
	wantItems := []string{"- 2026-11-21 14:05: change recorded",
		"- 2026-11-21 14:05: changes requested by @alice:\n  - `a.go:3`: use CAS\n  - the tests",
		"- 2026-11-21 14:05: landed"}
	if !slices.Equal(items, wantItems) {
		t.Errorf("ReviewLines = %q, want %q", items, wantItems)
	}
}
