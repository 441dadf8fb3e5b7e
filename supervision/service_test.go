package supervision_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// world is a workspace (a git repository) with its store, and a service
// over them whose operator is bo; sessions are ana's.
type world struct {
	ws  *workspace.Workspace
	st  *store.Store
	svc *supervision.Service
	bus *events.Bus
	sub *events.Subscription
}

func newWorld(t *testing.T, o supervision.Options) *world {
	t.Helper()
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Join(root, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "README.md"), []byte("hello\n"), 0o644)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir() // the user's allowlist is the test's own
	ws.Getenv = func(k string) string {
		if k == "AGENTINFRA_CONFIG_DIR" {
			return cfg
		}
		return ""
	}
	st, err := store.OpenWorkspace(t.Context(), ws, store.Options{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := &world{ws: ws, st: st, bus: events.New()}
	w.sub = w.bus.Subscribe(events.Filter{}, 0)
	t.Cleanup(w.sub.Close)
	o.Store, o.Workspace, o.Bus = st, ws, w.bus
	o.Config.Operators = []string{"@bo"}
	if w.svc, err = supervision.New(o); err != nil {
		t.Fatal(err)
	}
	return w
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

// session is a live session of ana's with a pending request, prompt and
// alert.
func (w *world) session(t *testing.T) (store.Session, store.Request, store.Prompt, store.Alert) {
	t.Helper()
	ctx := t.Context()
	ses, err := w.st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: w.ws.Root, CLI: "claude", Mode: store.ModeRemote})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = w.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	r, err := w.st.RaiseRequest(ctx, store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: "go test ./...", Title: "Run go test ./...", Risk: store.RiskHigh})
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.st.RaisePrompt(ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: "Which database?"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.st.RaiseAlert(ctx, ses.ID, "silent for 5m0s")
	if err != nil {
		t.Fatal(err)
	}
	return ses, r, p, a
}

// published is what the bus received so far.
func (w *world) published() []events.Event {
	var out []events.Event
	for {
		e, ok := w.sub.TryNext()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// state is what a refused change must leave as it was.
func (w *world) state(t *testing.T, ses store.Session) string {
	t.Helper()
	ctx := t.Context()
	cur, _ := w.st.Session(ctx, ses.ID)
	reqs, _ := w.st.Requests(ctx, ses.ID)
	prompts, _ := w.st.Prompts(ctx, ses.ID)
	alerts, _ := w.st.Alerts(ctx, ses.ID)
	steer, _ := w.st.SteeringOf(ctx, ses.ID)
	cps, _ := w.st.Checkpoints(ctx, ses.ID)
	audit, _ := w.st.Audit(ctx, 0)
	paused, _ := w.st.WatchdogPaused(ctx, ses.ID)
	pol, _ := os.ReadFile(filepath.Join(w.ws.Root, ".agent", "policy.yaml"))
	return fmt.Sprintf("%+v %+v %+v %+v %+v %+v %d %v %q", cur, reqs, prompts, alerts, steer, cps, len(audit), paused, pol)
}

// change is one changing method of the service, made by a on the
// session's items; event is the kind it publishes.
type change struct {
	name  string
	event events.Kind
	do    func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, r store.Request, p store.Prompt, al store.Alert) error
}

var changes = []change{
	{"approve", events.RequestChanged, func(ctx context.Context, w *world, a supervision.Actor, _ store.Session, r store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.Decide(ctx, a, supervision.Decision{Request: r.ID, Approve: true})
		return err
	}},
	{"approve always", events.RequestChanged, func(ctx context.Context, w *world, a supervision.Actor, _ store.Session, r store.Request, _ store.Prompt, _ store.Alert) error {
		plan, err := w.svc.PlanAlways(ctx, r.ID)
		if err != nil {
			return err
		}
		_, err = w.svc.Decide(ctx, a, supervision.Decision{Request: r.ID, Approve: true, Always: plan})
		return err
	}},
	{"reject", events.RequestChanged, func(ctx context.Context, w *world, a supervision.Actor, _ store.Session, r store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.Decide(ctx, a, supervision.Decision{Request: r.ID, Reason: "not now"})
		return err
	}},
	{"refine a prompt", events.PromptChanged, func(ctx context.Context, w *world, a supervision.Actor, _ store.Session, _ store.Request, p store.Prompt, _ store.Alert) error {
		_, err := w.svc.AnswerPrompt(ctx, a, supervision.PromptAnswer{Prompt: p.ID, Action: supervision.ActionRefine, Instruction: "use SQLite"})
		return err
	}},
	{"nudge an alert", events.AlertChanged, func(ctx context.Context, w *world, a supervision.Actor, _ store.Session, _ store.Request, _ store.Prompt, al store.Alert) error {
		_, err := w.svc.AnswerAlert(ctx, a, supervision.AlertAnswer{Alert: al.ID, Action: supervision.AlertNudge})
		return err
	}},
	{"dismiss an alert", events.AlertChanged, func(ctx context.Context, w *world, a supervision.Actor, _ store.Session, _ store.Request, _ store.Prompt, al store.Alert) error {
		_, err := w.svc.AnswerAlert(ctx, a, supervision.AlertAnswer{Alert: al.ID, Action: supervision.AlertDismiss})
		return err
	}},
	{"pause the watchdog", events.AlertChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		return w.svc.SetWatchdog(ctx, a, ses.ID, true)
	}},
	{"steer", events.SteeringChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.Steer(ctx, a, ses.ID, "also run go vet")
		return err
	}},
	{"pause", events.SessionChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.MoveSession(ctx, a, ses.ID, supervision.SessionPaused, "lunch")
		return err
	}},
	{"stop", events.SessionChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.MoveSession(ctx, a, ses.ID, supervision.SessionTerminated, "wrong task")
		return err
	}},
	{"mode", events.SessionChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.SetMode(ctx, a, ses.ID, supervision.ModeLocal)
		return err
	}},
	{"channel", events.SessionChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		return w.svc.SetChannel(ctx, a, ses.ID, "C0OTHER")
	}},
	{"checkpoint", events.CheckpointChanged, func(ctx context.Context, w *world, a supervision.Actor, ses store.Session, _ store.Request, _ store.Prompt, _ store.Alert) error {
		_, err := w.svc.CreateCheckpoint(ctx, a, ses.ID, "before")
		return err
	}},
}

