package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/task"
)

// maxDelay bounds how long a burst of events can postpone a notification.
const maxDelay = 250 * time.Millisecond

// watcher turns the bus's task and matrix events into
// notifications/resources/updated. Its sources: the task service's own
// writes in this process (the server's tools), and a task.MatrixWatcher
// that brings every other process's writes (the CLI, a supervisor, an
// editor) onto the bus.
type watcher struct {
	s    *Server
	mw   *task.MatrixWatcher
	sub  *events.Subscription
	done chan struct{}
	stop context.CancelFunc
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
	ctx, cancel := context.WithCancel(ctx)
	bus := s.bus()
	// Subscribed before the file watcher starts: no change falls in between.
	sub := bus.Subscribe(events.Filter{Root: s.ws.Root, Kinds: []events.Kind{events.TaskChanged, events.MatrixChanged}}, 0)
	mw, err := task.WatchMatrix(ctx, s.ws, bus, s.opts.Debounce/5)
	if err != nil {
		sub.Close()
		cancel()
		return nil, err
	}
	w := &watcher{s: s, mw: mw, sub: sub, stop: cancel, done: make(chan struct{})}
	go w.loop(ctx)
	return w, nil
}

// Close stops the watcher and waits for it.
func (w *watcher) Close() error {
	w.stop()
	<-w.done
	w.mw.Close()
	w.sub.Close()
	return nil
}

// rowless are the changes of a task that are not its row's (the matrix
// file does not change).
var rowless = []string{"readme", "folder", "archived"}

func (w *watcher) loop(ctx context.Context) {
	defer close(w.done)
	var (
		pending  = map[string]bool{} // URIs to notify
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
		d := max(min(debounce, maxDelay-now.Sub(first)), 0)
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
		case <-w.sub.Ready():
			for {
				e, ok := w.sub.TryNext()
				if !ok {
					break
				}
				for _, uri := range w.urisOf(e) {
					pending[uri] = true
				}
			}
			if len(pending) > 0 {
				schedule()
			}
		case <-timerC:
			timer, timerC = nil, nil
			uris := make([]string, 0, len(pending))
			for u := range pending {
				uris = append(uris, u)
			}
			clear(pending)
			slices.Sort(uris)
			for _, u := range uris {
				w.s.notify(ctx, u)
			}
		}
	}
}

// urisOf names the resources an event changed that have subscribers (the
// matrix is notified always: the SDK sends it to its subscribers only).
func (w *watcher) urisOf(e events.Event) []string {
	switch e.Kind {
	case events.MatrixChanged:
		return []string{MatrixURI}
	case events.Lagged:
		return append([]string{MatrixURI}, w.subscribedURIs()...)
	case events.TaskChanged:
		var out []string
		if e.Source == "" && slices.ContainsFunc(e.Fields, func(f string) bool { return !slices.Contains(rowless, f) }) {
			out = append(out, MatrixURI) // this process wrote the row
		}
		if slices.Contains(w.s.subscribedTasks(), e.TaskID) {
			out = append(out, TaskURIPrefix+e.TaskID)
		}
		return out
	}
	return nil
}

func (w *watcher) subscribedURIs() []string {
	var out []string
	for _, id := range w.s.subscribedTasks() {
		out = append(out, TaskURIPrefix+id)
	}
	return out
}

// baseline starts following a task's folder when it gets its first
// subscriber, so the first change after subscribing is notified.
func (w *watcher) baseline(ctx context.Context, id string) {
	w.mw.Follow(ctx, id)
}

func (s *Server) bus() *events.Bus {
	if s.opts.Bus != nil {
		return s.opts.Bus
	}
	return events.Default()
}

func (s *Server) notify(ctx context.Context, uri string) {
	if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		s.log.Warn("resources/updated", "uri", uri, "error", err)
	}
}
