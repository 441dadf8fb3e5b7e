package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
)

func TestConsoleSteersASession(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	ses := w.activeSession(t, "claude", "", "")
	page := fmt.Sprintf("%s/sessions/%d", w.base, ses.ID)
	if _, body := get(t, noRedirect(), page, ck, nil); !strings.Contains(body, `action="/sessions/`+fmt.Sprint(ses.ID)+`/steer"`) {
		t.Fatal("a live session's page has no steering box")
	}
	resp, body := post(t, page+"/steer", ck, w.base, url.Values{"text": {"use the fixtures in testdata/"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("steer: %s %s", resp.Status, body)
	}
	msgs, err := w.st.SteeringOf(context.Background(), ses.ID)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "use the fixtures in testdata/" {
		t.Fatalf("steering in the store: %+v %v", msgs, err)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestConsoleRestoresACheckpointShowingTheDivergedFilesFirst(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newWorld(t)
	ck := w.login(t)
	root := w.ws.Root
	git(t, root, "init", "-q")
	src := filepath.Join(root, "main.go")
	os.WriteFile(src, []byte("package main\n"), 0o644)
	git(t, root, "add", "-A")
	git(t, root, "commit", "-qm", "init")
	ses := w.activeSession(t, "claude", "", "")
	cp, err := checkpoint.Create(context.Background(), w.st, ses.ID, root, "before the refactor", "ana")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(src, []byte("package main\n\nfunc broken() {\n"), 0o644)
	page := fmt.Sprintf("%s/sessions/%d", w.base, ses.ID)
	if _, body := get(t, noRedirect(), page, ck, nil); !strings.Contains(body, "before the refactor") {
		t.Fatal("the session's page does not list the checkpoint")
	}
	form := url.Values{"checkpoint": {fmt.Sprint(cp.ID)}}
	resp, body := post(t, page+"/restore", ck, w.base, form)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, `"confirm":true`) || !strings.Contains(body, "modified main.go") {
		t.Fatalf("restore without confirmation: %s %s", resp.Status, body)
	}
	form.Set("force", "1")
	if resp, body := post(t, page+"/restore", ck, w.base, form); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "stop it first") {
		t.Fatalf("restore of a live session: %s %s", resp.Status, body)
	}
	if resp, body := post(t, page+"/stop", ck, w.base, url.Values{}); resp.StatusCode != http.StatusOK {
		t.Fatalf("stop: %s %s", resp.Status, body)
	}
	if resp, body := post(t, page+"/restore", ck, w.base, form); resp.StatusCode != http.StatusOK {
		t.Fatalf("confirmed restore: %s %s", resp.Status, body)
	}
	if got := readFile(t, src); got != "package main\n" {
		t.Fatalf("main.go after the restore: %q", got)
	}
	if s, _ := w.st.Session(context.Background(), ses.ID); s.Status != store.SessionTerminated {
		t.Fatalf("session: %s", s.Status)
	}
}
