package task

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
)

// With rows ISSUE and ISSUE_003, the folder ISSUE_003_login is ISSUE_003's:
// no lookup for ISSUE (show, the status log, scaffold, archive) takes it.
func TestFolderLookupOfAnIDThatPrefixesAnother(t *testing.T) {
	ctx := context.Background()
	ws := newWS(t)
	writeFile(t, ws.MatrixPath(), matrix.CanonicalHeader+
		"| ISSUE | TODO | P2 | med | coder |  |  | the short one | 2026-01-01 | 2026-01-01 |\n"+
		"| ISSUE_003 | DONE | P2 | med | coder |  |  | the long one | 2026-01-01 | 2026-01-01 |\n")
	long := filepath.Join(ws.TasksDir(), "ISSUE_003_login")
	writeFile(t, filepath.Join(long, "README.md"), "# ISSUE_003\n\n## Status log\n")
	d := matrix.Parse([]byte(readFile(t, ws.MatrixPath())))

	if dir, _ := Folder(ws, d, "ISSUE"); dir != "" {
		t.Errorf("Folder(ISSUE) = %s, want none", dir)
	}
	if dir, _ := Folder(ws, d, "ISSUE_003"); dir != long {
		t.Errorf("Folder(ISSUE_003) = %s, want %s", dir, long)
	}
	// Without a parsed matrix the file settles it, and a slug with '_' in
	// it is still the task's own.
	if dir, _ := Folder(ws, nil, "ISSUE"); dir != "" {
		t.Errorf("Folder(ISSUE) without the doc = %s, want none", dir)
	}
	own := filepath.Join(ws.TasksDir(), "ISSUE_003_fix_login_bug")
	writeFile(t, filepath.Join(own, "README.md"), "# ISSUE_003\n")
	if got := Folders(ws, nil, "ISSUE_003", false); strings.Join(got, ",") != own+","+long {
		t.Errorf("Folders(ISSUE_003) without the doc = %v", got)
	}
	os.RemoveAll(own)
	if info, err := ShowTask(ctx, ws, "ISSUE"); err != nil || info.Dir != "" {
		t.Errorf("show ISSUE: %+v, %v", info, err)
	}
	if r, err := SetStatus(ctx, ws, "ISSUE", "IN_PROGRESS", now); err != nil || r.LogFile != "" {
		t.Errorf("status of ISSUE: %+v, %v", r, err)
	}
	if b := readFile(t, filepath.Join(long, "README.md")); strings.Contains(b, "→") {
		t.Errorf("ISSUE's status change was logged in ISSUE_003's README:\n%s", b)
	}
	// ISSUE has no folder of its own, so scaffold makes one.
	if _, dir, err := ScaffoldTask(ctx, ws, "ISSUE", ScaffoldOptions{}, now); err != nil || filepath.Base(dir) != "ISSUE_the_short_one" {
		t.Errorf("scaffold ISSUE: %s, %v", dir, err)
	}
	// Archiving ISSUE_003 moves its folder only.
	moved, err := Archive(ctx, ws, "ISSUE_003")
	if err != nil || len(moved) != 1 || moved[0].From != long {
		t.Errorf("archive ISSUE_003: %+v, %v", moved, err)
	}
	if _, err := os.Stat(filepath.Join(ws.TasksDir(), "ISSUE_the_short_one")); err != nil {
		t.Errorf("ISSUE's folder moved too: %v", err)
	}
}
