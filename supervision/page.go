package supervision

import (
	"cmp"
	"fmt"
	"slices"
)

// InboxPageSize is how many requests a page of the inbox lists unless a
// person asks for another count. Issue 27: the inbox listed every pending
// request at once, so a flood of requests made the terminal's list, its
// JSON and the console's page as long as the flood.
const InboxPageSize = 50

// InboxPage is one page of an inbox: at most a page size of its requests,
// in the order of their IDs, after a cursor. The continuation prompts, the
// stall alerts and the hosts' states (one per session or host, not a
// flood) are on the first page only, so that following the cursor lists
// every item once.
type InboxPage struct {
	Inbox
	// Total counts the pending requests of every page.
	Total int
	// More counts the requests after this page; Next is the cursor of the
	// next page (the ID of this page's last request; 0 when More is 0).
	More int
	Next int64
}

// Page is the page of in's requests whose IDs are after `after` (0: the
// first page), at most limit of them (0: all). A cursor stays good when
// its request is decided meanwhile: the page starts at the next ID.
func (in Inbox) Page(after int64, limit int) InboxPage {
	reqs := slices.Clone(in.Requests)
	slices.SortStableFunc(reqs, func(a, b PendingView) int { return cmp.Compare(a.ID, b.ID) })
	p := InboxPage{Total: len(reqs)}
	if after == 0 {
		p.Inbox = in
	}
	start, _ := slices.BinarySearchFunc(reqs, after, func(r PendingView, id int64) int { return cmp.Compare(r.ID, id+1) })
	reqs = reqs[start:]
	if limit > 0 && len(reqs) > limit {
		p.More, p.Next = len(reqs)-limit, reqs[limit-1].ID
		reqs = reqs[:limit]
	}
	p.Requests = reqs
	return p
}

// NextCommand is the command that lists the page after p ("" when p is
// the last), with limit when it is not the default.
func (p InboxPage) NextCommand(limit int) string {
	if p.More == 0 {
		return ""
	}
	cmd := fmt.Sprintf("agentinfra inbox --after %d", p.Next)
	if limit != InboxPageSize {
		cmd += fmt.Sprintf(" --limit %d", limit)
	}
	return cmd
}
