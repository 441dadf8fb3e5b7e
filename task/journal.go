package task

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// JournalRel is the record of a change that spans the matrix and other files,
// inside .agent/ (git-ignored): a task's row and its folder (create), a
// status and the README's status log line (update), several folders moved
// at once (archive). It is written under the matrix lock before the first
// file changes and removed, still under the lock, once the change is whole:
// the matrix written, or, for archive, every folder moved. A process killed
// in between leaves it, and the next writer (any of this package's
// operations) rolls the change back, or sees that it was made, before doing
// its own work, and says so (see recoverChange).
const JournalRel = ".pending-change.json"

// change is the journal's content.
type change struct {
	Op string `json:"op"` // "create", "update", "archive"
	// Token names the operation that wrote it: an operation that finds its
	// own record (a retry after the matrix changed under it) undoes it
	// silently; anyone else's is a leftover.
	Token string `json:"token"`
	ID    string `json:"id,omitempty"`
	// create: the task folder (relative to the workspace root), and whether
	// .agent/tasks/ was created with it.
	Dir       string `json:"dir,omitempty"`
	MadeTasks bool   `json:"made_tasks,omitempty"`
	// update: the README, its bytes before the status line and the SHA-256
	// of its bytes after, and the status change.
	Readme    string `json:"readme,omitempty"`
	OldReadme []byte `json:"old_readme,omitempty"` // base64: byte for byte
	NewReadme string `json:"new_readme_sha256,omitempty"`
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
	// archive: the folders moved (relative to the root), in order.
	Moves       []folderMove `json:"moves,omitempty"`
	MadeArchive bool         `json:"made_archive,omitempty"`
}

type folderMove struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// op is one operation of this package that writes: its journal token and
// the notices it collects (a leftover it dealt with, what the matrix store
// noticed), which it reports as warnings.
type op struct {
	ws      *workspace.Workspace
	token   string
	logged  bool // this op wrote the journal
	notices []string
}

func newOp(ws *workspace.Workspace) *op {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &op{ws: ws, token: hex.EncodeToString(b[:])}
}

func (o *op) note(msg string) { o.notices = append(o.notices, msg) }

// store opens the matrix store with its notices going to o.
func (o *op) store() (*matrix.Store, error) {
	s, err := OpenStore(o.ws)
	if err != nil {
		return nil, err
	}
	s.Notify = o.note
	return s, nil
}

// flush hands the notices to the context's notifier (see WithNotify), for
// the operations whose result has no warnings.
func (o *op) flush(ctx context.Context) {
	if fn, ok := ctx.Value(notifyKey{}).(func(string)); ok {
		for _, n := range o.notices {
			fn(n)
		}
	}
}

type notifyKey struct{}

// WithNotify returns a context whose operations (archive, scaffold) pass
// their notices to fn: a leftover of an interrupted change they rolled
// back, what the matrix store noticed. Operations with warnings in their
// result (create, update, claim) put them there instead.
func WithNotify(ctx context.Context, fn func(msg string)) context.Context {
	return context.WithValue(ctx, notifyKey{}, fn)
}

func (o *op) journalPath() string { return filepath.Join(o.ws.AgentDir(), JournalRel) }

// record writes the journal before the first file of the change is touched.
// A write killed half way leaves a file that does not parse, which the next
// writer removes: nothing else was changed yet.
func (o *op) record(c change) error {
	c.Token = o.token
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.journalPath(), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.journalPath(), err)
	}
	o.logged = true
	return nil
}

// finish ends the operation under the lock: on failure it undoes what its
// journal describes; either way the journal goes.
func (o *op) finish(d *matrix.Doc, err error) error {
	if !o.logged {
		return nil
	}
	if err != nil {
		o.undo(d, true)
	}
	if rerr := os.Remove(o.journalPath()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", o.journalPath(), rerr)
	}
	o.logged = false
	return nil
}

// recoverChange deals, under the lock, with a journal left by a killed
// process (rolling its change back unless the matrix shows it was made)
// or by an earlier attempt of this operation (undone silently: the matrix
// changed under it and the operation runs again). d is the matrix as read now.
func (o *op) recoverChange(d *matrix.Doc) {
	b, err := os.ReadFile(o.journalPath())
	if err != nil {
		return
	}
	var c change
	if json.Unmarshal(b, &c) != nil || c.Op == "" {
		_ = os.Remove(o.journalPath()) // killed while writing it: nothing else had changed
		return
	}
	o.logged = true
	o.undoChange(c, d, c.Token == o.token)
	_ = os.Remove(o.journalPath())
	o.logged = false
}

