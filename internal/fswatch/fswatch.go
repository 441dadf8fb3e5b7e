// Package fswatch tells a long-lived process that files changed under some
// folders: fsnotify on the folders (not the files: agentinfra and editors
// replace files by rename, which a watch on the file loses), bursts
// coalesced, and a periodic tick as a safety net where events are lost
// (a full inotify queue, a folder created after the watch began).
package fswatch

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher reports changes under its folders on C.
type Watcher struct {
	// C receives (at most one pending) when something may have changed:
	// the receiver re-reads what it shows.
	C  <-chan struct{}
	c  chan struct{}
	fw *fsnotify.Watcher

	mu   sync.Mutex
	dirs map[string]bool
	// Paths holds the paths changed since the last Take.
	paths map[string]bool
	skip  func(path string) bool
}

// Options tune a Watcher.
type Options struct {
	// Debounce gathers a burst of events (default 20 ms).
	Debounce time.Duration
	// Tick sends a change every Tick even without an event (0 = never).
	Tick time.Duration
	// Skip leaves out events of paths it returns true for (a lock file).
	Skip func(path string) bool
}

// Watch starts watching dirs (a folder that does not exist yet is added
// when Add is called again); it stops when ctx ends.
func Watch(ctx context.Context, o Options, dirs ...string) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if o.Debounce <= 0 {
		o.Debounce = 20 * time.Millisecond
	}
	c := make(chan struct{}, 1)
	w := &Watcher{C: c, c: c, fw: fw, dirs: map[string]bool{}, paths: map[string]bool{}, skip: o.Skip}
	for _, d := range dirs {
		w.Add(d)
	}
	go w.loop(ctx, o)
	return w, nil
}

// Add watches one more folder (idempotent); a folder that does not exist
// is an error, and Add may be called again once it does.
func (w *Watcher) Add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dir] {
		return nil
	}
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	if err := w.fw.Add(dir); err != nil {
		return err
	}
	w.dirs[dir] = true
	return nil
}

// Take returns the paths changed since the last Take (nil after a tick or
// a lost event: then anything may have changed).
func (w *Watcher) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for p := range w.paths {
		out = append(out, p)
	}
	clear(w.paths)
	return out
}

func (w *Watcher) loop(ctx context.Context, o Options) {
	defer w.fw.Close()
	var timer *time.Timer
	var timerC <-chan time.Time
	var tickC <-chan time.Time
	if o.Tick > 0 {
		t := time.NewTicker(o.Tick)
		defer t.Stop()
		tickC = t.C
	}
	send := func() {
		select {
		case w.c <- struct{}{}:
		default:
		}
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
			if w.skip != nil && w.skip(ev.Name) {
				continue
			}
			w.mu.Lock()
			w.paths[ev.Name] = true
			w.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(o.Debounce)
				timerC = timer.C
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			send()
		case <-timerC:
			timer, timerC = nil, nil
			send()
		case <-tickC:
			send()
		}
	}
}
