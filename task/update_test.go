package task

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

func TestUpdateTask(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, dir, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	readme0 := readFile(t, filepath.Join(dir, "README.md"))
	matrix0 := readFile(t, ws.MatrixPath())
	later := now.Add(26 * time.Hour)
	res, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("in progress"), AddAgents: []string{"coder", "@coder"}}, later, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Changed, []string{"status", "agents"}) || res.Before.Status != "TODO" || res.After.Status != "IN_PROGRESS" {
		t.Errorf("result = %+v", res)
	}
	wantMatrix := strings.Replace(matrix0,
		"| 000001 | TODO | P2 | med | coder |  |  | Fix the lock | 2026-11-21 | 2026-11-21 |",
		"| 000001 | IN_PROGRESS | P2 | med | coder |  | @coder | Fix the lock | 2026-11-21 | 2026-11-22 |", 1)
	if got := readFile(t, ws.MatrixPath()); got != wantMatrix || got == matrix0 {
		t.Errorf("matrix after update:\n%s\nwant:\n%s", got, wantMatrix)
	}
	wantReadme := readme0 + "- 2026-11-22 16:05: status TODO → IN_PROGRESS\n"
	if got := readFile(t, filepath.Join(dir, "README.md")); got != wantReadme {
		t.Errorf("README after update:\n%s\nwant:\n%s", got, wantReadme)
	}
	if res.LogFile != filepath.Join(dir, "README.md") {
		t.Errorf("LogFile = %q", res.LogFile)
	}

	// No status change: no log line; the agent is not added twice.
	res, err = UpdateTask(ctx, ws, task.ID, matrix.Update{Priority: matrix.Str("1"), AddAgents: []string{"CODER"}}, later, UpdateOptions{})
	if err != nil || res.LogFile != "" || !slices.Equal(res.Changed, []string{"priority"}) || !slices.Equal(res.After.Agents, []string{"@coder"}) {
		t.Errorf("priority update: %+v %v", res, err)
	}
	if got := readFile(t, filepath.Join(dir, "README.md")); got != wantReadme {
		t.Errorf("README changed without a status change:\n%s", got)
	}

	// A README without a status section is left alone; the row still changes.
	writeFile(t, filepath.Join(dir, "README.md"), "# Notes\n\nnothing here\n")
	res, err = UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, later, UpdateOptions{})
	if err != nil || res.LogFile != "" || res.After.Status != "DONE" {
		t.Errorf("update without a log section: %+v %v", res, err)
	}
	if got := readFile(t, filepath.Join(dir, "README.md")); got != "# Notes\n\nnothing here\n" {
		t.Errorf("README without a log section changed: %q", got)
	}
}

func TestUpdateTaskErrorsChangeNothing(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, _, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		id   string
		u    matrix.Update
		is   error
		msg  string
	}{
		{"unknown id", "000011", matrix.Update{Status: matrix.Str("DONE")}, matrix.ErrNotFound, "did you mean 000001?"},
		{"unknown id far", "abcdef", matrix.Update{Status: matrix.Str("DONE")}, matrix.ErrNotFound, `no task "abcdef"`},
		{"bad status", task.ID, matrix.Update{Status: matrix.Str("PAUSED")}, matrix.ErrInvalid, "TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE"},
		{"bad difficulty", task.ID, matrix.Update{Difficulty: matrix.Str("extreme")}, matrix.ErrInvalid, "easy"},
		{"unknown skill via set", task.ID, matrix.Update{Set: map[string]string{"skills": "nope"}}, matrix.ErrRefused, `unknown skill "nope"`},
		{"unknown column", task.ID, matrix.Update{Set: map[string]string{"Owner": "ana"}}, matrix.ErrInvalid, `column "Owner"`},
		{"ID column", task.ID, matrix.Update{Set: map[string]string{"ID": "abcdef"}}, matrix.ErrInvalid, "cannot be changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := treehash.Guard(t, ws.Root)
			_, err := UpdateTask(ctx, ws, c.id, c.u, now, UpdateOptions{})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, c.is, c.msg)
			}
			check()
		})
	}
}

// If the matrix cannot be written, the README line is taken back.
func TestUpdateTaskReadmeRollback(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, _, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	testHookBeforeWrite = func() error { return errors.New("disk full") }
	t.Cleanup(func() { testHookBeforeWrite = nil })
	check := treehash.Guard(t, ws.Root)
	if _, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, now, UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failed write: %v", err)
	}
	check()
	testHookBeforeWrite = nil
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := UpdateTask(cctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, now, UpdateOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled update: %v", err)
	}
	check()
}

func TestAppendStatusLine(t *testing.T) {
	const line = "- NEW"
	for _, c := range []struct{ name, in, want string }{
		{"at end", "# T\n\n## Status log\n\n- a\n", "# T\n\n## Status log\n\n- a\n- NEW\n"},
		{"no final newline", "# T\n## Log\n- a", "# T\n## Log\n- a\n- NEW\n"},
		{"empty section", "# T\n## Status\n", "# T\n## Status\n\n- NEW\n"},
		{"middle section", "# T\n\n## History\n\n- a\n\n## Plan\n\n1. x\n", "# T\n\n## History\n\n- a\n- NEW\n\n## Plan\n\n1. x\n"},
		{"subsections stay inside", "## Log\n- a\n### detail\ntext\n## Next\n", "## Log\n- a\n### detail\ntext\n- NEW\n## Next\n"},
		{"title mentioning log is not the section", "# Fix the log parser\n\nbody\n\n## Status log\n- a\n\n## End\n", "# Fix the log parser\n\nbody\n\n## Status log\n- a\n- NEW\n\n## End\n"},
		{"heading in code fence ignored", "# T\n```\n## Log\n```\n## Status\n- a\n", "# T\n```\n## Log\n```\n## Status\n- a\n- NEW\n"},
		{"crlf", "# T\r\n## Log\r\n- a\r\n", "# T\r\n## Log\r\n- a\r\n- NEW\r\n"},
	} {
		got, ok := AppendStatusLine([]byte(c.in), line)
		if !ok || string(got) != c.want {
			t.Errorf("%s: got %q (ok %v), want %q", c.name, got, ok, c.want)
		}
	}
	for _, in := range []string{"", "# Title only\n", "no headings\n## Logistics-free plan?\n"[:12], "```\n## Log\n```\n", "#Log (not a heading)\n"} {
		if got, ok := AppendStatusLine([]byte(in), line); ok || string(got) != in {
			t.Errorf("%q: got %q ok %v, want unchanged", in, got, ok)
		}
	}
}
