package keepmoving

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

type cliCase struct {
	name   string
	script func(testing.TB, fakemodel.Script) *fakemodel.Server
	status func(testing.TB, int) *fakemodel.Server
	cli    func(testing.TB, string) fakemodel.CLI
	path   string
}

var clis = []cliCase{
	{"claude", fakemodel.NewClaudeScript, fakemodel.NewClaude, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Claude(t, u) }, "/v1/messages"},
	{"codex", fakemodel.NewCodexScript, fakemodel.NewCodex, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Codex(t, u) }, "/v1/responses"},
	{"gemini", fakemodel.NewGeminiScript, fakemodel.NewGemini, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Gemini(t, u) }, ":streamGenerateContent"},
}

// forEachCLI runs fn with each real CLI in parallel; gemini (~15 s a run
// on the 2-core machine) only with AGENTINFRA_E2E=1, as in package bridge.
func forEachCLI(t *testing.T, fn func(t *testing.T, c cliCase)) {
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "gemini" && os.Getenv("AGENTINFRA_E2E") != "1" {
				t.Skip("gemini's supervised runs take ~15 s each: AGENTINFRA_E2E=1 runs them")
			}
			t.Parallel()
			fn(t, c)
		})
	}
}

type world struct {
	fake *fakemodel.Server
	cli  fakemodel.CLI
	st   *store.Store
	ses  store.Session
	bus  *events.Bus
	sub  *events.Subscription
	c    cliCase
}

func newWorld(t *testing.T, c cliCase, fake *fakemodel.Server) *world {
	cli := c.cli(t, fake.URL)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ses, err := st.CreateSession(context.Background(), store.NewSession{Owner: "ana", Workspace: cli.Dir, CLI: c.name})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = st.SetSessionStatus(context.Background(), ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	bus := events.New()
	return &world{fake: fake, cli: cli, st: st, ses: ses, bus: bus, c: c,
		sub: bus.Subscribe(events.Filter{Kinds: []events.Kind{events.AlertChanged, events.PromptChanged, events.SteeringChanged}}, 256)}
}

func (w *world) run(t *testing.T, cfg Config, prompt string) (runner.Result, Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()
	pol := &policy.Policy{Root: w.cli.Dir, AskAll: true}
	start := func(ctx context.Context, wt Watch) (runner.Conversation, error) {
		return agentcli.StartSupervised(ctx, bridge.Request{CLI: w.c.name, Binary: w.cli.Binary, Model: w.cli.Model, Dir: w.cli.Dir, Env: w.cli.Env, CleanEnv: true,
			ExtraArgs: w.cli.ExtraArgs, Prompt: prompt},
			bridge.Options{Store: w.st, Session: w.ses, Policy: func() *policy.Policy { return pol }, OnEvent: wt.OnEvent, BeforeApprovedEdit: wt.BeforeApprovedEdit})
	}
	return Run(ctx, start, Options{Config: cfg, Store: w.st, Session: w.ses, CLI: w.c.name, Model: w.cli.Model, Bus: w.bus, Root: w.cli.Dir})
}

// nextPrompt waits (as a person at another terminal would, on the store's
// changes) for the session's next pending prompt.
func (w *world) nextPrompt(t *testing.T, after int64) store.Prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()
	changes, _ := w.st.Changes(ctx)
	for {
		if p, ok, _ := w.st.PendingPrompt(ctx, w.ses.ID); ok && p.ID > after {
			return p
		}
		select {
		case <-ctx.Done():
			t.Errorf("no prompt came after p%d", after)
			return store.Prompt{}
		case <-changes:
		}
	}
}

