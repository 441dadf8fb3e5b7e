package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

func TestClaim(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	tk, dir, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder", Agents: []string{"@planner"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	readme0 := readFile(t, filepath.Join(dir, "README.md"))

	r, err := Claim(ctx, ws, tk.ID, "papi", now)
	if err != nil {
		t.Fatal(err)
	}
	if r.After.Status != "IN_PROGRESS" || !slices.Equal(r.After.Agents, []string{"@planner", "@papi"}) || !slices.Equal(r.Changed, []string{"status", "agents"}) {
		t.Errorf("claim = %+v", r)
	}
	if got := readFile(t, filepath.Join(dir, "README.md")); got != readme0+"- 2026-11-21 14:05: status TODO → IN_PROGRESS by @papi\n" {
		t.Errorf("README after claim:\n%s", got)
	}

	// The same agent again: nothing to do, nothing written.
	same := treehash.Guard(t, ws.Root)
	if r, err := Claim(ctx, ws, tk.ID, "@PAPI", now.Add(3600e9)); err != nil || len(r.Changed) != 0 || r.After.Status != "IN_PROGRESS" {
		t.Errorf("claim by the holder: %+v, %v", r, err)
	}
	same()

	// Another agent, even one named in Agents before the holder: refused, naming the holder.
	for _, other := range []string{"@coder", "@planner"} {
		_, err = Claim(ctx, ws, tk.ID, other, now)
		var ref *agenterr.Error
		if !errors.As(err, &ref) || ref.Kind != agenterr.Conflict || ref.Holder != "@papi" || !errors.Is(err, ErrClaimed) ||
			!strings.Contains(err.Error(), "task "+tk.ID+" is IN_PROGRESS, held by @papi") {
			t.Errorf("claim by %s of a held task: %v", other, err)
		}
		same()
	}

	// Not TODO, not IN_PROGRESS: refused, naming the status.
	if _, err := SetStatus(ctx, ws, tk.ID, "review", now); err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, ws.Root)
	_, err = Claim(ctx, ws, tk.ID, "@papi", now)
	var ref *agenterr.Error
	if !errors.As(err, &ref) || ref.Kind != agenterr.Conflict || ref.Holder != "" || !strings.Contains(err.Error(), "is REVIEW; only a TODO task can be claimed") {
		t.Errorf("claim of a REVIEW task: %v", err)
	}
	// Unknown ID and a bad mention are typed too.
	if _, err := Claim(ctx, ws, "zzzzzz", "@papi", now); !errors.Is(err, matrix.ErrNotFound) {
		t.Errorf("claim of an unknown task: %v", err)
	}
	var inv *agenterr.Error
	if _, err := Claim(ctx, ws, tk.ID, "not one", now); !errors.As(err, &inv) || inv.Kind != agenterr.Invalid || inv.Field != "agent" {
		t.Errorf("claim by a bad mention: %v", err)
	}
	check()
}

// A claimer already named in Agents becomes the holder: it moves last.
func TestClaimByNamedAgentMovesItLast(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	tk, _, err := createTask(ctx, ws, CreateOptions{Description: "x", Mode: "coder", Agents: []string{"@ann", "@bob"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Claim(ctx, ws, tk.ID, "@ann", now)
	if err != nil || !slices.Equal(r.After.Agents, []string{"@bob", "@ann"}) {
		t.Fatalf("claim = %+v, %v", r, err)
	}
	if _, err := Claim(ctx, ws, tk.ID, "@bob", now); !errors.Is(err, ErrClaimed) {
		t.Errorf("@bob claimed a task @ann holds: %v", err)
	}
}

// Twenty goroutines claim one TODO task: one wins, the others are told who.
func TestClaimConcurrentOneWinner(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	tk, dir, err := createTask(ctx, ws, CreateOptions{Description: "contended", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		holders = map[string]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("@agent%02d", i)
			_, err := Claim(ctx, ws, tk.ID, agent, now)
			mu.Lock()
			defer mu.Unlock()
			var ref *agenterr.Error
			switch {
			case err == nil:
				winners = append(winners, agent)
			case errors.As(err, &ref):
				holders[ref.Holder]++
			default:
				t.Errorf("%s: %v", agent, err)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 || holders[winners[0]] != n-1 {
		t.Fatalf("winners %v, refusals by holder %v", winners, holders)
	}
	d := matrix.Parse([]byte(readFile(t, ws.MatrixPath())))
	if ds := Validate(ws, d, "m", func(string) string { return "" }); matrix.HasErrors(ds) {
		t.Errorf("matrix after the claims: %v", ds)
	}
	if got, _ := d.Task(tk.ID); got.Status != "IN_PROGRESS" || !slices.Equal(got.Agents, winners) {
		t.Errorf("row after the claims: %+v", got)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if c := strings.Count(string(b), "status TODO → IN_PROGRESS"); c != 1 {
		t.Errorf("README has %d TODO → IN_PROGRESS lines:\n%s", c, b)
	}
}
