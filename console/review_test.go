package console_test

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/task"
)

// The Review page's handlers over real HTTP: the list and a change's page
// show the change (its file and numbered lines); Request changes with a
// comment on a line and one on the whole change sends it back (README,
// IN_PROGRESS); a bad line, no comment, or a post from another origin is
// refused and changes nothing; Approve & land on a change whose next round
// is not recorded is refused (409), then lands it (DONE, on main).
func TestConsoleReviewHandlers(t *testing.T) {
	w, id, round := reviewWorld(t)
	ck := w.login(t)
	origin := w.base
	_, page := get(t, noRedirect(), w.base+"/review", ck, nil)
	if !strings.Contains(page, `href="/review/`+id+`"`) || !strings.Contains(page, "@papi") || !strings.Contains(page, "+6") {
		t.Fatalf("the review list:\n%s", page)
	}
	_, page = get(t, noRedirect(), w.base+"/review/"+id, ck, nil)
	if !strings.Contains(page, `data-file="a.go" data-line="5"`) || !strings.Contains(page, "return 1") {
		t.Fatalf("the change's page:\n%s", page)
	}
	_, board := get(t, noRedirect(), w.base+"/board", ck, nil)
	if !strings.Contains(board, `href="/review/`+id+`" class="rlink"`) {
		t.Errorf("the board's REVIEW card does not link to the review page")
	}
	readme := func() string {
		dir, _ := task.Folder(w.ws, nil, id)
		b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
		return string(b)
	}
	before := readme()
	for _, c := range []struct {
		origin string
		form   url.Values
		code   int
	}{
		{origin, url.Values{"text": {"x"}, "file": {"a.go"}, "line": {"three"}}, http.StatusBadRequest},
		{origin, url.Values{"text": {" "}, "file": {""}, "line": {""}}, http.StatusBadRequest},
		{"http://evil.example", url.Values{"text": {"x"}, "file": {""}, "line": {""}}, http.StatusForbidden},
	} {
		if resp, body := post(t, w.base+"/review/"+id+"/changes", ck, c.origin, c.form); resp.StatusCode != c.code {
			t.Errorf("changes %v from %s: %d %s; want %d", c.form, c.origin, resp.StatusCode, body, c.code)
		}
	}
	if readme() != before {
		t.Fatal("a refused request for changes wrote the README")
	}
	resp, body := post(t, w.base+"/review/"+id+"/changes", ck, origin, url.Values{
		"text": {"say what A returns", "add a test"}, "file": {"a.go", ""}, "line": {"3", ""}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "sent back to @papi with 2 comment(s)") {
		t.Fatalf("request changes: %d %s", resp.StatusCode, body)
	}
	if r := readme(); !strings.Contains(r, "`a.go:3`: say what A returns") || !strings.Contains(r, "add a test") {
		t.Errorf("the README after request changes:\n%s", r)
	}
	if resp, body := post(t, w.base+"/review/"+id+"/approve", ck, origin, url.Values{}); resp.StatusCode != http.StatusConflict {
		t.Errorf("approve of a task sent back: %d %s; want 409", resp.StatusCode, body)
	}
	round("package a\n\n// A returns 1.\nfunc A() int {\n\treturn 1\n}\n")
	resp, body = post(t, w.base+"/review/"+id+"/approve", ck, origin, url.Values{"strategy": {"merge"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "landed on main (merge)") {
		t.Fatalf("approve & land: %d %s", resp.StatusCode, body)
	}
	info, err := task.ShowTask(t.Context(), w.ws, id)
	if err != nil || info.Task.Status != "DONE" {
		t.Fatalf("after approve the task is %+v, %v", info.Task.Status, err)
	}
	if out, err := exec.Command("git", "-C", w.ws.Root, "show", "main:a.go").Output(); err != nil || !strings.Contains(string(out), "A returns 1.") {
		t.Errorf("main's a.go: %v %s", err, out)
	}
}
