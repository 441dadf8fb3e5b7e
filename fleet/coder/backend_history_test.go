package coder_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// report has the agent of workspace name report app statuses, each
// "state:message".
func report(t *testing.T, srv *codertest.Server, name string, statuses ...string) {
	t.Helper()
	for _, s := range statuses {
		state, msg, _ := strings.Cut(s, ":")
		if err := srv.ReportAppStatus(name, state, msg); err != nil {
			t.Fatal(err)
		}
	}
}

// A stretch of work the app reported is summed up by its first message,
// not by its first status, which real agents leave without one (the
// statuses below are those of a recorded Coder v2.27 workspace).
func TestHistorySummaryIsTheFirstMessageOfTheStretch(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	if _, err := w.srv.AddReadyWorkspace("me", "henk", "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	report(t, w.srv, "henk",
		"working:", "working:Starting comprehensive research on Python alternatives",
		"working:Analyzing Python usage patterns across repository projects",
		"idle:Research complete: comprehensive Python alternatives analysis delivered",
		// No message in the stretch: the one that ended it.
		"working:", "idle:Answered the question",
		// No message at all.
		"working:", "working:", "idle:")
	h, err := w.b.History(ctx, "henk", 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range h.Tasks {
		got = append(got, r.Summary)
	}
	want := []string{"", "Answered the question", "Starting comprehensive research on Python alternatives"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("summaries, newest first:\n%q\nwant\n%q", got, want)
	}

	// Work under way shows as the run the history will show: the ID and
	// the summary of its stretch, though its first status has no message.
	app, _, _ := coder.FindApp(mustWorkspace(t, newClient(t, w.srv), "henk"), coder.DefaultAgentAPISlug)
	if err := newClient(t, w.srv).SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "typed in the dashboard"}); err != nil {
		t.Fatal(err)
	}
	shown, err := w.b.Show(ctx, "henk")
	if err != nil || shown.CurrentRun == nil || shown.CurrentRun.Summary != "working on: typed in the dashboard" {
		t.Fatalf("show while busy: %+v, %v", shown.CurrentRun, err)
	}
	list, err := w.b.List(ctx, fleet.ListFilter{})
	if err != nil || list[0].CurrentRun == nil || list[0].CurrentRun.ID != shown.CurrentRun.ID || list[0].CurrentRun.Summary != shown.CurrentRun.Summary {
		t.Fatalf("list while busy: %+v, %v; show said %+v", list[0].CurrentRun, err, shown.CurrentRun)
	}
	w.srv.Advance()
	h, err = w.b.History(ctx, "henk", 1, 20)
	if err != nil || h.Tasks[0].ID != shown.CurrentRun.ID || h.Tasks[0].Summary != shown.CurrentRun.Summary || h.Tasks[0].Status != fleet.RunCompleted {
		t.Fatalf("the run show showed, in the history: %+v, %v; show said %+v", h.Tasks[0], err, shown.CurrentRun)
	}
}
