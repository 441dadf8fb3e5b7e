package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// editLikeAnEditor replaces a file the way most editors save: a new file
// beside it, renamed over it.
func editLikeAnEditor(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	old := readFile(t, path)
	next := edit(old)
	if next == old {
		t.Fatal("the edit changes nothing")
	}
	tmp := filepath.Join(filepath.Dir(path), ".DEVELOPMENT_MATRIX.md.swp~")
	if err := os.WriteFile(tmp, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestBrowserBoardShowsAHandEditOfTheMatrix(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	w.open(t, ctx, "/board")
	run(t, ctx, "the board shows the matrix's columns and cards",
		visible(`.col[data-status="TODO"] #task-a1b2c3`),
		visible(`.col[data-status="IN_PROGRESS"] #task-d4e5f6`))
	if got := textOf(t, ctx, `#task-d4e5f6`); !strings.Contains(got, "P1") || !strings.Contains(got, "coder") || !strings.Contains(got, "@papi") {
		t.Fatalf("card d4e5f6 lacks its priority, mode or agent: %q", got)
	}
	editLikeAnEditor(t, w.matrixPath(), func(s string) string {
		s = strings.Replace(s, "| a1b2c3 | TODO | P2 |", "| a1b2c3 | BLOCKED | P2 |", 1)
		return strings.Replace(s, "Add retry to the fetcher", "Add retry with backoff to the fetcher", 1)
	})
	run(t, ctx, "the hand edit appears on the open board", visible(`.col[data-status="BLOCKED"] #task-a1b2c3`))
	if got := textOf(t, ctx, `#task-a1b2c3`); !strings.Contains(got, "retry with backoff") {
		t.Fatalf("the card shows %q", got)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('.col[data-status="TODO"] #task-a1b2c3').length`); n != 0 {
		t.Fatal("the card is still in TODO")
	}
}

func TestBrowserMovingACardChangesOneLineOfTheMatrix(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	w.open(t, ctx, "/board")
	before := readFile(t, w.matrixPath())
	run(t, ctx, "move a card with its Move to form (the keyboard's way)",
		visible(`#task-0a0b0c`),
		chromedp.SetValue(chromedp.CSS(`#mv-0a0b0c`), "DONE"),
		click(`#task-0a0b0c form.move button`),
		visible(`.col[data-status="DONE"] #task-0a0b0c`))
	after := readFile(t, w.matrixPath())
	oneLineChanged(t, before, after, "| 0a0b0c | DONE | P3 | easy | reviewer |")
	// The move went through the task service, with the CLI's checks: a
	// status the workspace does not know is refused, the file untouched.
	evalJS[bool](t, ctx, `(function(){var s=document.querySelector('#mv-a1b2c3'); var o=document.createElement('option'); o.text='SHIPPED'; s.add(o); s.value='SHIPPED'; return true})()`)
	run(t, ctx, "try an unknown status", click(`#task-a1b2c3 form.move button`), visible(`#flash.error`))
	if msg := textOf(t, ctx, `#flash`); !strings.Contains(msg, "SHIPPED") {
		t.Fatalf("the refusal says %q", msg)
	}
	if readFile(t, w.matrixPath()) != after {
		t.Fatal("a refused move changed the matrix")
	}
}

// oneLineChanged fails unless after is before with exactly one line
// changed, and that line starts with want.
func oneLineChanged(t *testing.T, before, after, want string) {
	t.Helper()
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		t.Fatalf("the matrix went from %d to %d lines", len(a), len(b))
	}
	var changed []string
	for i := range a {
		if a[i] != b[i] {
			changed = append(changed, b[i])
		}
	}
	if len(changed) != 1 || !strings.HasPrefix(changed[0], want) {
		t.Fatalf("changed lines: %q, want one starting %q", changed, want)
	}
}

// TestBrowserDraggingACardChangesOneLineOfTheMatrix drags a card onto
// another column with the mouse, as a person does (a native HTML drag in
// the real browser: press, move, release), and the matrix file changes in
// that row's status only.
func TestBrowserDraggingACardChangesOneLineOfTheMatrix(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	w.open(t, ctx, "/board")
	before := readFile(t, w.matrixPath())
	run(t, ctx, "drag card a1b2c3 from TODO onto the BLOCKED column",
		visible(`.col[data-status="TODO"] #task-a1b2c3`),
		chromedp.DragAndDrop(chromedp.CSS(`#task-a1b2c3 .tags`), chromedp.CSS(`.col[data-status="BLOCKED"] h2`)),
		visible(`.col[data-status="BLOCKED"] #task-a1b2c3`))
	var after string
	poll.Eventually(t, func() bool { after = readFile(t, w.matrixPath()); return after != before }, "the drop never changed the matrix")
	oneLineChanged(t, before, after, "| a1b2c3 | BLOCKED | P2 | med | coder |")
	if n := evalJS[int](t, ctx, `document.querySelectorAll('.col[data-status="TODO"] #task-a1b2c3').length`); n != 0 {
		t.Fatal("the card is still in TODO")
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('.col.drop-target').length`); n != 0 {
		t.Fatalf("%d columns still outlined as the drop target after the drop", n)
	}
}
