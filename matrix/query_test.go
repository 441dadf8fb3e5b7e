package matrix

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

const querySrc = `# M

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Owner |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|-------|
| 00000a | TODO | P2 | med | coder | go-testing | @coder | Add retry to fetcher | 2026-03-01 | 2026-03-05 | ana |
| 00000b | DONE | P1 | easy | reviewer | code-review | @reviewer @coder | Review the lock | 2026-01-10 | 2026-04-01 | bo |
| 00000c | IN_PROGRESS | P3 | hard | coder | go-testing, matrix-editing | @coder | Parser FETCHER cache | 2026-02-01 | 2026-02-02 | |
| 00000d | TODO | P1 | med | oracle |  |  | Decide retry policy | 2026-03-01 | 2026-03-01 | zed |
| 00000e | BLOCKED | P4 | easy | explorer |  | @explorer | Map the store | 2025-12-31 | 2026-03-05 | |
`

func ids(ts []Task) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID[4:])
	}
	return strings.Join(out, ",")
}

func TestQueryApply(t *testing.T) {
	tasks := Parse([]byte(querySrc)).Tasks()
	if len(tasks) != 5 {
		t.Fatalf("parsed %d tasks", len(tasks))
	}
	for _, c := range []struct {
		name string
		q    Query
		want string
	}{
		{"all", Query{}, "0a,0b,0c,0d,0e"},
		{"status", Query{Status: []string{"TODO"}}, "0a,0d"},
		{"status any case and alias", Query{Status: []string{"todo", "in progress"}}, "0a,0c,0d"},
		{"status comma list", Query{Status: []string{"DONE,blocked"}}, "0b,0e"},
		{"priority", Query{Priority: []string{"p1"}}, "0b,0d"},
		{"priority bare digit", Query{Priority: []string{"1", "4"}}, "0b,0d,0e"},
		{"mode", Query{Mode: "CODER"}, "0a,0c"},
		{"agent without @", Query{Agent: "coder"}, "0a,0b,0c"},
		{"agent with @", Query{Agent: "@reviewer"}, "0b"},
		{"skill", Query{Skill: "matrix-editing"}, "0c"},
		{"text any case", Query{Text: "fetcher"}, "0a,0c"},
		{"text all words", Query{Text: "retry policy"}, "0d"},
		{"text matches ID", Query{Text: "00000e"}, "0e"},
		{"text matches extra column", Query{Text: "zed"}, "0d"},
		{"combined", Query{Status: []string{"TODO", "IN_PROGRESS"}, Mode: "coder", Skill: "go-testing"}, "0a,0c"},
		{"no match", Query{Status: []string{"REVIEW"}}, ""},
		{"unknown status matches nothing", Query{Status: []string{"PAUSED"}}, ""},
		{"sort priority, ties in file order", Query{Sort: "priority"}, "0b,0d,0a,0c,0e"},
		{"sort -priority", Query{Sort: "-priority"}, "0e,0c,0a,0b,0d"},
		{"sort created oldest first", Query{Sort: "created"}, "0e,0b,0c,0a,0d"},
		{"sort updated newest first", Query{Sort: "updated"}, "0b,0a,0e,0d,0c"},
		{"sort -file", Query{Sort: "-file"}, "0e,0d,0c,0b,0a"},
		{"limit after sort", Query{Sort: "priority", Limit: 2}, "0b,0d"},
		{"limit above count", Query{Limit: 50, Status: []string{"DONE"}}, "0b"},
	} {
		got := c.q.Apply(tasks)
		if ids(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, ids(got), c.want)
		}
		if got == nil {
			t.Errorf("%s: Apply returned nil, want an empty slice", c.name)
		}
	}
	// Apply does not reorder its input.
	if ids(tasks) != "0a,0b,0c,0d,0e" {
		t.Errorf("input reordered: %s", ids(tasks))
	}
	if !(Query{Agent: "coder"}).Match(tasks[1]) || (Query{Agent: "coder"}).Match(tasks[3]) {
		t.Error("Match disagrees with Apply")
	}
}

func TestQueryNormalize(t *testing.T) {
	q, err := Query{Status: []string{"todo,in-progress", "TODO"}, Priority: []string{"2"}, Agent: "coder", Sort: " Priority "}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Status, []string{"TODO", "IN_PROGRESS"}) || !slices.Equal(q.Priority, []string{"P2"}) || q.Agent != "@coder" || q.Sort != "priority" {
		t.Errorf("normalized = %+v", q)
	}
	for _, c := range []struct {
		q    Query
		want string
	}{
		{Query{Status: []string{"PAUSED"}}, "TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE"},
		{Query{Priority: []string{"P9"}}, "P1"},
		{Query{Sort: "size"}, "file, priority, created, updated"},
		{Query{Limit: -1}, "limit"},
		{Query{Agent: "bad agent"}, "@mention"},
	} {
		_, err := c.q.Normalize()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Normalize(%+v) = %v, want ErrInvalid mentioning %q", c.q, err, c.want)
		}
	}
}

func BenchmarkQueryApply(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		tasks := Parse(testmatrix.Generate(n, 1)).Tasks()
		b.Run(strconv.Itoa(n)+"/status", func(b *testing.B) {
			q := Query{Status: []string{"TODO"}}
			for b.Loop() {
				q.Apply(tasks)
			}
		})
		b.Run(strconv.Itoa(n)+"/text+sort", func(b *testing.B) {
			q := Query{Text: "retry fetcher", Sort: "priority"}
			for b.Loop() {
				q.Apply(tasks)
			}
		})
		b.Run(strconv.Itoa(n)+"/parse+status", func(b *testing.B) {
			src := testmatrix.Generate(n, 1)
			q := Query{Status: []string{"TODO"}}
			for b.Loop() {
				q.Apply(Parse(src).Tasks())
			}
		})
	}
}
