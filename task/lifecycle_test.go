package task

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// The whole lifecycle, each move logged with its actor and reason and
// published with them; a move from a status the task no longer has
// changes nothing.
func TestLifecycleLogsActorAndReason(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	sub := events.Default().Subscribe(events.Filter{Root: ws.Root, Kinds: []events.Kind{events.TaskChanged}}, 0)
	defer sub.Close()
	tk, dir, err := createTask(WithActor(ctx, "alice"), ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	readme0 := readFile(t, filepath.Join(dir, "README.md"))
	at := func(m int) time.Time { return now.Add(time.Duration(m) * time.Minute) }

	if _, err := Claim(ctx, ws, tk.ID, "papi", at(1)); err != nil {
		t.Fatal(err)
	}
	fr, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: false, Reason: "gemini exited with code 7\nstderr: boom", Holder: "@papi"}, "@papi", at(2))
	r := fr.UpdateResult
	if err != nil || r.After.Status != "BLOCKED" || fr.There {
		t.Fatalf("finish failed run: %+v, %v", fr, err)
	}
	// Finish again (a second recorder of the same run): nothing to do. The
	// same end finds the task there; another end finds it moved on.
	same := treehash.Guard(t, ws.Root)
	if r, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: false, Holder: "@papi"}, "@papi", at(3)); err != nil || len(r.Changed) != 0 || !r.There {
		t.Errorf("the same end again: %+v, %v", r, err)
	}
	if r, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: true, Holder: "@papi"}, "@papi", at(3)); err != nil || len(r.Changed) != 0 || r.After.Status != "BLOCKED" || r.There {
		t.Errorf("finish of a task that is no longer IN_PROGRESS: %+v, %v", r, err)
	}
	same()
	if _, err := Reopen(ctx, ws, tk.ID, "the flaky test is fixed", "alice", at(4)); err != nil {
		t.Fatal(err)
	}
	if _, err := Claim(ctx, ws, tk.ID, "@sony", at(5)); err != nil {
		t.Fatal(err)
	}
	r, err = Release(ctx, ws, tk.ID, "@sony", "@sony", at(6))
	if err != nil || r.After.Status != "TODO" || slices.Contains(r.After.Agents, "@sony") {
		t.Fatalf("release: %+v, %v", r, err)
	}
	if _, err := Claim(ctx, ws, tk.ID, "@papi", at(7)); err != nil {
		t.Fatal(err)
	}
	if _, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: true, Reason: "completed", Holder: "@papi"}, "@papi", at(8)); err != nil {
		t.Fatal(err)
	}
	if _, err := Block(ctx, ws, tk.ID, "waiting for the API key", ActorWatchdog, at(9)); err != nil {
		t.Fatal(err)
	}

	want := readme0 +
		"- 2026-11-21 14:06: status TODO → IN_PROGRESS by @papi\n" +
		"- 2026-11-21 14:07: status IN_PROGRESS → BLOCKED by @papi: gemini exited with code 7 stderr: boom\n" +
		"- 2026-11-21 14:09: status BLOCKED → TODO by @alice: the flaky test is fixed\n" +
		"- 2026-11-21 14:10: status TODO → IN_PROGRESS by @sony\n" +
		"- 2026-11-21 14:11: status IN_PROGRESS → TODO by @sony: released: the run did not start\n" +
		"- 2026-11-21 14:12: status TODO → IN_PROGRESS by @papi\n" +
		"- 2026-11-21 14:13: status IN_PROGRESS → REVIEW by @papi: completed\n" +
		"- 2026-11-21 14:14: status REVIEW → BLOCKED by watchdog: waiting for the API key\n"
	if got := readFile(t, filepath.Join(dir, "README.md")); got != want {
		t.Errorf("README status log:\n%s\nwant:\n%s", got, want)
	}

	var got []string
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		got = append(got, e.Actor+" "+e.Before+">"+e.After+" "+strings.Join(e.Fields, ","))
	}
	wantEv := []string{
		"alice > created",
		"@papi TODO>IN_PROGRESS status,agents",
		"@papi IN_PROGRESS>BLOCKED status",
		"alice BLOCKED>TODO status",
		"@sony TODO>IN_PROGRESS status,agents",
		"@sony IN_PROGRESS>TODO status,agents",
		"@papi TODO>IN_PROGRESS status",
		"@papi IN_PROGRESS>REVIEW status",
		"watchdog REVIEW>BLOCKED status",
	}
	if !slices.Equal(got, wantEv) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEv, "\n"))
	}
}

