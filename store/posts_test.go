package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestPostsAndCursors(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ses, _ := s.CreateSession(ctx, NewSession{Owner: "ana", Mode: ModeRemote, Channel: "C1"})
	if ses.Channel != "C1" {
		t.Fatalf("channel: %+v", ses)
	}
	if _, err := s.PostOf(ctx, SurfaceSlack, ItemSession, ses.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no post yet: %v", err)
	}
	s.PutPost(ctx, Post{Surface: SurfaceSlack, ItemKind: ItemSession, ItemID: ses.ID, SessionID: ses.ID, Channel: "C1", TS: "1.1"})
	if id, err := s.SessionOfThread(ctx, SurfaceSlack, "C1", "1.1"); err != nil || id != ses.ID {
		t.Fatalf("thread: %d %v", id, err)
	}
	s.PutPost(ctx, Post{Surface: SurfaceSlack, ItemKind: ItemRequest, ItemID: 7, SessionID: ses.ID, Channel: "C1", TS: "1.2"})
	// One of two updaters writes the final text.
	won1, _ := s.SetPostState(ctx, SurfaceSlack, ItemRequest, 7, "", "final")
	won2, _ := s.SetPostState(ctx, SurfaceSlack, ItemRequest, 7, "", "final")
	if !won1 || won2 {
		t.Fatalf("set state: %v %v", won1, won2)
	}
	if _, ok, _ := s.Cursor(ctx, SurfaceSlack); ok {
		t.Fatal("a cursor before any was set")
	}
	last, _ := s.LastAuditSeq(ctx)
	s.SetCursor(ctx, SurfaceSlack, last-1)
	if c, ok, _ := s.Cursor(ctx, SurfaceSlack); !ok || c != last-1 {
		t.Fatalf("cursor %d %v", c, ok)
	}
	evs, _ := s.AuditAfter(ctx, last-1, 10)
	if len(evs) != 1 || evs[0].Seq != last {
		t.Fatalf("after: %+v", evs)
	}
}