func (w *world) decide(t *testing.T, id int64, action, instruction string) {
	t.Helper()
	if _, err := w.st.DecidePrompt(context.Background(), store.PromptDecision{ID: id, Action: action, Instruction: instruction, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Errorf("decide p%d %s: %v", id, action, err)
	}
}

func (w *world) bodies() string {
	var b strings.Builder
	for _, r := range w.fake.Requests(w.c.path) {
		b.Write(r.Body)
	}
	return b.String()
}

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

// A turn that ends with a question raises a clarification prompt; refine
// sends the new instruction and the run goes on; stop ends it with the
// task in the configured status.
func TestClarificationRefineThenStop(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		fake := c.script(t, func(a fakemodel.Ask) fakemodel.Answer {
			switch {
			case strings.Contains(a.User, "REFINE-USE-SQLITE"):
				return fakemodel.Answer{Text: "Switched to SQLite. Shall I also migrate the old data?"}
			case strings.Contains(a.User, "START"):
				return fakemodel.Answer{Text: "Which database should I use, SQLite or Postgres?"}
			}
			return fakemodel.Answer{Text: "ok"}
		})
		w := newWorld(t, c, fake)
		var cfg Config
		cfg.Prompts.StopStatus = "blocked"
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := w.nextPrompt(t, 0)
			if p.Kind != store.PromptClarification || !strings.Contains(p.Text, "SQLite or Postgres?") {
				t.Errorf("first prompt: %+v", p)
			}
			w.decide(t, p.ID, store.ActionRefine, "REFINE-USE-SQLITE please")
			p2 := w.nextPrompt(t, p.ID)
			if p2.Kind != store.PromptClarification || !strings.Contains(p2.Text, "migrate the old data?") {
				t.Errorf("second prompt: %+v", p2)
			}
			w.decide(t, p2.ID, store.ActionStop, "")
		}()
		res, out, err := w.run(t, cfg, "START the task")
		wg.Wait()
		if err != nil {
			t.Fatalf("run: %v %+v", err, res)
		}
		if out.Ended != "stopped" || out.TaskStatus != "blocked" || out.Prompts != 2 || out.Turns != 2 || !strings.Contains(out.Reason, "@ana") {
			t.Fatalf("outcome: %+v", out)
		}
		if !strings.Contains(w.bodies(), "REFINE-USE-SQLITE please") {
			t.Fatal("the refined instruction never reached the model")
		}
		var statuses []string
		for _, e := range w.published() {
			if e.Kind == events.PromptChanged && e.SessionID == w.ses.ID {
				statuses = append(statuses, e.Status)
			}
		}
		if strings.Join(statuses, ",") != "pending,refined,pending,stopped" {
			t.Errorf("published prompt events: %v", statuses)
		}
	})
}

// A steering message reaches the model as the next user message (here
// while a continuation prompt waits: it answers the prompt).
func TestSteeringReachesTheModel(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		fake := c.script(t, func(a fakemodel.Ask) fakemodel.Answer {
			if strings.Contains(a.User, "STEER-ALSO-RUN-VET") {
				return fakemodel.Answer{Text: "Vet is clean."}
			}
			return fakemodel.Answer{Text: "Step one is done."}
		})
		w := newWorld(t, c, fake)
		var cfg Config
		cfg.Prompts.Ask = AskAlways
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := w.nextPrompt(t, 0)
			if p.Kind != store.PromptContinuation {
				t.Errorf("first prompt: %+v", p)
			}
			if _, err := w.st.Steer(context.Background(), w.ses.ID, "STEER-ALSO-RUN-VET now", "ana", store.SurfaceTerminal); err != nil {
				t.Error(err)
			}
			p2 := w.nextPrompt(t, p.ID)
			w.decide(t, p2.ID, store.ActionStop, "")
			if got, _ := w.st.Prompt(context.Background(), p.ID); got.Status != store.PromptWithdrawn {
				t.Errorf("the prompt the steering answered: %+v", got)
			}
		}()
		_, out, err := w.run(t, cfg, "do step one")
		wg.Wait()
		if err != nil || out.Ended != "stopped" || out.TaskStatus != "review" {
			t.Fatalf("run: %v %+v", err, out)
		}
		if !strings.Contains(w.bodies(), "STEER-ALSO-RUN-VET now") {
			t.Fatal("the steering message never reached the model")
		}
		msgs, _ := w.st.SteeringOf(context.Background(), w.ses.ID)
		if len(msgs) != 1 || msgs[0].Status != store.SteeringDelivered {
			t.Fatalf("steering: %+v", msgs)
		}
	})
}

