package policy

import (
	"context"
	"path/filepath"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// Live is a policy reloaded whenever its files change, without restarting
// anything: Current is always the latest (a file that stops parsing makes
// it AskAll, with its warning, until it is fixed).
type Live struct {
	root    string
	paths   Paths
	cur     atomic.Pointer[Policy]
	changed chan struct{}
}

// Watch loads the policy and reloads it on changes until ctx is done.
// onReload (may be nil) is called after each reload.
func Watch(ctx context.Context, root string, paths Paths, onReload func(*Policy)) (*Live, error) {
	l := &Live{root: root, paths: paths, changed: make(chan struct{}, 1)}
	l.cur.Store(Load(root, paths))
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return l, err
	}
	// Watch the folders, not the files: editors replace files by renaming
	// a new one over them, which ends a watch on the file itself.
	names := map[string]bool{}
	for _, p := range []string{paths.Workspace, paths.Allowlist} {
		if p == "" {
			continue
		}
		names[filepath.Clean(p)] = true
		w.Add(filepath.Dir(p)) // a missing folder is fine: no file, no rules
	}
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !names[filepath.Clean(ev.Name)] {
					continue
				}
				p := Load(root, paths)
				l.cur.Store(p)
				if onReload != nil {
					onReload(p)
				}
				select {
				case l.changed <- struct{}{}:
				default:
				}
			case <-w.Errors:
			}
		}
	}()
	return l, nil
}

// Current is the policy in force.
func (l *Live) Current() *Policy { return l.cur.Load() }

// Changed signals each reload (coalesced).
func (l *Live) Changed() <-chan struct{} { return l.changed }
