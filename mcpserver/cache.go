package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
)

// fileKey identifies one version of a file cheaply: the matrix is replaced by
// rename on every write, so the inode changes even when size and mtime do not.
type fileKey struct {
	exists bool
	ino    uint64
	dev    uint64
	size   int64
	mtime  time.Time
}

func statKey(path string) (fileKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileKey{}, nil
		}
		return fileKey{}, err
	}
	k := fileKey{exists: true, size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.ino, k.dev = uint64(st.Ino), uint64(st.Dev)
	}
	return k, nil
}

// docCache keeps the parsed matrix and re-reads it only when the file changed
// (stat: inode, size, mtime). Reads never lock: writers replace the file
// atomically, so a read sees either the old or the new version.
type docCache struct {
	store *matrix.Store

	mu    sync.Mutex
	key   fileKey
	doc   *matrix.Doc
	tasks []matrix.Task // doc.Tasks(), extracted once per version; never modified
	loads int           // how many times the file was parsed (for tests)
}

func newDocCache(store *matrix.Store) *docCache { return &docCache{store: store} }

// Get returns the current matrix, parsing it only if it changed.
func (c *docCache) Get(ctx context.Context) (*matrix.Doc, error) {
	d, _, err := c.get(ctx)
	return d, err
}

// Tasks returns the rows of the current matrix in file order. The slice is
// shared: callers must not modify it or its tasks.
func (c *docCache) Tasks(ctx context.Context) ([]matrix.Task, error) {
	_, ts, err := c.get(ctx)
	return ts, err
}

func (c *docCache) get(ctx context.Context) (*matrix.Doc, []matrix.Task, error) {
	k, err := statKey(c.store.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("read the matrix: %w", err)
	}
	if !k.exists {
		return nil, nil, fmt.Errorf("no matrix at %s: run `agentinfra init` in the workspace root", c.store.Path)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.doc != nil && c.key == k {
		return c.doc, c.tasks, nil
	}
	d, err := c.store.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Stat again: if the file changed while we read, keep the key of what we
	// may have read so the next Get re-reads.
	k2, _ := statKey(c.store.Path)
	if k2 != k {
		k2 = fileKey{}
	}
	c.doc, c.tasks, c.key = d, d.Tasks(), k2
	c.loads++
	return d, c.tasks, nil
}

// Loads reports how many times the matrix was parsed.
func (c *docCache) Loads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads
}
