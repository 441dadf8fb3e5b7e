package full

// Issue 27, item 6: the inbox listed every pending request at once — the
// terminal's list, its JSON and the console's page as long as a flood of
// requests. A page is 50 requests; following its cursor lists every
// request once.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// floodInbox gives dir's store n more pending requests, each of its own
// session of ana's (a session waits for one at a time), and says their IDs.
func floodInbox(t *testing.T, dir string, n int) []int64 {
	t.Helper()
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []int64
	ctx := context.Background()
	for i := range n {
		ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: "claude", Agent: fmt.Sprintf("a%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
		r, err := st.RaiseRequest(ctx, store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash",
			Command: fmt.Sprintf("touch f%d", i), Title: fmt.Sprintf("Run touch f%d", i), Risk: store.RiskLow, Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

func TestInboxPagesAFloodOfRequests(t *testing.T) {
	dir, first, _ := supervisedWorkspace(t)
	all := append([]int64{first}, floodInbox(t, dir, 119)...)

	// The text: 50 rows, how many more wait and the command of the next
	// page; following it lists every request once.
	seen := map[int64]int{}
	row := regexp.MustCompile(`(?m)^(\d+)\s+low\s`)
	next := regexp.MustCompile(`… (\d+) more pending request\(s\): agentinfra inbox --after (\d+)\n`)
	args := []string{"inbox"}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 3 pages of 120 requests")
		}
		code, out, errs := runCLI(t, dir, ana, args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		rows := row.FindAllStringSubmatch(out, -1)
		m := next.FindStringSubmatch(out)
		if want := min(50, len(all)-len(seen)); len(rows) != want {
			t.Fatalf("%v lists %d requests, want %d:\n%s", args, len(rows), want, out)
		}
		for _, r := range rows {
			var id int64
			fmt.Sscan(r[1], &id)
			seen[id]++
		}
		if m == nil {
			break
		}
		if want := fmt.Sprint(len(all) - len(seen)); m[1] != want {
			t.Fatalf("%v says %s more wait, want %s", args, m[1], want)
		}
		args = []string{"inbox", "--after", m[2]}
	}
	for _, id := range all {
		if seen[id] != 1 {
			t.Fatalf("request %d listed %d times over the pages", id, seen[id])
		}
	}

	// The JSON: the same page, then {"type": "more"} with the cursor. A
	// decision meanwhile does not break the cursor (the cursor's request
	// is decided here).
	seen = map[int64]int{}
	args = []string{"inbox", "--json", "--limit", "40"}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 3 JSON pages of 120 requests")
		}
		code, out, errs := runCLI(t, dir, ana, args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		var items []struct {
			Type    string `json:"type"`
			ID      int64  `json:"id"`
			Title   string `json:"title"`
			More    int    `json:"more"`
			Next    int64  `json:"next"`
			Command string `json:"command"`
		}
		if err := json.Unmarshal([]byte(out), &items); err != nil {
			t.Fatalf("%v: %v\n%.500s", args, err, out)
		}
		var more *int64
		n := 0
		for i, it := range items {
			switch it.Type {
			case "approval":
				if it.Title == "" {
					t.Fatalf("a request without its fields: %+v", it)
				}
				seen[it.ID]++
				n++
			case "more":
				if i != len(items)-1 || it.More != len(all)-len(seen) || it.Command != fmt.Sprintf("agentinfra inbox --after %d --limit 40", it.Next) {
					t.Fatalf("the more item %+v (%d seen)", it, len(seen))
				}
				more = &it.Next
			}
		}
		if n > 40 {
			t.Fatalf("%v lists %d requests", args, n)
		}
		if more == nil {
			break
		}
		if pages == 0 {
			if code, _, errs := runCLI(t, dir, ana, "approve", fmt.Sprint(*more)); code != 0 {
				t.Fatalf("approve %d: %s", *more, errs)
			}
		}
		args = []string{"inbox", "--json", "--limit", "40", "--after", fmt.Sprint(*more)}
	}
	for _, id := range all {
		if seen[id] != 1 {
			t.Fatalf("request %d listed %d times over the JSON pages", id, seen[id])
		}
	}

	// --limit 0 lists them all, with nothing more to say.
	code, out, _ := runCLI(t, dir, ana, "inbox", "--limit", "0")
	if rows := row.FindAllString(out, -1); code != 0 || len(rows) != len(all)-1 || strings.Contains(out, "more pending") {
		t.Fatalf("inbox --limit 0: %d rows\n%s", len(rows), out)
	}
	if code, _, errs := runCLI(t, dir, ana, "inbox", "--limit", "-1"); code != 2 || !strings.Contains(errs, "--limit") {
		t.Fatalf("inbox --limit -1: %d %s", code, errs)
	}
}