// The owner and an operator may make every change, and each change
// publishes its event naming who made it; anyone else gets the one
// refusal (agenterr forbidden, ErrNotAllowed, saying who may) and nothing
// changes, nothing is published.
func TestEveryChangeIsAuthorisedOnceAndPublished(t *testing.T) {
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, who := range []string{"ana", "@bo", "mallory"} {
				w := newWorld(t, supervision.Options{})
				ses, r, p, al := w.session(t)
				a := supervision.Person(who, supervision.SurfaceWeb)
				before := w.state(t, ses)
				w.published()
				err := c.do(t.Context(), w, a, ses, r, p, al)
				evs := w.published()
				if who == "mallory" {
					if !errors.Is(err, supervision.ErrNotAllowed) || agenterr.KindOf(err) != agenterr.Forbidden ||
						!strings.Contains(err.Error(), "@mallory may not ") || !strings.Contains(err.Error(), "only the session's owner @ana or an operator") {
						t.Fatalf("a stranger: %v (kind %s)", err, agenterr.KindOf(err))
					}
					if after := w.state(t, ses); after != before {
						t.Fatalf("a refused change changed the state:\nbefore %s\nafter  %s", before, after)
					}
					if len(evs) != 0 {
						t.Fatalf("a refused change published %+v", evs)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", who, err)
				}
				if len(evs) == 0 || evs[len(evs)-1].Kind != c.event || evs[len(evs)-1].Actor != a.Name || evs[len(evs)-1].Root != w.ws.Root {
					t.Fatalf("%s: published %+v, want a %s by %s", who, evs, c.event, a.Name)
				}
				if w.state(t, ses) == before {
					t.Fatalf("%s: nothing changed", who)
				}
			}
		})
	}
}

// Issue 27's hook: a caller check that refuses refuses every change,
// whoever the actor, before anything changes.
func TestTheCallerCheckComesFirst(t *testing.T) {
	errAgent := agenterr.New(agenterr.Refused, "a supervised run's process may not decide")
	w := newWorld(t, supervision.Options{Caller: func(context.Context, supervision.Actor) error { return errAgent }})
	ses, r, p, al := w.session(t)
	before := w.state(t, ses)
	for _, c := range changes {
		if err := c.do(t.Context(), w, supervision.Person("ana", supervision.SurfaceTerminal), ses, r, p, al); !errors.Is(err, errAgent) {
			t.Errorf("%s: %v, want the caller check's refusal", c.name, err)
		}
	}
	if after := w.state(t, ses); after != before {
		t.Fatalf("a refused change changed the state:\nbefore %s\nafter  %s", before, after)
	}
}