// A run that goes silent (the model thinks for long) is nudged and the
// nudge text reaches the model; the alert is raised, nudged, then closed
// as self-recovered when the agent speaks again.
func TestSilentRunIsNudged(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		const nudge = "NUDGE-ARE-YOU-STILL-THERE"
		fake := c.script(t, func(a fakemodel.Ask) fakemodel.Answer {
			if strings.Contains(a.User, nudge) {
				return fakemodel.Answer{Text: "Yes, still here."}
			}
			if a.N == 0 {
				return fakemodel.Answer{Text: "Thinking done.", Delay: 8 * time.Second}
			}
			return fakemodel.Answer{Text: "ok"}
		})
		w := newWorld(t, c, fake)
		var cfg Config
		cfg.Watchdog.Threshold = 2 * time.Second
		cfg.Watchdog.EscalationWait = time.Second
		cfg.Watchdog.MaxRetries = 1
		cfg.Watchdog.Nudge = nudge
		cfg.Prompts.Ask = AskAlways
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Stop at the first prompt once the nudge reached the model.
			var last int64
			for range 5 {
				p := w.nextPrompt(t, last)
				if p.ID == 0 {
					return
				}
				last = p.ID
				if strings.Contains(w.bodies(), nudge) {
					w.decide(t, p.ID, store.ActionStop, "")
					return
				}
				w.decide(t, p.ID, store.ActionContinue, "")
			}
			t.Error("the nudge never reached the model")
		}()
		_, out, err := w.run(t, cfg, "think hard")
		wg.Wait()
		if err != nil {
			t.Fatalf("run: %v %+v", err, out)
		}
		if !strings.Contains(w.bodies(), nudge) {
			t.Fatal("the nudge never reached the model")
		}
		// On a loaded machine the CLI's own start-up can outlast the
		// threshold: an alert raised then is closed as self-recovered when
		// the CLI's first line arrives. The one that matters is the first
		// alert that was nudged.
		alerts, _ := w.st.Alerts(context.Background(), w.ses.ID)
		var nudged *store.Alert
		for i := range alerts {
			if alerts[i].Nudges >= 1 {
				nudged = &alerts[i]
				break
			}
		}
		if nudged == nil {
			t.Fatalf("no alert was nudged: %+v", alerts)
		}
		for _, a := range alerts {
			if a.Active() {
				t.Errorf("an alert left active: %+v", a)
			}
		}
		var seen []string
		for _, e := range w.published() {
			if e.Kind == events.AlertChanged && e.ItemID == nudged.ID {
				seen = append(seen, e.Status)
			}
		}
		if len(seen) < 2 || seen[0] != store.AlertPending || seen[1] != store.AlertNudged {
			t.Errorf("published events of alert %d: %v", nudged.ID, seen)
		}
	})
}

// A turn that ends on an error (the API fails) raises error_recovery; when
// nobody answers it times out and the run does NOT continue: no further
// request reaches the model, the task is blocked.
func TestErrorRecoveryTimeoutDoesNotContinue(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		w := newWorld(t, c, c.status(t, 400))
		var cfg Config
		cfg.Prompts.Timeout = 2 * time.Second
		var asked store.Prompt
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); asked = w.nextPrompt(t, 0) }()
		_, out, _ := w.run(t, cfg, "do it")
		wg.Wait()
		before := len(w.fake.Requests(c.path))
		if asked.Kind != store.PromptErrorRecovery {
			t.Fatalf("prompt: %+v", asked)
		}
		p, _ := w.st.Prompt(context.Background(), asked.ID)
		if p.Status != store.PromptExpired || p.Surface != store.SurfaceTimeout {
			t.Fatalf("the timed-out prompt: %+v", p)
		}
		if out.Ended != "error" || out.TaskStatus != "blocked" || out.Turns != 1 {
			t.Fatalf("outcome: %+v", out)
		}
		if strings.Contains(w.bodies(), DefaultContinue) || len(w.fake.Requests(c.path)) != before {
			t.Fatal("the run continued after an error nobody answered")
		}
	})
}

// A token budget: the tokens each CLI reports at the end of a turn count;
// at 80 % of budget.max_tokens the operator gets a resource_warning
// prompt, the count grows turn by turn, and stop ends the run.
func TestTokenBudgetRaisesResourceWarning(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		fake := c.script(t, func(a fakemodel.Ask) fakemodel.Answer { return fakemodel.Answer{Text: "Part done."} })
		w := newWorld(t, c, fake)
		var cfg Config
		cfg.Budget.MaxTokens = 10 // every fake reports more per request
		var first, second store.Prompt
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			first = w.nextPrompt(t, 0)
			w.decide(t, first.ID, store.ActionContinue, "")
			second = w.nextPrompt(t, first.ID)
			w.decide(t, second.ID, store.ActionStop, "")
		}()
		_, out, err := w.run(t, cfg, "START the work")
		wg.Wait()
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		tokensOf := func(p store.Prompt) int {
			var n, max int
			if _, err := fmt.Sscanf(p.Text, "%d of the %d tokens of the budget are used", &n, &max); err != nil || max != 10 {
				t.Fatalf("prompt text %q: %v", p.Text, err)
			}
			return n
		}
		if first.Kind != store.PromptResourceWarning || second.Kind != store.PromptResourceWarning {
			t.Fatalf("prompts: %+v / %+v", first, second)
		}
		n1, n2 := tokensOf(first), tokensOf(second)
		t.Logf("%s: %d tokens after the first turn, %d after the second", c.name, n1, n2)
		if n1 < 8 || n2 <= n1 {
			t.Fatalf("token counts: %d then %d", n1, n2)
		}
		if out.Ended != "stopped" || out.Turns != 2 {
			t.Fatalf("outcome: %+v", out)
		}
	})
}
