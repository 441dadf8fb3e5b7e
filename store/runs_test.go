package store

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestRunsSaveFinishAndHistoryOrder(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, id := range []string{"papi-1", "papi-2", "papi-3"} {
		if err := s.SaveRun(ctx, RunRow{RunID: id, Caller: CallerFleet, Agent: "papi", Status: "running", StartedAt: &at, Record: []byte(`{"run_id":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	// They finish out of order: the history is the order of the ends.
	for _, id := range []string{"papi-2", "papi-1"} {
		if err := s.SaveRun(ctx, RunRow{RunID: id, Caller: CallerFleet, Agent: "papi", Status: "completed", Finished: true,
			Record: []byte(`{"run_id":"` + id + `","outcome":"success"}`), Summary: []byte(`{"id":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	// Saving a finished run again keeps its place and its summary.
	if err := s.SaveRun(ctx, RunRow{RunID: "papi-2", Caller: CallerFleet, Agent: "papi", Status: "completed", Finished: true, Record: []byte(`{"again":true}`)}); err != nil {
		t.Fatal(err)
	}
	hist, err := s.Runs(ctx, RunFilter{Caller: CallerFleet, Agent: "papi", Finished: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].RunID != "papi-1" || hist[1].RunID != "papi-2" || string(hist[1].Summary) != `{"id":"papi-2"}` || string(hist[1].Record) != `{"again":true}` {
		t.Fatalf("history: %+v", hist)
	}
	r3, err := s.Run(ctx, "papi-3")
	if err != nil || r3.Finished || r3.StartedAt == nil || !r3.StartedAt.Equal(at) {
		t.Fatalf("running run: %+v %v", r3, err)
	}
	if _, err := s.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}

func TestArchivedRunsLeaveTheHistoryAndFreeTheirIDs(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	save := func(rec string) {
		t.Helper()
		if err := s.SaveRun(ctx, RunRow{RunID: "papi-1", Caller: CallerFleet, Agent: "papi", Finished: true, Record: []byte(rec)}); err != nil {
			t.Fatal(err)
		}
	}
	save(`{"first":true}`)
	if n, err := s.ArchiveRuns(ctx, CallerFleet, "papi", "papi-20261120T100000Z"); err != nil || n != 1 {
		t.Fatalf("archive: %d %v", n, err)
	}
	if hist, _ := s.Runs(ctx, RunFilter{Caller: CallerFleet, Agent: "papi", Finished: true}); len(hist) != 0 {
		t.Fatalf("an archived run is still in the history: %+v", hist)
	}
	save(`{"second":true}`) // a new agent papi, its run papi-1
	cur, _ := s.Run(ctx, "papi-1")
	old, _ := s.Runs(ctx, RunFilter{Archived: "papi-20261120T100000Z"})
	if string(cur.Record) != `{"second":true}` || len(old) != 1 || string(old[0].Record) != `{"first":true}` {
		t.Fatalf("current %+v, archived %+v", cur, old)
	}
}

// Processes importing the same source at once import it once.
func TestImportRunsOnce(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if err := s.SaveRun(ctx, RunRow{RunID: "papi-2", Caller: CallerFleet, Agent: "papi", Record: []byte(`{"saved":"since"}`)}); err != nil {
		t.Fatal(err)
	}
	rows := []RunRow{
		{RunID: "papi-1", Caller: CallerFleet, Agent: "papi", Finished: true, Record: []byte(`{"n":1}`), Summary: []byte(`{"id":"papi-1"}`)},
		{RunID: "papi-2", Caller: CallerFleet, Agent: "papi", Finished: true, Record: []byte(`{"n":2}`)},
		{RunID: "sony-1", Caller: CallerFleet, Agent: "sony", Finished: true, Archived: "sony-old", Record: []byte(`{"n":3}`)},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total, reads := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.ImportRuns(ctx, "fleet", func() ([]RunRow, error) {
				mu.Lock()
				reads++
				mu.Unlock()
				return rows, nil
			})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 2 {
		t.Fatalf("imported %d runs in all, want 2 (papi-2 was saved since)", total)
	}
	p2, _ := s.Run(ctx, "papi-2")
	var rec map[string]string
	json.Unmarshal(p2.Record, &rec)
	if rec["saved"] != "since" {
		t.Errorf("the import replaced a run saved since: %s", p2.Record)
	}
	if n, _ := s.ImportRuns(ctx, "fleet", func() ([]RunRow, error) { t.Error("read again after the import"); return nil, nil }); n != 0 {
		t.Errorf("a second import imported %d", n)
	}
	if old, _ := s.Runs(ctx, RunFilter{Archived: "sony-old"}); len(old) != 1 || !old[0].Finished {
		t.Errorf("archived run: %+v", old)
	}
}