// The refusals of the lifecycle: nothing is written.
func TestLifecycleRefusals(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	tk, _, err := createTask(ctx, ws, CreateOptions{Description: "x", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, ws.Root)
	if _, err := Reopen(ctx, ws, tk.ID, "", "alice", now); !errors.Is(err, ErrNotBlocked) || agenterr.KindOf(err) != agenterr.Conflict {
		t.Errorf("reopen of a TODO task: %v", err)
	}
	// A release by an agent that does not hold it, a finish of a task that
	// is not IN_PROGRESS: no change, no error.
	if r, err := Release(ctx, ws, tk.ID, "@papi", "@papi", now); err != nil || len(r.Changed) != 0 {
		t.Errorf("release of a TODO task: %+v, %v", r, err)
	}
	if r, err := Release(ctx, ws, "zzzzzz", "@papi", "@papi", now); err != nil || len(r.Changed) != 0 {
		t.Errorf("release of an unknown task: %+v, %v", r, err)
	}
	if r, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: true}, "@papi", now); err != nil || len(r.Changed) != 0 {
		t.Errorf("finish of a TODO task: %+v, %v", r, err)
	}
	check()
	// Finish leaves a task another agent holds now.
	if _, err := Claim(ctx, ws, tk.ID, "@sony", now); err != nil {
		t.Fatal(err)
	}
	check = treehash.Guard(t, ws.Root)
	if r, err := Finish(ctx, ws, tk.ID, FinishOptions{OK: true, Holder: "@papi"}, "@papi", now); err != nil || len(r.Changed) != 0 {
		t.Errorf("finish by an agent that does not hold it: %+v, %v", r, err)
	}
	if r, err := Release(ctx, ws, tk.ID, "@papi", "@papi", now); err != nil || len(r.Changed) != 0 {
		t.Errorf("release by an agent that does not hold it: %+v, %v", r, err)
	}
	check()
	if _, err := SetStatus(ctx, ws, tk.ID, "DONE", now); err != nil {
		t.Fatal(err)
	}
	check = treehash.Guard(t, ws.Root)
	if _, err := Block(ctx, ws, tk.ID, "why", "alice", now); agenterr.KindOf(err) != agenterr.Conflict || !strings.Contains(err.Error(), "is DONE") {
		t.Errorf("block of a DONE task: %v", err)
	}
	check()
}

// Dispatch's claim (Again) takes BLOCKED and REVIEW tasks too, never an
// IN_PROGRESS one (not even its own: two runs never share a task), and
// anything with Force.
func TestClaimAgainAndForce(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	tk, dir, err := createTask(ctx, ws, CreateOptions{Description: "x", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetStatus(ctx, ws, tk.ID, "BLOCKED", now); err != nil {
		t.Fatal(err)
	}
	again := ClaimOptions{Again: true, By: "alice"}
	if r, err := ClaimWith(ctx, ws, tk.ID, "@coder", now, again); err != nil || r.Before.Status != "BLOCKED" || r.After.Status != "IN_PROGRESS" {
		t.Errorf("claim of a BLOCKED task: %+v, %v", r, err)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "README.md")), "status BLOCKED → IN_PROGRESS by @alice\n") {
		t.Error("the claim's log line does not name who claimed")
	}
	var ref *agenterr.Error
	for _, who := range []string{"@coder", "@other"} {
		_, err := ClaimWith(ctx, ws, tk.ID, who, now, again)
		if !errors.As(err, &ref) || ref.Kind != agenterr.Refused || !errors.Is(err, ErrClaimed) || ref.Override != "force" || ref.Holder != "@coder" ||
			!strings.Contains(err.Error(), "is already IN_PROGRESS (@coder)") {
			t.Errorf("claim again of an IN_PROGRESS task by %s: %v", who, err)
		}
	}
	if r, err := ClaimWith(ctx, ws, tk.ID, "@other", now, ClaimOptions{Force: true}); err != nil || Holder(r.After) != "@other" {
		t.Errorf("forced claim: %+v, %v", r, err)
	}
	if _, err := SetStatus(ctx, ws, tk.ID, "DONE", now); err != nil {
		t.Fatal(err)
	}
	if _, err := ClaimWith(ctx, ws, tk.ID, "@coder", now, again); !errors.As(err, &ref) || !strings.Contains(err.Error(), "task "+tk.ID+" is DONE") {
		t.Errorf("claim again of a DONE task: %v", err)
	}
}

func TestActorFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		getenv func(string) string
		want   Actor
		kind   string
	}{
		{env("AGENTINFRA_AGENT", "Papi", "USER", "alice"), "@Papi", "agent"},
		{env("AGENTINFRA_ACTOR", "bob", "USER", "alice"), "bob", "person"},
		{env("USER", "alice"), "alice", "person"},
		{env("LOGNAME", "carol"), "carol", "person"},
		{env(), "", ""},
	} {
		if got := ActorFromEnv(c.getenv); got != c.want || got.Kind() != c.kind {
			t.Errorf("ActorFromEnv = %q (%s), want %q (%s)", got, got.Kind(), c.want, c.kind)
		}
	}
	if ActorWatchdog.Kind() != "system" || ActorPolicy.Kind() != "system" {
		t.Error("policy and watchdog are agentinfra's own actors")
	}
}
