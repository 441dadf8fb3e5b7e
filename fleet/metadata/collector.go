package metadata

import (
	"context"
	"path/filepath"
	"sync"
	"time"
)

// Collector collects the metadata of many workspaces: in parallel, each
// result kept for CacheTTL and dropped as soon as the workspace's Taskfile
// changes (its path, size, modification time or inode), so a list polled
// every second runs the tasks at most once per TTL. Concurrent requests for
// one workspace and scope share one collection. Safe for concurrent use.
type Collector struct {
	opts Options
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]*slot // by workspace folder
}

// slot is one workspace's collections: every field's (show) and the listed
// fields' (list), each cached on its own, so that lists polled while a
// show waits for a slow field share one collection of their own.
type slot struct {
	full, list *entry
}

type entry struct {
	stamp stamp
	done  chan struct{} // closed when md is set
	md    Metadata
	at    time.Time // when md was collected
}

// stamp identifies one version of a Taskfile.
type stamp struct {
	path  string
	size  int64
	mtime time.Time
	inode uint64
}

// NewCollector returns a collector with opts (zero fields are defaults).
func NewCollector(opts Options) *Collector {
	return &Collector{opts: opts.withDefaults(), now: time.Now, cache: map[string]*slot{}}
}

var (
	sharedOnce sync.Once
	shared     *Collector
)

// Shared is the process's collector with the default options: the one the
// CLI and the MCP server use, so that the cache outlives one request.
func Shared() *Collector {
	sharedOnce.Do(func() { shared = NewCollector(Options{}) })
	return shared
}

// Collect returns dir's metadata (the fields of scope), from the cache when
// it is fresh: a finished AllFields result answers a ListFields request
// too; a ListFields request never waits for an AllFields one in flight. The
// collection itself is not tied to ctx (its runs are bounded by their
// timeout and the result is cached for the next caller); when ctx ends
// first, the result says the metadata was not collected.
func (c *Collector) Collect(ctx context.Context, dir string, scope Scope) Metadata {
	dir = filepath.Clean(dir)
	path, fi := FindTaskfile(dir)
	if path == "" {
		c.mu.Lock()
		delete(c.cache, dir)
		c.mu.Unlock()
		return Metadata{Fields: map[string]Field{}}
	}
	st := stamp{path: path, size: fi.Size(), mtime: fi.ModTime(), inode: inodeOf(fi)}
	c.mu.Lock()
	sl := c.cache[dir]
	if sl == nil {
		sl = &slot{}
		c.cache[dir] = sl
	}
	fresh := func(e *entry) bool { return e != nil && e.stamp == st && !c.expired(e) }
	var e *entry
	switch {
	case scope == AllFields:
		if !fresh(sl.full) {
			sl.full = c.start(ctx, st, AllFields, dir, path)
		}
		e = sl.full
	case fresh(sl.full) && isDone(sl.full):
		e = sl.full // every field answers a list too
	default:
		// A list does not wait for a show in flight (its slow fields are
		// not the list's): it has a collection of its own.
		if !fresh(sl.list) {
			sl.list = c.start(ctx, st, ListFields, dir, path)
		}
		e = sl.list
	}
	c.prune()
	c.mu.Unlock()
	select {
	case <-e.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return e.md
	case <-ctx.Done():
		return Metadata{Fields: map[string]Field{}, Taskfile: path, Err: "not collected: " + ctx.Err().Error()}
	}
}

// start collects scope's fields in the background. The collection is not
// tied to ctx's end: its runs are bounded by their timeout.
func (c *Collector) start(ctx context.Context, st stamp, scope Scope, dir, path string) *entry {
	e := &entry{stamp: st, done: make(chan struct{})}
	go func() {
		md := collect(context.WithoutCancel(ctx), dir, path, scope, c.opts)
		c.mu.Lock()
		e.md, e.at = md, c.now()
		c.mu.Unlock()
		close(e.done)
	}()
	return e
}

func isDone(e *entry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// expired reports whether a finished entry is older than the TTL. Called
// with mu held.
func (c *Collector) expired(e *entry) bool {
	if !isDone(e) {
		return false // in flight: join it
	}
	return c.opts.CacheTTL < 0 || c.now().Sub(e.at) >= c.opts.CacheTTL
}

// prune drops the expired entries (workspaces deleted meanwhile). Called
// with mu held.
func (c *Collector) prune() {
	for k, sl := range c.cache {
		if sl.full != nil && c.expired(sl.full) {
			sl.full = nil
		}
		if sl.list != nil && c.expired(sl.list) {
			sl.list = nil
		}
		if sl.full == nil && sl.list == nil {
			delete(c.cache, k)
		}
	}
}

// CollectAll collects dirs in parallel (at most AgentConcurrency at once);
// out[i] is dirs[i]'s metadata.
func (c *Collector) CollectAll(ctx context.Context, dirs []string, scope Scope) []Metadata {
	return CollectEach(ctx, dirs, c.opts.AgentConcurrency, func(ctx context.Context, dir string) Metadata {
		return c.Collect(ctx, dir, scope)
	})
}

// CollectEach collects the metadata of every workspace in parallel, at
// most limit at once (every backend's list); out[i] is workspaces[i]'s. A
// workspace whose turn never came before ctx ended says so in its Err.
func CollectEach[W any](ctx context.Context, workspaces []W, limit int, collect func(context.Context, W) Metadata) []Metadata {
	out := make([]Metadata, len(workspaces))
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i, w := range workspaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
				out[i] = collect(ctx, w)
			case <-ctx.Done():
				out[i] = Metadata{Fields: map[string]Field{}, Err: "not collected: " + ctx.Err().Error()}
			}
		}()
	}
	wg.Wait()
	return out
}
