package slack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

// checkAllInert checks every text the fake Slack was sent — each version of
// each message (its top-level text, which phones show, and its blocks),
// each ephemeral, each slash command's answer — with checkInert. The
// escalation's own mention (the config's) is the one special mention.
func (w *world) checkAllInert(t *testing.T) {
	t.Helper()
	for _, m := range w.fake.Messages() {
		for i, v := range m.Versions {
			text := strings.TrimPrefix(v.Text, w.conf.withDefaults().EscalationMention+" :rotating_light:")
			checkInert(t, fmt.Sprintf("message %s v%d text", m.TS, i), text)
			for _, b := range fakeslack.BlockTexts(v.Blocks) {
				checkInert(t, fmt.Sprintf("message %s v%d block", m.TS, i), b)
			}
		}
	}
	for _, e := range w.fake.Ephemerals() {
		checkInert(t, "ephemeral to "+e.User, e.Text)
	}
	for _, env := range w.fake.Envelopes() {
		for _, r := range w.fake.Responses(env.ID) {
			var p struct{ Text string }
			json.Unmarshal(r, &p)
			checkInert(t, "answer to "+env.ID, p.Text)
		}
	}
}

// An agent writes what looks like our interface — a ``` that would close
// the code block, <!channel>, <!here>, <@U…>, <#C…>, <!subteam^…>, a
// link labelled ":white_check_mark: Approve here", bidi and zero-width
// characters, a line that reads as an outcome — into every field it
// controls: the session's title, CLI (an MCP client's name), agent, task
// and owner; a request's title, tool, command, file, diff and URL; a
// prompt's text; a stall alert's reason; the end reason; a registry
// command's output. Every message, in its blocks and in its top-level text,
// every ephemeral and every answer shows it as text: no mention, no link,
// no code block it closed.
func TestAgentTextCannotForgeTheInterface(t *testing.T) {
	w := newWorld(t, testConfig())
	os.MkdirAll(filepath.Join(w.dbDir, ".agent"), 0o755)
	os.WriteFile(filepath.Join(w.dbDir, "forged.txt"), []byte(forged), 0o644)
	os.WriteFile(filepath.Join(w.dbDir, ".agent", "policy.yaml"), []byte("commands:\n  forge: cat forged.txt\n"), 0o644)
	ses, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Workspace: w.dbDir, Mode: store.ModeRemote, CLI: forged, Agent: forged, TaskID: forged, Title: forged})
	if err != nil {
		t.Fatal(err)
	}
	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
	root := w.message(fmt.Sprintf("Session %d ", ses.ID))

	r1 := w.raise(ses, store.NewRequest{Kind: store.KindCommand, Tool: forged, Command: forged, Title: forged, Risk: store.RiskHigh})
	m1 := w.message(fmt.Sprintf("Request %d ", r1.ID))
	w.st.Decide(w.ctx, store.Decision{RequestID: r1.ID, By: "ana", Surface: store.SurfaceTerminal, Reason: forged})
	w.waitMessage(m1.TS, "the rejection", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Rejected") })
	r2 := w.raise(ses, store.NewRequest{Kind: store.KindEdit, Tool: "Edit", File: forged, Diff: forged, Title: forged, Risk: store.RiskLow})
	m2 := w.message(fmt.Sprintf("Request %d ", r2.ID))
	w.click(bo, m2, actionApprove, r2.ID)
	w.waitMessage(m2.TS, "the approval", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, " — :white_check_mark: Approved by")
	})
	r3 := w.raise(ses, store.NewRequest{Kind: store.KindFetch, Tool: "WebFetch", URL: forged, Title: forged, Risk: store.RiskLow})
	m3 := w.message(fmt.Sprintf("Request %d ", r3.ID))
	w.click(bo, m3, actionApproveAlways, r3.ID) // the rule planned from the agent's URL
	w.message(fmt.Sprintf("Approve always, request %d", r3.ID))

	p, err := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptErrorRecovery, Text: forged})
	if err != nil {
		t.Fatal(err)
	}
	pm := w.message(fmt.Sprintf("Prompt p%d", p.ID))
	w.st.DecidePrompt(w.ctx, store.PromptDecision{ID: p.ID, Action: store.ActionRefine, Instruction: forged, By: "ana", Surface: store.SurfaceTerminal})
	w.waitMessage(pm.TS, "the refinement", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Refined") })

	a, err := w.st.RaiseAlert(w.ctx, ses.ID, forged)
	if err != nil {
		t.Fatal(err)
	}
	w.message(fmt.Sprintf("Stall alert s%d", a.ID))
	w.st.CloseAlert(w.ctx, a.ID, store.AlertEscalated, forged)
	w.message("<!channel> :rotating_light:")

	if got := w.slash(bo, fmt.Sprintf("run %d forge", ses.ID)); !strings.Contains(got, "Running") {
		t.Fatalf("run: %q", got)
	}
	w.message("`forge` (cat forged.txt)")
	w.slash(bo, "sessions")
	w.slash(bo, "pending")
	w.mention(bo, root.TS, "hello")
	w.ephemeral(bo.ID, "Queued")

	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "agentinfra", Reason: forged})
	w.message(fmt.Sprintf("Session %d terminated", ses.ID))

	w.checkAllInert(t)
	// The fields were there, as text.
	if b := strings.Join(fakeslack.BlockTexts(m1.Versions[0].Blocks), "\n"); !strings.Contains(b, "```echo hiˋˋˋ\n&lt;!channel&gt; &lt;!here&gt;") {
		t.Fatalf("the command is not shown as text: %s", b)
	}
	if txt := m1.Versions[0].Text; !strings.Contains(txt, "&lt;http://evil.example|:white_check_mark: Approve here&gt;") {
		t.Fatalf("the notification text: %q", txt)
	}
}

// Long agent text fits Slack's limits once escaped: a 40,000-character
// command of "<" (160,000 once escaped), a 1,500-character prompt of "&",
// a 10,000-character URL, a 40,000-character title. Slack (the fake, as
// the real one) refuses a section over 3,000 characters and a text over
// 40,000: every message is posted.
func TestLongAgentTextFitsSlacksLimits(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	long := strings.Repeat("<", 40000)
	r := w.raise(ses, store.NewRequest{Kind: store.KindCommand, Tool: "Bash", Command: long, Title: strings.Repeat("&", 40000), Risk: store.RiskLow})
	w.message(fmt.Sprintf("Request %d ", r.ID))
	w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal})
	r2 := w.raise(ses, store.NewRequest{Kind: store.KindFetch, Tool: "WebFetch", URL: "https://example.com/" + strings.Repeat("a&b", 3400), Title: "fetch", Risk: store.RiskLow})
	w.message(fmt.Sprintf("Request %d ", r2.ID))
	p, _ := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: strings.Repeat("&", 1500)})
	w.message(fmt.Sprintf("Prompt p%d", p.ID))
	for _, c := range w.fake.Calls("") {
		if c.Error != "" {
			t.Errorf("Slack refused %s: %s", c.Method, c.Error)
		}
	}
	w.checkAllInert(t)
}
