package slack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

func (w *world) mention(u fakeslack.User, threadTS, text string) {
	w.t.Helper()
	env, err := w.fake.Mention(u, channel, threadTS, "<@"+fakeslack.BotUserID+"> "+text)
	if err != nil {
		w.t.Fatal(err)
	}
	w.fake.Acked(w.ctx, env)
}

func TestStallAlertNudgeAndEscalationMention(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	a, err := w.st.RaiseAlert(w.ctx, ses.ID, "silent for 5m0s")
	if err != nil {
		t.Fatal(err)
	}
	m := w.message(fmt.Sprintf("Stall alert s%d", a.ID))
	if m.ThreadTS != root.TS || !strings.Contains(string(m.Versions[0].Blocks), `"action_id":"alert_nudge_message"`) {
		t.Fatalf("the alert: %+v", m)
	}
	// Nudge with a message: asked as a threaded reply.
	w.click(bo, m, actionAlertNudgeMsg, a.ID)
	w.message("<@U0BO> what should the nudge say")
	w.mention(bo, root.TS, "are you stuck on the build?")
	w.waitMessage(m.TS, "the nudge", func(m fakeslack.Message) bool {
		return strings.Contains(string(m.Last().Blocks), `Nudged by \u003c@U0BO\u003e`)
	})
	queued, _ := w.st.QueuedSteering(w.ctx, ses.ID)
	if len(queued) != 1 || queued[0].Text != "are you stuck on the build?" || queued[0].Surface != store.SurfaceSlack {
		t.Fatalf("the nudge's message: %+v", queued)
	}
	// The watchdog gives up: the escalation mentions the channel.
	if _, won, err := w.st.CloseAlert(w.ctx, a.ID, store.AlertEscalated, "no answer to 3 nudges"); err != nil || !won {
		t.Fatalf("escalate: %v %v", won, err)
	}
	esc := w.message("<!channel> :rotating_light: Session")
	if esc.ThreadTS != root.TS || !strings.Contains(esc.Last().Text, fmt.Sprintf("stall alert s%d", a.ID)) || !strings.Contains(esc.Last().Text, "<@U0ANA>") {
		t.Fatalf("the escalation: %+v", esc)
	}
	w.waitMessage(m.TS, "the alert settled", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Escalated") })
}

func TestEscalationMentionFromTheConfig(t *testing.T) {
	conf := testConfig()
	conf.EscalationMention = "<!subteam^S0ONCALL>"
	w := newWorld(t, conf)
	ses := w.session(store.ModeRemote)
	a, _ := w.st.RaiseAlert(w.ctx, ses.ID, "silent")
	w.message("Stall alert")
	w.st.CloseAlert(w.ctx, a.ID, store.AlertEscalated, "")
	w.message("<!subteam^S0ONCALL> :rotating_light:")
}

func TestPromptRefineAndContinue(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	p, err := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: "Which database should I use?"})
	if err != nil {
		t.Fatal(err)
	}
	m := w.message(fmt.Sprintf("Prompt p%d", p.ID))
	if !strings.Contains(string(m.Versions[0].Blocks), "Which database should I use?") {
		t.Fatalf("the prompt: %s", m.Versions[0].Blocks)
	}
	w.click(eve, m, actionPromptContinue, p.ID)
	w.ephemeral(eve.ID, "Not allowed")
	w.click(ana, m, actionPromptRefine, p.ID)
	w.message("<@U0ANA> what should the agent do instead")
	w.mention(ana, root.TS, "use SQLite")
	m = w.waitMessage(m.TS, "the refinement", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Refined by <@U0ANA>: use SQLite")
	})
	if got := texts(m); !strings.Contains(got[len(got)-2], "Processing…") {
		t.Fatalf("versions: %q", got)
	}
	got, _ := w.st.Prompt(w.ctx, p.ID)
	if got.Status != store.PromptRefined || got.Instruction != "use SQLite" || got.Surface != store.SurfaceSlack {
		t.Fatalf("stored: %+v", got)
	}
	// A prompt answered from a terminal updates its message.
	p2, _ := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptContinuation})
	m2 := w.message(fmt.Sprintf("Prompt p%d", p2.ID))
	if _, err := w.st.DecidePrompt(w.ctx, store.PromptDecision{ID: p2.ID, Action: store.ActionContinue, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	w.waitMessage(m2.TS, "continued", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Continued by <@U0ANA> via terminal")
	})
}

func TestAThreadMentionSteersTheAgent(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	w.recorded(store.ItemSession, ses.ID)
	w.mention(eve, root.TS, "delete everything")
	w.ephemeral(eve.ID, "Not allowed")
	w.mention(bo, root.TS, "also update the README")
	w.ephemeral(bo.ID, "Queued for the agent of session")
	q, _ := w.st.QueuedSteering(w.ctx, ses.ID)
	if len(q) != 1 || q[0].Text != "also update the README" || q[0].SentBy != "bo" {
		t.Fatalf("steering: %+v", q)
	}
	if got := w.slash(bo, fmt.Sprintf("steer %d run the tests too", ses.ID)); !strings.Contains(got, "Queued") {
		t.Fatalf("slash steer: %q", got)
	}
	if q, _ = w.st.QueuedSteering(w.ctx, ses.ID); len(q) != 2 || q[1].Text != "run the tests too" {
		t.Fatalf("steering: %+v", q)
	}
}