func (o *op) undo(d *matrix.Doc, own bool) {
	b, err := os.ReadFile(o.journalPath())
	if err != nil {
		return
	}
	var c change
	if json.Unmarshal(b, &c) == nil {
		o.undoChange(c, d, own)
	}
}

// undoChange rolls c back, or (for a leftover) keeps it when d shows that
// the matrix was written. Paths are checked to lie where the operation
// writes: a journal that names anything else is ignored.
func (o *op) undoChange(c change, d *matrix.Doc, own bool) {
	ws := o.ws
	say := func(format string, a ...any) {
		if !own {
			o.note(fmt.Sprintf(format, a...))
		}
	}
	switch c.Op {
	case "create":
		dir := filepath.Join(ws.Root, filepath.FromSlash(c.Dir))
		removeBuilding(ws.TasksDir())
		if !own && d != nil {
			if _, ok := d.Task(c.ID); ok {
				return // the row was written: the task is whole
			}
		}
		if !directlyIn(ws.TasksDir(), dir) || !strings.HasPrefix(filepath.Base(dir), c.ID+"_") {
			return
		}
		if exists(dir) {
			if err := os.RemoveAll(dir); err == nil {
				say("an interrupted `task create` (killed before its row was written) had left the folder %s with no row: removed it", c.Dir)
			}
		}
		if c.MadeTasks {
			_ = os.Remove(ws.TasksDir()) // only if empty again
		}
	case "update":
		p := filepath.Join(ws.Root, filepath.FromSlash(c.Readme))
		if filepath.Base(p) != "README.md" || !(directlyIn(ws.TasksDir(), filepath.Dir(p)) || directlyIn(ws.ArchiveDir(), filepath.Dir(p))) {
			return
		}
		removeReadmeTemps(filepath.Dir(p))
		if !own && d != nil {
			if t, ok := d.Task(c.ID); ok && t.Status == c.To {
				return // the row was written: the log line is right
			}
		}
		cur, err := os.ReadFile(p)
		if err != nil {
			return
		}
		if sum := sha256.Sum256(cur); hex.EncodeToString(sum[:]) != c.NewReadme {
			if !own {
				say("an interrupted status change of task %s (%s → %s, killed before the row was written) left a line in %s, which has changed since: check its status log", c.ID, c.From, c.To, c.Readme)
			}
			return
		}
		if err := atomicfile.Write(p, c.OldReadme); err == nil {
			say("an interrupted status change of task %s (%s → %s, killed before the row was written) had logged it in %s: removed that line", c.ID, c.From, c.To, c.Readme)
		}
	case "archive":
		back := 0
		for i := len(c.Moves) - 1; i >= 0; i-- {
			m := c.Moves[i]
			from := filepath.Join(ws.Root, filepath.FromSlash(m.From))
			to := filepath.Join(ws.Root, filepath.FromSlash(m.To))
			if !directlyIn(ws.TasksDir(), from) || !directlyIn(ws.ArchiveDir(), to) || filepath.Base(from) != filepath.Base(to) {
				continue
			}
			if exists(to) && !exists(from) && os.Rename(to, from) == nil {
				back++
			}
		}
		if c.MadeArchive {
			_ = os.Remove(ws.ArchiveDir()) // only if empty again
		}
		if back > 0 {
			say("an interrupted `task archive` (killed after moving %d of its %d folders) was rolled back: the folders are in .agent/tasks/ again; run the archive again", back, len(c.Moves))
		}
	}
}

// directlyIn reports whether p is an entry of dir (not dir itself, not deeper).
func directlyIn(dir, p string) bool {
	return filepath.Dir(filepath.Clean(p)) == filepath.Clean(dir) && filepath.Base(p) != "." && filepath.Base(p) != ".."
}

// removeBuilding removes task folders under construction (.creating-*):
// they exist only while their writer holds the lock.
func removeBuilding(tasksDir string) {
	stale, _ := filepath.Glob(filepath.Join(tasksDir, tmpPrefix+"*"))
	for _, p := range stale {
		_ = os.RemoveAll(p)
	}
}

// removeReadmeTemps removes the temporary files of README writes that were
// killed (.README.md plus digits, atomicfile's pattern): READMEs are written
// under the matrix lock, so under it every such file is garbage.
func removeReadmeTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), ".README.md")
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// relSlash is p relative to the workspace root, slash-separated.
func relSlash(ws *workspace.Workspace, p string) string {
	r, err := filepath.Rel(ws.Root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}
