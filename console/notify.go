package console

import (
	"context"
	"fmt"
	"strings"
)

// waitItem is one thing that waits for a person, as the page's system
// notification shows it: Key is its card's element ID on the inbox page
// (the notification opens /inbox#Key).
type waitItem struct {
	Key   string `json:"key"`
	What  string `json:"what"`
	Title string `json:"title"`
}

// waiting lists what waits for a person, each kind oldest first.
func (s *Server) waiting(ctx context.Context) ([]waitItem, error) {
	in, err := s.svc.Inbox(ctx)
	if err != nil {
		return nil, err
	}
	items := make([]waitItem, 0, in.Len())
	for _, r := range in.Requests {
		items = append(items, waitItem{Key: fmt.Sprintf("req-%d", r.ID), What: fmt.Sprintf("request %d (risk %s)", r.ID, r.Risk), Title: firstLine(r.Title)})
	}
	for _, p := range in.Prompts {
		items = append(items, waitItem{Key: fmt.Sprintf("prompt-%d", p.ID), What: fmt.Sprintf("prompt p%d: the turn ended", p.ID), Title: firstLine(p.Text)})
	}
	for _, a := range in.Alerts {
		items = append(items, waitItem{Key: fmt.Sprintf("alert-%d", a.ID), What: fmt.Sprintf("stall alert s%d", a.ID), Title: "session " + fmt.Sprint(a.SessionID) + ": the agent has been silent"})
	}
	return items, nil
}

// waitingKeys is the page's first list of what waits (data-keys on the
// badge): the notifications are for what comes after it.
func waitingKeys(items []waitItem) string {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key
	}
	return strings.Join(keys, " ")
}

// firstLine is text on one line, at most 200 characters (a notification's
// body is short).
func firstLine(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}