// Two deciders on two connections (as two processes have) answer one
// request at once, many times: one wins each time, the other gets the one
// decided error naming the winner's surface and person; the request keeps
// the winner's decision.
func TestTwoDecidersOneWinner(t *testing.T) {
	w := newWorld(t, supervision.Options{})
	other, err := store.OpenWorkspace(t.Context(), w.ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	svc2, err := supervision.New(supervision.Options{Store: other, Workspace: w.ws, Config: supervision.Config{Operators: []string{"bo"}}, Bus: w.bus})
	if err != nil {
		t.Fatal(err)
	}
	ana, bo := supervision.Person("ana", supervision.SurfaceTerminal), supervision.Person("bo", supervision.SurfaceSlack)
	for round := range 20 {
		ses, r, _, _ := w.session(t)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, d := range []struct {
			svc *supervision.Service
			a   supervision.Actor
		}{{w.svc, ana}, {svc2, bo}} {
			wg.Go(func() {
				_, errs[i] = d.svc.Decide(t.Context(), d.a, supervision.Decision{Request: r.ID, Approve: i == 0, Reason: d.a.Name})
			})
		}
		wg.Wait()
		won := 0
		var lost *supervision.DecidedError
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.As(err, &lost):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		got, _ := w.st.Request(t.Context(), r.ID)
		winner := map[string]string{"ana": "terminal", "bo": "slack"}[got.DecidedBy]
		if won != 1 || lost == nil || winner == "" || got.Reason != got.DecidedBy ||
			!strings.Contains(lost.Error(), fmt.Sprintf("already %s via %s by @%s", got.Status, winner, got.DecidedBy)) || agenterr.KindOf(lost) != agenterr.Conflict {
			t.Fatalf("round %d: %d winners, lost %v, request %+v", round, won, lost, got)
		}
		w.st.SetSessionStatus(t.Context(), ses.ID, store.Transition{To: store.SessionTerminated, By: "ana"})
	}
}

// "Approve always" writes the rule it planned, and only with the approval.
func TestApproveAlwaysWritesThePlannedRule(t *testing.T) {
	w := newWorld(t, supervision.Options{})
	_, r, _, _ := w.session(t)
	ctx := t.Context()
	plan, err := w.svc.PlanAlways(ctx, r.ID)
	if err != nil || plan.RuleText() != "commands: go test ./..." || !plan.Changes() {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	ana := supervision.Person("ana", supervision.SurfaceTerminal)
	if _, err := w.svc.Decide(ctx, ana, supervision.Decision{Request: r.ID, Always: plan, Reason: "no"}); agenterr.KindOf(err) != agenterr.Invalid {
		t.Fatalf("a rule with a rejection: %v", err)
	}
	got, err := w.svc.Decide(ctx, ana, supervision.Decision{Request: r.ID, Approve: true, Always: plan})
	if err != nil || got.Status != supervision.StatusApproved || !got.Always {
		t.Fatalf("approve always: %+v %v", got, err)
	}
	pol, _ := os.ReadFile(filepath.Join(w.ws.Root, ".agent", "policy.yaml"))
	if !strings.Contains(string(pol), "go test ./...") {
		t.Fatalf("the policy file: %s", pol)
	}
	if _, err := w.svc.PlanAlways(ctx, r.ID); !errors.As(err, new(*supervision.DecidedError)) {
		t.Fatalf("a plan for a decided request: %v", err)
	}
}

// A restore over files changed since is refused without force, before the
// live session is touched; with force and StopLive it stops the session and
// puts the tree back.
func TestRestoreCheckpoint(t *testing.T) {
	w := newWorld(t, supervision.Options{})
	ses, _, _, _ := w.session(t)
	ctx := t.Context()
	ana := supervision.Person("ana", supervision.SurfaceWeb)
	cp, err := w.svc.CreateCheckpoint(ctx, ana, ses.ID, "before")
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(w.ws.Root, "README.md")
	os.WriteFile(readme, []byte("changed\n"), 0o644)
	var div *supervision.DivergedError
	if _, _, err := w.svc.RestoreCheckpoint(ctx, ana, supervision.Restore{Checkpoint: cp.ID, StopLive: true}); !errors.As(err, &div) || len(div.Changes) != 1 {
		t.Fatalf("a restore over a changed file: %v", err)
	}
	if cur, _ := w.svc.Session(ctx, ses.ID); !cur.Live() {
		t.Fatal("a refused restore stopped the session")
	}
	if _, _, err := w.svc.RestoreCheckpoint(ctx, ana, supervision.Restore{Checkpoint: cp.ID, Force: true}); !errors.Is(err, supervision.ErrBadTransition) {
		t.Fatalf("a restore of a live session without StopLive: %v", err)
	}
	if _, changed, err := w.svc.RestoreCheckpoint(ctx, ana, supervision.Restore{Checkpoint: cp.ID, Force: true, StopLive: true}); err != nil || len(changed) != 1 {
		t.Fatalf("restore: %+v %v", changed, err)
	}
	if b, _ := os.ReadFile(readme); string(b) != "hello\n" {
		t.Fatalf("README after the restore: %q", b)
	}
	if cur, _ := w.svc.Session(ctx, ses.ID); cur.Status != supervision.SessionTerminated {
		t.Fatalf("the session after the restore: %s", cur.Status)
	}
}

// A purge publishes how many sessions went.
func TestPurgePublishes(t *testing.T) {
	w := newWorld(t, supervision.Options{})
	ses, _, _, _ := w.session(t)
	ctx := t.Context()
	ana := supervision.Person("ana", supervision.SurfaceTerminal)
	if _, err := w.svc.MoveSession(ctx, ana, ses.ID, supervision.SessionTerminated, "done"); err != nil {
		t.Fatal(err)
	}
	w.published()
	rep, err := w.svc.Purge(ctx, ana, time.Now().Add(time.Hour), false)
	if err != nil || rep.Sessions != 1 {
		t.Fatalf("purge: %+v %v", rep, err)
	}
	if evs := w.published(); len(evs) != 1 || evs[0].Kind != events.SessionsPurged || evs[0].Text != "1 sessions" {
		t.Fatalf("published %+v", evs)
	}
}

// "Approve for this session" keeps the approval's scope in the store and
// writes no policy rule; it goes only with an approval, not with always,
// and never for a critical request or one no rule can match (each refusal
// leaves the request pending).
func TestApproveForTheSessionIsKeptInTheStore(t *testing.T) {
	w := newWorld(t, supervision.Options{})
	ses, r, _, _ := w.session(t)
	ctx := t.Context()
	ana := supervision.Person("ana", supervision.SurfaceTerminal)
	plan, err := w.svc.PlanAlways(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []supervision.Decision{
		{Request: r.ID, Session: true, Reason: "no"},
		{Request: r.ID, Approve: true, Session: true, Always: plan},
	} {
		if _, err := w.svc.Decide(ctx, ana, d); agenterr.KindOf(err) != agenterr.Invalid {
			t.Errorf("%+v: %v, want invalid", d, err)
		}
	}
	got, err := w.svc.Decide(ctx, ana, supervision.Decision{Request: r.ID, Approve: true, Session: true})
	if err != nil || got.Status != supervision.StatusApproved || got.Scope != supervision.ScopeSession || got.Always {
		t.Fatalf("approve for the session: %+v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(w.ws.Root, ".agent", "policy.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("approve for the session touched the policy file: %v", err)
	}
	if list, err := w.st.SessionApprovals(ctx, ses.ID); err != nil || len(list) != 1 || list[0].ID != r.ID {
		t.Errorf("the session's approvals: %+v %v", list, err)
	}

	for _, n := range []store.NewRequest{
		{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: "git push --force", Risk: store.RiskCritical},
		{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: "go test ./... | tee log", Risk: store.RiskHigh},
	} {
		q, err := w.st.RaiseRequest(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Decide(ctx, ana, supervision.Decision{Request: q.ID, Approve: true, Session: true}); agenterr.KindOf(err) != agenterr.Refused {
			t.Errorf("for the session, %q (%s): %v, want refused", n.Command, n.Risk, err)
		}
		if q, _ = w.st.Request(ctx, q.ID); q.Status != store.StatusPending {
			t.Errorf("a refused approval left %q %s", n.Command, q.Status)
		}
		w.st.CloseRequest(ctx, q.ID, store.StatusWithdrawn, store.SurfaceAgent, "next")
	}
}
