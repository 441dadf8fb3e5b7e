package console_test

// Issue 27, item 6: the console's inbox page listed every pending request
// at once (a flood of requests, one page as long as the flood). It shows
// a page of 50 with a link to the next; following the links reaches every
// request once, and a page's size is bounded by its 50 cards.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

func TestConsoleInboxPagesAFloodOfRequests(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ck := w.login(t)
	const n, diffBytes = 120, 16 << 10
	diff := "+" + strings.Repeat("x", diffBytes-2) + "\n"
	var all []int64
	for i := range n {
		ses := w.activeSession(t, "claude", fmt.Sprintf("a%d", i), "")
		r, err := w.st.RaiseRequest(context.Background(), store.NewRequest{SessionID: ses.ID, Kind: store.KindEdit, Tool: "Write",
			File: fmt.Sprintf("%s/f%d.txt", w.ws.Root, i), Diff: diff, Title: fmt.Sprintf("Write f%d.txt", i), Risk: store.RiskHigh})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r.ID)
	}
	card := regexp.MustCompile(`<article class="card req [^"]*" data-key="(\d+)"`)
	more := regexp.MustCompile(`<a href="/inbox\?after=(\d+)">(\d+) more pending requests</a>`)
	seen := map[string]int{}
	path := "/inbox"
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages of 120 requests")
		}
		_, page := get(t, noRedirect(), w.base+path, ck, nil)
		cards := card.FindAllStringSubmatch(page, -1)
		if want := min(supervision.InboxPageSize, n-len(seen)); len(cards) != want {
			t.Fatalf("%s shows %d requests, want %d", path, len(cards), want)
		}
		// The page is its cards: no more than twice a page's diffs
		// (the 120 cards' diffs alone are more).
		if limit := 2 * supervision.InboxPageSize * diffBytes; len(page) > limit {
			t.Fatalf("%s is %d bytes, more than %d", path, len(page), limit)
		}
		for _, c := range cards {
			seen[c[1]]++
		}
		m := more.FindStringSubmatch(page)
		if m == nil {
			break
		}
		if m[2] != fmt.Sprint(n-len(seen)) {
			t.Fatalf("%s says %s more wait, want %d", path, m[2], n-len(seen))
		}
		// The live list of the next page is the same page.
		path = "/inbox?after=" + m[1]
		if !strings.Contains(page, "/inbox/list") {
			t.Fatalf("%s has no live list", path)
		}
	}
	for _, id := range all {
		if seen[fmt.Sprint(id)] != 1 {
			t.Fatalf("request %d shown %d times over the pages", id, seen[fmt.Sprint(id)])
		}
	}
	_, list := get(t, noRedirect(), w.base+"/inbox/list?after="+fmt.Sprint(all[49]), ck, nil)
	if cards := card.FindAllString(list, -1); len(cards) != supervision.InboxPageSize || !strings.Contains(list, fmt.Sprintf(`data-key="%d"`, all[50])) {
		t.Fatalf("the live list of the second page shows %d requests", len(cards))
	}
}
