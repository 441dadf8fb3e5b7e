package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A diff longer than MaxDiffBytes is kept whole in the session's folder,
// its head (cut after a line) in the row with the whole's size and hash;
// what is read back is checked, and the session's purge takes the file.
func TestALongDiffIsKeptWholeBesideItsHead(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := newStore(t, Options{Now: func() time.Time { return now }})
	ses := activeSession(t, s, "ana")
	diff := "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n" + strings.Repeat("-old line é\n+new line é\n", MaxDiffBytes/20)
	r, err := s.RaiseRequest(ctx, NewRequest{SessionID: ses.ID, Kind: KindEdit, Tool: "Edit", File: "f", Diff: diff,
		ToolInput: strings.Repeat("é", MaxToolInputBytes), Title: "Edit f", Risk: RiskLow})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(diff))
	if !r.DiffCut() || r.DiffBytes != int64(len(diff)) || r.DiffSHA256 != hex.EncodeToString(sum[:]) ||
		len(r.Diff) > MaxDiffBytes || !strings.HasPrefix(diff, r.Diff) || !strings.HasSuffix(r.Diff, "\n") {
		t.Fatalf("row keeps %d bytes (cut %v, whole %d bytes, sha %s)", len(r.Diff), r.DiffCut(), r.DiffBytes, r.DiffSHA256)
	}
	if len(r.ToolInput) > MaxToolInputBytes || !strings.Contains(r.ToolInput, "[cut: ") || !utf8Valid(r.ToolInput) {
		t.Fatalf("tool input kept: %d bytes, ends %q", len(r.ToolInput), r.ToolInput[len(r.ToolInput)-40:])
	}
	f, err := s.WholeDiff(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != diff {
		t.Fatalf("whole diff read back: %d bytes, want %d", len(b), len(diff))
	}
	// A short diff stays whole in the row, with no file.
	if _, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	short, err := s.RaiseRequest(ctx, NewRequest{SessionID: ses.ID, Kind: KindEdit, Tool: "Edit", File: "f", Diff: "-a\n+b\n", Title: "Edit f", Risk: RiskLow})
	if err != nil || short.DiffCut() || short.Diff != "-a\n+b\n" {
		t.Fatalf("a short diff: %+v, %v", short, err)
	}

	// A file changed on disk is refused, not shown.
	path := filepath.Join(s.SessionDir(ses.ID), filepath.Base(r.DiffFile))
	if err := os.WriteFile(path, []byte(strings.Replace(diff, "new line", "rm -rf ~!", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := s.WholeDiff(r); err == nil || !strings.Contains(err.Error(), "the request recorded") {
		if f != nil {
			f.Close()
		}
		t.Fatalf("a changed whole diff was opened: %v", err)
	}

	// The purge of the ended session takes its folder.
	if _, err := s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionTerminated, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(48 * time.Hour)
	if _, err := s.Purge(ctx, PurgeOptions{Before: now.Add(-time.Hour), By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.SessionDir(ses.ID)); !os.IsNotExist(err) {
		t.Fatalf("the purged session's folder is still there: %v", err)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
