package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/task"
	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDelay bounds how long a burst of events can postpone a notification.
const maxDelay = 250 * time.Millisecond

// watcher turns file events under .agent/ into notifications/resources/updated.
// It watches directories, not files: the matrix is replaced by rename on every
// write (by this server, the CLI or an editor), which a file watch would lose.
type watcher struct {
	s    *Server
	fw   *fsnotify.Watcher
	done chan struct{}
	stop context.CancelFunc

	mu        sync.Mutex
	matrixKey fileKey
	taskFP    map[string]string // task ID → fingerprint last notified
	dirs      map[string]bool   // watched directories
}

// StartWatching starts the watcher (once); it stops when ctx is done or at Close.
func (s *Server) StartWatching(ctx context.Context) error {
	s.watchOnce.Do(func() {
		w, err := newWatcher(ctx, s)
		if err != nil {
			s.watchErr = err
			return
		}
		s.watch = w
	})
	return s.watchErr
}

func newWatcher(ctx context.Context, s *Server) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.ws.AgentDir(), err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{
		s: s, fw: fw, stop: cancel,
		done:   make(chan struct{}),
		taskFP: map[string]string{},
		dirs:   map[string]bool{},
	}
	if err := w.add(s.ws.AgentDir()); err != nil {
		fw.Close()
		cancel()
		return nil, fmt.Errorf("watch %s: %w", s.ws.AgentDir(), err)
	}
	w.add(s.ws.TasksDir()) // may not exist yet; re-added on the next event
	w.matrixKey, _ = statKey(s.ws.MatrixPath())
	go w.loop(ctx)
	return w, nil
}

func (w *watcher) add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dir] {
		return nil
	}
	if err := w.fw.Add(dir); err != nil {
		return err
	}
	w.dirs[dir] = true
	return nil
}

// Close stops the watcher and waits for it.
func (w *watcher) Close() error {
	w.stop()
	<-w.done
	return nil
}

func (w *watcher) loop(ctx context.Context) {
	defer close(w.done)
	defer w.fw.Close()
	var (
		timer    *time.Timer
		timerC   <-chan time.Time
		first    time.Time
		debounce = w.s.opts.Debounce
	)
	schedule := func() {
		now := time.Now()
		if timer == nil {
			first = now
			timer = time.NewTimer(debounce)
			timerC = timer.C
			return
		}
		// Trailing debounce, but never later than maxDelay after the first event.
		d := min(debounce, maxDelay-now.Sub(first))
		if d < 0 {
			d = 0
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(d)
	}
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if strings.HasSuffix(ev.Name, ".lock") {
				continue // the store's lock sidecar changes nothing
			}
			schedule()
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.s.log.Warn("watcher error; re-checking", "error", err)
			schedule()
		case <-timerC:
			timer, timerC = nil, nil
			w.check(ctx)
		}
	}
}

// check compares what subscribers see with the files and notifies the changes.
func (w *watcher) check(ctx context.Context) {
	s := w.s
	w.add(s.ws.TasksDir())
	k, err := statKey(s.ws.MatrixPath())
	if err != nil {
		s.log.Warn("stat matrix", "error", err)
	}
	w.mu.Lock()
	changed := k != w.matrixKey
	w.matrixKey = k
	w.mu.Unlock()
	if changed {
		s.log.Debug("matrix changed; notifying subscribers")
		s.notify(ctx, MatrixURI)
	}
	for _, id := range s.subscribedTasks() {
		fp, dir := s.taskFingerprint(ctx, id)
		if dir != "" {
			w.add(dir)
		}
		w.mu.Lock()
		old, seen := w.taskFP[id]
		w.taskFP[id] = fp
		w.mu.Unlock()
		if seen && old != fp {
			s.notify(ctx, TaskURIPrefix+id)
		}
	}
}

// baseline records a task's current state when it gets its first subscriber,
// so the first change after subscribing is notified.
func (w *watcher) baseline(ctx context.Context, id string) {
	fp, dir := w.s.taskFingerprint(ctx, id)
	if dir != "" {
		w.add(dir)
	}
	w.mu.Lock()
	if _, ok := w.taskFP[id]; !ok {
		w.taskFP[id] = fp
	}
	w.mu.Unlock()
}

// taskFingerprint summarizes a task's row, folder and README.
func (s *Server) taskFingerprint(ctx context.Context, id string) (fp, dir string) {
	var b strings.Builder
	d, err := s.doc(ctx)
	if err == nil {
		if t, ok := d.Task(id); ok {
			fmt.Fprintf(&b, "%q", fmt.Sprint(t.Status, t.Priority, t.Difficulty, t.Mode, t.Skills, t.Agents, t.Description, t.Created, t.Updated, t.Extra))
		}
	} else {
		d = nil
	}
	dir, archived := task.Folder(s.ws, d, id)
	fmt.Fprintf(&b, "|%s|%v", dir, archived)
	if dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
			fmt.Fprintf(&b, "|%d|%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String(), dir
}

func (s *Server) notify(ctx context.Context, uri string) {
	if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		s.log.Warn("resources/updated", "uri", uri, "error", err)
	}
}
