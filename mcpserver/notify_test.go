package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

type updates chan string

func (u updates) opts() *mcp.ClientOptions {
	return &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		u <- r.Params.URI
	}}
}

// wait returns how long it took to get a notification for uri (a figure
// the test logs: latency is a benchmark's to judge, not a test's).
func (u updates) wait(t *testing.T, uri string, start time.Time) time.Duration {
	t.Helper()
	deadline := time.After(poll.Timeout)
	for {
		select {
		case got := <-u:
			if got == uri {
				return time.Since(start)
			}
		case <-deadline:
			t.Fatalf("no notifications/resources/updated for %s within %v", uri, poll.Timeout)
			return 0
		}
	}
}

// quiet asserts no notification for uri arrives for d.
func (u updates) quiet(t *testing.T, uri string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case got := <-u:
			if got == uri {
				t.Errorf("unexpected notification for %s", uri)
			}
		case <-deadline:
			return
		}
	}
}

// Subscribe, then change the matrix from outside the server exactly as the CLI
// does (matrix.Store: lock, atomic rename) and as an editor does (in-place
// write): each change is notified within 500 ms.
func TestSubscribeExternalEdit(t *testing.T) {
	for _, proto := range []string{legacyProtocol, ""} {
		t.Run("protocol="+protoName(proto), func(t *testing.T) { testSubscribeExternalEdit(t, proto) })
	}
}

func protoName(p string) string {
	if p == "" {
		return "latest"
	}
	return p
}

func testSubscribeExternalEdit(t *testing.T, proto string) {
	ws := newWorkspace(t, 2)
	u := make(updates, 64)
	_, cs := connectProto(t, ws, u.opts(), proto)
	ctx := context.Background()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: MatrixURI}); err != nil {
		t.Fatal(err)
	}
	u.quiet(t, MatrixURI, 150*time.Millisecond)

	id := loadTasks(t, ws)[0].ID
	if _, err := task.UpdateTask(ctx, ws, id, matrix.Update{Status: matrix.Str("REVIEW")}, fixedNow, task.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now() // the change is on disk (renamed into place) from here
	d := u.wait(t, MatrixURI, start)
	t.Logf("store write → notification: %v", d)
	// The client re-reads and sees the change.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: MatrixURI})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Contents[0].Text, "| "+id+" | REVIEW |") {
		t.Errorf("re-read matrix lacks the change")
	}

	// A person's editor writing in place.
	b, _ := os.ReadFile(ws.MatrixPath())
	if err := os.WriteFile(ws.MatrixPath(), append(b, []byte("\nA note.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	t.Logf("editor write notified after %v", u.wait(t, MatrixURI, start))

	// A burst of 10 quick writes (an editor saving repeatedly) is debounced
	// into few notifications, the last one soon after the last write.
	start = time.Now()
	for i := range 10 {
		b = append(b, byte('0'+i), '\n')
		if err := os.WriteFile(ws.MatrixPath(), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	burstEnd := time.Now()
	var n int
	var last time.Time
	timeout := time.After(800 * time.Millisecond)
drain:
	for {
		select {
		case got := <-u:
			if got == MatrixURI {
				n++
				last = time.Now()
			}
		case <-timeout:
			break drain
		}
	}
	t.Logf("10 writes in %v → %d notifications, the last %v after the last write", burstEnd.Sub(start), n, last.Sub(burstEnd))
	if n == 0 || n >= 10 {
		t.Errorf("burst of 10 writes gave %d notifications; want debounced (1..9)", n)
	}

	// Unsubscribed: no more notifications.
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: MatrixURI}); err != nil {
		t.Fatal(err)
	}
	if _, err := task.UpdateTask(ctx, ws, id, matrix.Update{Status: matrix.Str("DONE")}, fixedNow, task.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	u.quiet(t, MatrixURI, 300*time.Millisecond)
}

// A task subscription fires on a change to its row and to its README, not on
// other rows.
func TestSubscribeTask(t *testing.T) {
	for _, proto := range []string{legacyProtocol, ""} {
		t.Run("protocol="+protoName(proto), func(t *testing.T) { testSubscribeTask(t, proto) })
	}
}

func testSubscribeTask(t *testing.T, proto string) {
	ws := newWorkspace(t, 2)
	u := make(updates, 64)
	_, cs := connectProto(t, ws, u.opts(), proto)
	ctx := context.Background()
	rows := loadTasks(t, ws)
	uri := TaskURIPrefix + rows[0].ID
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}

	// Another row changes: no notification for this task.
	if _, err := task.UpdateTask(ctx, ws, rows[1].ID, matrix.Update{Status: matrix.Str("BLOCKED")}, fixedNow, task.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	u.quiet(t, uri, 300*time.Millisecond)

	if _, err := task.UpdateTask(ctx, ws, rows[0].ID, matrix.Update{Priority: matrix.Str("P1")}, fixedNow, task.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	t.Logf("row change notified after %v", u.wait(t, uri, start))

	dir, _ := ws.FindTaskDir(rows[0].ID)
	f, err := os.OpenFile(filepath.Join(dir, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nProgress: halfway.\n")
	f.Close()
	start = time.Now()
	t.Logf("README change notified after %v", u.wait(t, uri, start))

	// The server's own writes notify too.
	callOK(t, cs, "task", map[string]any{"action": "update", "id": rows[0].ID, "status": "IN_PROGRESS"}, nil)
	start = time.Now()
	t.Logf("tool write notified after %v", u.wait(t, uri, start))
}

func TestSubscribeRefusesUnknownURI(t *testing.T) {
	ws := newWorkspace(t, 0)
	_, cs := connectProto(t, ws, nil, legacyProtocol)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "file:///etc/passwd"}); err == nil {
		t.Errorf("subscribe to a foreign URI: no error")
	}
}

// The CLI, as a separate process, changes a task: subscribers of the matrix
// and of the task hear about it (the test logs how soon after the command's
// exit).
func TestSubscribeCLIProcessEdit(t *testing.T) {
	bin := agentinfraBin(t)
	ws := newWorkspace(t, 2)
	u := make(updates, 64)
	_, cs := connectProto(t, ws, u.opts(), legacyProtocol)
	ctx := context.Background()
	id := loadTasks(t, ws)[1].ID
	for _, uri := range []string{MatrixURI, TaskURIPrefix + id} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "--root", ws.Root, "task", "update", id, "--status", "BLOCKED")
	cmd.Env = serveEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agentinfra task update: %v\n%s", err, out)
	}
	exited := time.Now()
	got := map[string]time.Duration{}
	deadline := time.After(poll.Timeout)
	for len(got) < 2 {
		select {
		case uri := <-u:
			if _, ok := got[uri]; !ok {
				got[uri] = time.Since(exited)
			}
		case <-deadline:
			t.Fatalf("notifications after the CLI edit: %v; want %s and %s", got, MatrixURI, TaskURIPrefix+id)
		}
	}
	t.Logf("CLI process edit → notifications: %v", got)
}
