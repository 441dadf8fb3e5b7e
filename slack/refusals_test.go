package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

// What Slack sends in its encoding reaches the agent as the person typed
// it: a steering message, a reject reason, a slash command's text. The
// outcome line shows the reason once escaped, not twice.
func TestTextFromSlackIsDecodedForTheAgent(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	w.recorded(store.ItemSession, ses.ID)
	w.mention(bo, root.TS, "run `go test ./... &amp;&amp; go vet` and ask <@U0ANA> about <https://example.com/x?a=1&amp;b=2|the spec>")
	w.ephemeral(bo.ID, "Queued")
	w.slash(bo, fmt.Sprintf("steer %d compare &lt;old&gt; &amp; &lt;new&gt;", ses.ID))
	q, _ := w.st.QueuedSteering(w.ctx, ses.ID)
	if len(q) != 2 || q[0].Text != "run `go test ./... && go vet` and ask @ana about the spec (https://example.com/x?a=1&b=2)" || q[1].Text != "compare <old> & <new>" {
		t.Fatalf("steering: %+v", q)
	}
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.click(bo, m, actionReject, r.ID)
	w.message("<@U0BO> why reject request")
	w.mention(bo, root.TS, "not in &lt;repo&gt;")
	m = w.waitMessage(m.TS, "the rejection", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Rejected") })
	if got, _ := w.st.Request(w.ctx, r.ID); got.Reason != "not in <repo>" {
		t.Fatalf("the reason the agent gets: %q", got.Reason)
	}
	if !strings.HasSuffix(m.Last().Text, "Rejected by <@U0BO>: not in &lt;repo&gt;") {
		t.Fatalf("the outcome line: %q", m.Last().Text)
	}
}

// Every refused or malformed action is answered, only to its sender: an
// unknown action, a malformed value, a value naming an item that has no
// message or another item than the message's (nothing is decided then),
// an unknown prompt or alert. What was sent is recorded clipped.
func TestRefusedAndMalformedActionsAreAnswered(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	other := w.session(store.ModeRemote)
	r2 := w.raise(other, store.NewRequest{})
	w.message(fmt.Sprintf("Request %d ", r2.ID))
	a, _ := w.st.RaiseAlert(w.ctx, ses.ID, "silent")
	am := w.message(fmt.Sprintf("Stall alert s%d", a.ID))

	for _, c := range []struct {
		msg           fakeslack.Message
		action, value string
		want          string
	}{
		{m, "nuke", itoa(r.ID), "is not one agentinfra knows"},
		{m, actionApprove, "", "is not an item of agentinfra's"},
		{m, actionApprove, "1; DROP TABLE", "is not an item of agentinfra's"},
		{m, actionApprove, "-1", "is not an item of agentinfra's"},
		{m, actionApprove, strings.Repeat("9", 40000), "is not an item of agentinfra's"},
		{m, actionApprove, itoa(r2.ID), fmt.Sprintf("is not on the message of request %d", r2.ID)},
		{m, actionApprove, "999", "request 999 has no message on Slack"},
		{am, actionPromptContinue, "777", "prompt p777 has no message on Slack"},
		{am, actionAlertNudge, "555", "stall alert s555 has no message on Slack"},
		{m, actionConfirmAlways, itoa(r.ID) + ":0000", fmt.Sprintf("is not the confirmation of request %d", r.ID)},
	} {
		before := len(w.fake.Ephemerals())
		w.click2(bo, c.msg, c.action, c.value)
		if err := w.fake.Wait(w.ctx, "an answer to "+c.action, func() bool { return len(w.fake.Ephemerals()) > before }); err != nil {
			t.Fatalf("%s %.40q: %v", c.action, c.value, err)
		}
		e := w.fake.Ephemerals()[before]
		if e.User != bo.ID || !strings.Contains(e.Text, c.want) {
			t.Errorf("%s %.40q: %q, want %q", c.action, c.value, e.Text, c.want)
		}
	}
	for _, id := range []int64{r.ID, r2.ID} {
		if cur, _ := w.st.Request(w.ctx, id); cur.Status != store.StatusPending {
			t.Fatalf("a refused click decided request %d: %+v", id, cur)
		}
	}
	for _, e := range w.audit("slack_refused") {
		var d map[string]string
		json.Unmarshal(e.Detail, &d)
		if len(d["value"]) > maxRefusalValue+len("…") {
			t.Fatalf("a value of %d bytes recorded", len(d["value"]))
		}
	}
	if n := len(w.audit("slack_refused")); n != 10 {
		t.Fatalf("%d refusals recorded, want 10", n)
	}
}

// A member clicking in a loop gets refusalBurst answers a minute and as
// many audit lines, no more; an unlinked member's refusals, which name no
// session, go with the retention.
func TestRefusalsAreLimitedAndPurged(t *testing.T) {
	w := newWorld(t, testConfig())
	for range refusalBurst {
		if got := w.slash(mal, "sessions"); !strings.Contains(got, "slack.users") {
			t.Fatalf("mal: %q", got)
		}
	}
	var over []string
	for i := range 10 { // over the limit: acked, neither answered nor recorded
		env, _ := w.fake.Slash(mal, channel, "/agentinfra", fmt.Sprintf("pending %d", i))
		w.fake.Acked(w.ctx, env)
		over = append(over, env)
	}
	// The limit is per member.
	if got := w.slash(eve, "sessions"); !strings.Contains(got, "No live remote session of yours") {
		t.Fatalf("eve: %q", got)
	}
	if n := len(w.audit("slack_refused")); n != refusalBurst {
		t.Fatalf("%d refusals recorded, want %d", n, refusalBurst)
	}
	for _, env := range over {
		if n := len(w.fake.Responses(env)); n != 0 {
			t.Fatalf("a refusal over the limit was answered")
		}
	}
	rep, err := w.sup.Purge(w.ctx, supervision.Person("bo", supervision.SurfaceTerminal), time.Now().Add(time.Minute), false)
	if err != nil || rep.Audit != refusalBurst {
		t.Fatalf("purge: %+v %v", rep, err)
	}
	if n := len(w.audit("slack_refused")); n != 0 {
		t.Fatalf("%d refusals survived the retention", n)
	}
}
