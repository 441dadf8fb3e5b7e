package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/fswatch"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// MatrixWatcher brings the changes other processes make to a workspace's
// matrix and task folders (the CLI, a fleet supervisor, a person's editor)
// onto a bus: MatrixChanged when the matrix file changed at all, and
// TaskChanged (Source "watch", no actor: a file does not say who wrote it)
// for each row that changed, appeared or went, and for the README of each
// task it follows. A change this process made is published by the write
// itself and seen again here.
type MatrixWatcher struct {
	ws     *workspace.Workspace
	bus    *events.Bus
	fw     *fswatch.Watcher
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	matrix   string            // the matrix file's stamp
	rows     map[string]string // task ID → the row's fingerprint
	followed map[string]string // task ID → its folder's stamp
}

// WatchMatrix starts watching ws's matrix (and .agent/tasks/) for bus;
// debounce gathers a burst of writes (0 = 20 ms). Close it when done.
func WatchMatrix(ctx context.Context, ws *workspace.Workspace, bus *events.Bus, debounce time.Duration) (*MatrixWatcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	fw, err := fswatch.Watch(ctx, fswatch.Options{Debounce: debounce, Skip: func(p string) bool { return strings.HasSuffix(p, ".lock") }}, ws.AgentDir())
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s: %w", ws.AgentDir(), err)
	}
	if err := fw.Add(ws.AgentDir()); err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s: %w", ws.AgentDir(), err)
	}
	fw.Add(ws.TasksDir()) // may not exist yet: added again on the next change
	w := &MatrixWatcher{ws: ws, bus: bus, fw: fw, cancel: cancel, done: make(chan struct{}), followed: map[string]string{}}
	w.matrix = stampOf(ws.MatrixPath())
	w.rows = w.fingerprints(ctx)
	go w.loop(ctx)
	return w, nil
}

// Follow watches task id's folder too: a change of its README is a
// TaskChanged with the field "readme". Following a task twice is once.
func (w *MatrixWatcher) Follow(ctx context.Context, id string) {
	dir, st, _ := w.folderStamp(ctx, id)
	if dir != "" {
		w.fw.Add(dir)
	}
	w.mu.Lock()
	if _, ok := w.followed[id]; !ok {
		w.followed[id] = st
	}
	w.mu.Unlock()
}

// Close stops the watcher and waits for it.
func (w *MatrixWatcher) Close() {
	w.cancel()
	<-w.done
}

func (w *MatrixWatcher) loop(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.fw.C:
			w.check(ctx)
		}
	}
}

// check compares the files with what was last seen and publishes the
// differences.
func (w *MatrixWatcher) check(ctx context.Context) {
	w.fw.Add(w.ws.TasksDir())
	root := w.ws.Root
	if st := stampOf(w.ws.MatrixPath()); st != w.matrix {
		w.matrix = st
		w.bus.Publish(events.Event{Kind: events.MatrixChanged, Root: root, Source: "watch"})
		rows := w.fingerprints(ctx)
		for id, fp := range rows {
			if old, ok := w.rows[id]; !ok || old != fp {
				w.bus.Publish(events.Event{Kind: events.TaskChanged, Root: root, TaskID: id, Fields: []string{"row"}, Source: "watch"})
			}
		}
		for id := range w.rows {
			if _, ok := rows[id]; !ok {
				w.bus.Publish(events.Event{Kind: events.TaskChanged, Root: root, TaskID: id, Fields: []string{"removed"}, Source: "watch"})
			}
		}
		if rows != nil {
			w.rows = rows
		}
	}
	w.mu.Lock()
	ids := make([]string, 0, len(w.followed))
	for id := range w.followed {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	for _, id := range ids {
		dir, st, ok := w.folderStamp(ctx, id)
		if !ok {
			// The matrix could not be read (a writer in the middle of an
			// in-place save): without it the folder cannot be told apart
			// from an archived one, so keep what was seen and let the
			// writer's next event try again instead of publishing a change
			// that did not happen.
			continue
		}
		if dir != "" {
			w.fw.Add(dir)
		}
		w.mu.Lock()
		changed := w.followed[id] != st
		w.followed[id] = st
		w.mu.Unlock()
		if changed {
			w.bus.Publish(events.Event{Kind: events.TaskChanged, Root: root, TaskID: id, Fields: []string{"readme"}, Source: "watch"})
		}
	}
}

// fingerprints reads the matrix and summarizes each row (nil when it
// cannot be read: the next change tries again).
func (w *MatrixWatcher) fingerprints(ctx context.Context) map[string]string {
	s, err := OpenStore(w.ws)
	if err != nil {
		return nil
	}
	d, err := s.Load(ctx)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, t := range d.Tasks() {
		out[t.ID] = fingerprint(t)
	}
	return out
}

func fingerprint(t matrix.Task) string {
	return fmt.Sprintf("%q", fmt.Sprint(t.Status, t.Priority, t.Difficulty, t.Mode, t.Skills, t.Agents, t.Description, t.Created, t.Updated, t.Extra))
}

// folderStamp is task id's folder and its README's stamp; ok is false when
// the matrix could not be read.
func (w *MatrixWatcher) folderStamp(ctx context.Context, id string) (dir, st string, ok bool) {
	var d *matrix.Doc
	if s, err := OpenStore(w.ws); err == nil {
		d, err = s.Load(ctx)
		ok = err == nil
	}
	dir, archived := Folder(w.ws, d, id)
	st = fmt.Sprintf("%s|%v", dir, archived)
	if dir != "" {
		st += "|" + stampOf(filepath.Join(dir, "README.md"))
	}
	return dir, st, ok
}

// stampOf says when a file changed: size, modification time, inode ("" when
// it does not exist).
func stampOf(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d|%d|%v", fi.Size(), fi.ModTime().UnixNano(), fileID(fi))
}
