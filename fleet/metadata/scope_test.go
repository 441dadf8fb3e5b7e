package metadata

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// listAndHidden is a listed field and one list_agents does not show, which
// hangs and leaves a mark when it runs.
const listAndHidden = "  pr:\n    desc: The PR.\n    meta: { include_in_list: true }\n    cmds: [echo 7]\n" +
	"  ci:\n    desc: CI status.\n    meta: {}\n    cmds: ['touch ci.ran; sleep 60']\n"

func TestListFieldsRunsOnlyTheListedFields(t *testing.T) {
	t.Parallel() // waits out a field's timeout or sleep, not the CPU
	dir := workspaceWith(t, listAndHidden)
	c := NewCollector(Options{TaskBinary: taskBin(t), Timeout: slowFieldTimeout})
	md := c.Collect(context.Background(), dir, ListFields)
	if val(md.Fields["pr"]) != "7" || md.Count() != 2 || !md.ListOnly {
		t.Fatalf("list: %+v", md)
	}
	if ci := md.Fields["ci"]; ci.Value != nil || ci.Error != nil || ci.Schema.Description != "CI status." {
		t.Fatalf("the unlisted field is counted and described, neither run nor failed: %+v", ci)
	}
	if _, err := os.Stat(filepath.Join(dir, "ci.ran")); err == nil {
		t.Fatal("the unlisted field ran for a list")
	}

	// show runs everything, even right after a cached list.
	md = c.Collect(context.Background(), dir, AllFields)
	if md.ListOnly || errOf(md.Fields["ci"]) == "" || val(md.Fields["pr"]) != "7" {
		t.Fatalf("show: %+v", md)
	}
	if _, err := os.Stat(filepath.Join(dir, "ci.ran")); err != nil {
		t.Fatal("show did not run the unlisted field")
	}
}

func TestAListAfterAShowComesFromTheCache(t *testing.T) {
	dir := workspaceWith(t, countingTasks)
	c := NewCollector(Options{TaskBinary: taskBin(t), CacheTTL: time.Minute})
	ctx := context.Background()
	if v := val(c.Collect(ctx, dir, AllFields).Fields["runs"]); v != "1" {
		t.Fatalf("show: %q", v)
	}
	md := c.Collect(ctx, dir, ListFields)
	if v := val(md.Fields["runs"]); v != "1" || md.ListOnly {
		t.Fatalf("list after show: %q (list only %v), want the cached full collection", v, md.ListOnly)
	}
}

func TestAListDoesNotWaitForAShowInFlight(t *testing.T) {
	t.Parallel() // waits out a field's timeout or sleep, not the CPU
	// pr counts its runs; ci hangs and leaves a mark when it starts.
	dir := workspaceWith(t, "  pr:\n    meta: { include_in_list: true }\n    cmds: ['echo run >> runs.log; wc -l < runs.log']\n"+
		"  ci:\n    meta: {}\n    cmds: ['touch ci.ran; sleep 60']\n")
	c := NewCollector(Options{TaskBinary: taskBin(t), Timeout: 6 * time.Second, CacheTTL: time.Minute})
	shown := make(chan Metadata, 1)
	go func() { shown <- c.Collect(context.Background(), dir, AllFields) }()
	poll.Eventually(t, func() bool { // the show's hanging field has started
		_, err := os.Stat(filepath.Join(dir, "ci.ran"))
		return err == nil
	}, "the show's field ci never started")
	first := c.Collect(context.Background(), dir, ListFields)
	if len(shown) != 0 || !first.ListOnly { // the list did not wait for the show's 6 s timeout
		t.Errorf("list beside a show: returned after the show (%v), %+v", len(shown) != 0, first)
	}
	// Lists polled meanwhile share the list's collection: pr does not run again.
	if again := c.Collect(context.Background(), dir, ListFields); val(again.Fields["pr"]) != val(first.Fields["pr"]) {
		t.Errorf("a second list ran pr again: %s then %s", val(first.Fields["pr"]), val(again.Fields["pr"]))
	}
	if md := <-shown; errOf(md.Fields["ci"]) == "" {
		t.Errorf("the show's hanging field: %+v", md.Fields["ci"])
	}
	// Once the show is done, its collection answers lists.
	if md := c.Collect(context.Background(), dir, ListFields); md.ListOnly {
		t.Errorf("a list after the show: %+v, want the show's full collection", md)
	}
}

func TestHandlerRunsOnlyTheListedFieldsWhenAsked(t *testing.T) {
	dir := workspaceWith(t, listAndHidden)
	srv := httptest.NewServer(Handler(NewCollector(Options{TaskBinary: taskBin(t), Timeout: slowFieldTimeout}), dir))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/?fields=list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Metadata
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !got.ListOnly || val(got.Fields["pr"]) != "7" || got.Fields["ci"].Error != nil || len(got.Names) != 2 {
		t.Fatalf("%+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "ci.ran")); err == nil {
		t.Fatal("the unlisted field ran for ?fields=list")
	}
}
