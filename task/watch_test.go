package task

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/matrix"
)

// Another process's writes reach the bus: a row changed by the task
// service in a child process, an editor appending to the matrix (prose:
// the file changed, no row did), and a followed task's README.
func TestMatrixWatcherPublishesOtherProcessesChanges(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	a, dirA, err := createTask(ctx, ws, CreateOptions{Description: "first", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := createTask(ctx, ws, CreateOptions{Description: "second", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	bus := events.New()
	sub := bus.Subscribe(events.Filter{Root: ws.Root}, 0)
	defer sub.Close()
	w, err := WatchMatrix(ctx, ws, bus, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Follow(ctx, a.ID)

	next := func(want func(events.Event) bool, what string) events.Event {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		var seen []string
		for {
			e, ok := sub.Next(wctx)
			if !ok {
				t.Fatalf("no event for %s; saw %v", what, seen)
			}
			if want(e) {
				return e
			}
			seen = append(seen, string(e.Kind)+" "+e.TaskID+" "+strings.Join(e.Fields, ","))
		}
	}

	// A row changed by another process (sed, as a script would).
	sed := exec.Command("sed", "-i", "s/| TODO | P2 | med | coder |  |  | second |/| BLOCKED | P2 | med | coder |  |  | second |/", ws.MatrixPath())
	if out, err := sed.CombinedOutput(); err != nil {
		t.Fatalf("sed: %v %s", err, out)
	}
	d := matrix.Parse(mustRead(t, ws.MatrixPath()))
	if tb, _ := d.Task(b.ID); tb.Status != "BLOCKED" {
		t.Fatalf("the fixture's sed did not change the row:\n%s", mustRead(t, ws.MatrixPath()))
	}
	next(func(e events.Event) bool { return e.Kind == events.MatrixChanged && e.Source == "watch" }, "the matrix")
	e := next(func(e events.Event) bool { return e.Kind == events.TaskChanged }, "the row")
	if e.TaskID != b.ID || e.Actor != "" || !slices.Equal(e.Fields, []string{"row"}) {
		t.Errorf("row change event = %+v", e)
	}

	// Prose appended by an editor: the matrix changed, no row did.
	f, _ := os.OpenFile(ws.MatrixPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\nA note.\n")
	f.Close()
	next(func(e events.Event) bool { return e.Kind == events.MatrixChanged }, "the prose edit")

	// The followed task's README.
	f, _ = os.OpenFile(filepath.Join(dirA, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\nProgress: halfway.\n")
	f.Close()
	e = next(func(e events.Event) bool { return e.Kind == events.TaskChanged }, "the README")
	if e.TaskID != a.ID || !slices.Equal(e.Fields, []string{"readme"}) {
		t.Errorf("README change event = %+v", e)
	}
	// Nothing else: the prose edit changed no row. A second prose edit
	// marks the end: every event before its own is checked, without a
	// sleep. (One append can be seen twice — a stat between write(2)'s
	// mtime and size updates — so a second README event of the same task is
	// not a wrong one.)
	f, _ = os.OpenFile(ws.MatrixPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\nAnother note.\n")
	f.Close()
	next(func(e events.Event) bool {
		if e.Kind == events.TaskChanged && !(e.TaskID == a.ID && slices.Equal(e.Fields, []string{"readme"})) {
			t.Errorf("unexpected %+v", e)
		}
		return e.Kind == events.MatrixChanged
	}, "the second prose edit")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
