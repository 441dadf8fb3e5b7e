package host_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	localfleet "github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/fleet/local/localtest"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/supervision/host"
)

// superviseEnv makes the test binary a local fleet run's supervisor, as
// the CLI's hidden `agent run-supervisor` is started ("--root ROOT NAME
// RUN" appended).
const superviseEnv = "HOST_TEST_SUPERVISE"

func TestMain(m *testing.M) {
	if os.Getenv(superviseEnv) == "1" {
		os.Exit(localtest.Supervise(os.Args[1:], localfleet.Options{}))
	}
	os.Exit(m.Run())
}

// A host does not publish its agent's change while the agent's run waits
// for a person: the run is still going and may change the worktree once
// answered. Nothing is committed or pushed; once the run has ended the
// same publish goes.
func TestAHostDoesNotPublishWhileItsAgentWaitsForAPerson(t *testing.T) {
	ctx := context.Background()
	fws := fleettest.NewRepo(t)
	remote := filepath.Join(t.TempDir(), "origin.git")
	git(t, fws.Root, "clone", "-q", "--bare", fws.Root, remote)
	git(t, fws.Root, "remote", "add", "origin", remote)
	f := localfleet.New(fws, localtest.Options(superviseEnv, agentstub.Build(t), "STUB_MODE=hang"))
	fleettest.StopRunsAtCleanup(t, f)
	srv := httptest.NewServer(host.AgentHandler(host.AgentOptions{Fleet: f, Name: "papi"}))
	t.Cleanup(srv.Close)
	hc, err := host.New(host.Options{Name: "papi", URL: srv.URL, Token: hostToken})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the tests green"}); err != nil {
		t.Fatal(err)
	}
	var a fleet.Agent
	eventually(t, "papi's run is going", func() bool {
		a, err = f.Show(ctx, "papi")
		return err == nil && a.Status == fleet.StatusBusy && a.CurrentRun != nil
	})
	// The run's supervisor marks its session waiting for a request.
	if err := waiting.Write(fws.Root, waiting.Mark{Item: waiting.Item{Kind: waiting.KindRequest, ID: 6, Ref: "6", What: "Run go test ./...", Since: time.Now()},
		Session: 1, Agent: "papi", RunID: a.CurrentRun.ID, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if a, err = f.Show(ctx, "papi"); err != nil || a.Status != fleet.StatusWaiting {
		t.Fatalf("papi with its session waiting for a request is %s (%v), want waiting", a.Status, err)
	}
	leftover := filepath.Join(a.Workspace.Path, "three.go")
	if err := os.WriteFile(leftover, []byte("package util\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = hc.PublishChange(ctx, host.ChangePublish{Task: "a1a1a1", Subject: "Implement the retry loop", Run: a.CurrentRun.ID})
	if agenterr.KindOf(err) != agenterr.Conflict || !strings.Contains(err.Error(), "papi is waiting") {
		t.Fatalf("publish while papi waits for a person: %v; want a conflict saying it is waiting", err)
	}
	if out := gitOut(t, remote, "for-each-ref", "refs/heads/"+a.Workspace.Branch); out != "" {
		t.Errorf("the refused publish pushed: %s", out)
	}
	if st := gitOut(t, a.Workspace.Path, "status", "--porcelain"); !strings.Contains(st, "three.go") {
		t.Errorf("the refused publish committed the agent's work in progress: status %q", st)
	}

	if err := waiting.Clear(fws.Root, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stop(ctx, "papi"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "papi's run has ended", func() bool {
		a, err = f.Show(ctx, "papi")
		return err == nil && a.CurrentRun == nil && a.Status == fleet.StatusIdle
	})
	pub, err := hc.PublishChange(ctx, host.ChangePublish{Task: "a1a1a1", Subject: "Implement the retry loop"})
	if err != nil || pub.Committed == "" || gitOut(t, remote, "rev-parse", "refs/heads/"+a.Workspace.Branch) != pub.Head {
		t.Errorf("publish once the run ended: %+v, %v", pub, err)
	}
}

func gitOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}
