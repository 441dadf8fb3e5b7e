package taskcontext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/workspace"
)

func readReadme(ws *workspace.Workspace, dir string, opts Options, c *Context) error {
	p := filepath.Join(dir, "README.md")
	c.Readme.Path = ws.RelPath(p)
	src, err := readInside(ws, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read task README %s: %w", c.Readme.Path, err)
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	c.Readme.Exists = true
	c.Readme.Bytes = len(src)
	c.Links = readmeLinks(ws, filepath.Dir(p), src)
	if len(src) > opts.ReadmeBytes {
		src = src[:utf8Floor(src, opts.ReadmeBytes)]
		c.Readme.Truncated = true
	}
	c.Readme.Content = string(src)
	return nil
}

// readInside reads a regular file after checking that it (symlinks
// followed) stays inside the workspace: workspace.ReadFile.
func readInside(ws *workspace.Workspace, p string) ([]byte, error) { return ws.ReadFile(p) }

// unreadable explains why a file was not read without naming anything
// outside the workspace.
func unreadable(ws *workspace.Workspace, p string, err error) string {
	if _, rerr := ws.Resolve(p); rerr != nil {
		if _, serr := os.Stat(p); serr == nil {
			return "(not shown: it resolves outside the workspace)"
		}
	}
	if errors.Is(err, fs.ErrPermission) {
		return "(not shown: permission denied)"
	}
	return "(not shown: " + mdtext.OneLine(strings.TrimPrefix(err.Error(), filepath.Dir(ws.Root))) + ")"
}

// utf8Floor returns the largest n' <= n that does not split a UTF-8 sequence.
func utf8Floor(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// tail returns the last n bytes of b, starting at a line boundary when one
// is near, and whether it cut anything.
func tail(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return b, false
	}
	start := len(b) - n
	if i := bytes.IndexByte(b[start:], '\n'); i >= 0 && i < n/2 {
		start += i + 1
	}
	for start < len(b) && !utf8.RuneStart(b[start]) {
		start++
	}
	return b[start:], true
}

// trackingFiles lists the regular files directly under dir/tracking, sorted by name.
func trackingFiles(dir string) (string, []string, error) {
	td := filepath.Join(dir, "tracking")
	ents, err := os.ReadDir(td)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return td, nil, fmt.Errorf("read tracking folder: %w", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return td, names, nil
}

// ReadTracking reads the last files of taskDir/tracking/ by name, oldest
// first, each cut to its last entryBytes bytes (at a line boundary when one is
// near). A task without tracking/ gives an empty Tracking; a tracking/ that
// resolves outside the workspace is not read (Tracking.Error says so).
func ReadTracking(ws *workspace.Workspace, taskDir string, files, entryBytes int) (Tracking, error) {
	tr := Tracking{MaxFiles: files, MaxEntryBytes: entryBytes, Entries: []TrackingEntry{}}
	return tr, readTracking(ws, taskDir, &tr)
}

func readTracking(ws *workspace.Workspace, dir string, tr *Tracking) error {
	td, names, err := trackingFiles(dir)
	if err != nil || td == "" {
		return err
	}
	tr.Dir = ws.RelPath(td) + "/"
	if _, err := ws.Resolve(td); err != nil {
		tr.Error = "tracking/ resolves outside the workspace; not read"
		return nil
	}
	tr.Total = len(names)
	if len(names) > tr.MaxFiles {
		names = names[len(names)-tr.MaxFiles:]
	}
	for _, n := range names {
		p := filepath.Join(td, n)
		e := TrackingEntry{Path: ws.RelPath(p)}
		src, err := readInside(ws, p)
		if err != nil {
			e.Content = unreadable(ws, p, err)
			tr.Entries = append(tr.Entries, e)
			continue
		}
		e.Bytes = len(src)
		if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
			e.Binary = true
		} else {
			src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
			var cut bool
			src, cut = tail(src, tr.MaxEntryBytes)
			e.Truncated = cut
			e.Content = string(src)
		}
		tr.Entries = append(tr.Entries, e)
	}
	return nil
}

func listArtifacts(ctx context.Context, ws *workspace.Workspace, dir string, limit int, c *Context) error {
	ad := filepath.Join(dir, "artifacts")
	if _, err := os.Lstat(ad); err != nil {
		return nil
	}
	err := filepath.WalkDir(ad, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		c.ArtifactsTotal++
		if len(c.Artifacts) >= limit {
			return nil
		}
		var size int64
		if fi, err := d.Info(); err == nil {
			size = fi.Size()
		}
		c.Artifacts = append(c.Artifacts, Artifact{Path: ws.RelPath(p), Bytes: size})
		return nil
	})
	if err != nil {
		return fmt.Errorf("list artifacts: %w", err)
	}
	return nil
}
