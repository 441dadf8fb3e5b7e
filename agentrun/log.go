package agentrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/internal/fswatch"
	"github.com/agentinfra/agentinfra/internal/jsonout"
)

// A run's log is every event its agent CLI printed, in order, one
// events.RunItem per line (JSONL), between a run_started and a run_ended
// item that agentinfra writes around them. The log of a live run grows
// while the run lasts; its last line may be half written.
const (
	ItemStarted = "run_started"
	ItemEnded   = "run_ended"
)

// LogWriter appends items to a run's log.
type LogWriter interface {
	Append(item events.RunItem) error
	Close() error
}

// Files is the Recorder of one run as files: the record as JSON at
// RecordPath, replaced atomically, and the log as JSONL at LogPath.
type Files struct {
	RecordPath string
	LogPath    string
	// Doc, when set, is what RecordPath holds instead of the bare record
	// (dispatch writes its Outcome: the record with the prompt's parts and
	// its files).
	Doc func(*Record) any
}

// Save writes the record (or Doc of it).
func (f Files) Save(rec *Record) error {
	var v any = rec
	if f.Doc != nil {
		v = f.Doc(rec)
	}
	b, err := jsonout.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.RecordPath), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(f.RecordPath, b)
}

// Log opens LogPath for appending (created when missing).
func (f Files) Log(rec *Record) (LogWriter, error) {
	if err := os.MkdirAll(filepath.Dir(f.LogPath), 0o755); err != nil {
		return nil, err
	}
	fh, err := os.OpenFile(f.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the run's log: %w", err)
	}
	return &fileLog{f: fh}, nil
}

type fileLog struct{ f *os.File }

// Append writes one line in one write (O_APPEND): a reader sees whole lines
// or a torn last one, never two lines mixed.
func (l *fileLog) Append(item events.RunItem) error {
	b, err := json.Marshal(item)
	if err != nil {
		return err
	}
	_, err = l.f.Write(append(b, '\n'))
	return err
}

func (l *fileLog) Close() error {
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadLog returns the items of a run's log (none when it does not exist);
// a half-written last line is left out.
func ReadLog(path string) ([]events.RunItem, error) {
	var out []events.RunItem
	_, err := readFrom(path, 0, func(it events.RunItem) error {
		out = append(out, it)
		return nil
	})
	return out, err
}

// readFrom calls fn with each whole line of path from offset on and
// returns the offset after the last whole line.
func readFrom(path string, offset int64, fn func(events.RunItem) error) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return offset, nil
	}
	if err != nil {
		return offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 || line[len(line)-1] != '\n' {
			// EOF, or a line still being written: read it next time.
			if err != nil && !errors.Is(err, io.EOF) {
				return offset, err
			}
			return offset, nil
		}
		offset += int64(len(line))
		var it events.RunItem
		if json.Unmarshal(bytes.TrimSpace(line), &it) != nil {
			continue // not ours: skip it
		}
		if err := fn(it); err != nil {
			return offset, err
		}
	}
}

// errEnded stops a follow at the run's end.
var errEnded = errors.New("the run ended")

// FollowLog calls fn with every item of the log at path, from the first,
// then with each new one as the run writes it, until the run_ended item,
// ctx ends, or live reports that nothing writes the log any more (a run
// whose supervisor died: what it wrote is read to the end first). fn's
// error stops the follow and is returned.
func FollowLog(ctx context.Context, path string, live func() bool, fn func(events.RunItem) error) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The folder is watched (the log may not exist yet); a tick catches what
	// a watch can miss and lets live be asked.
	w, err := fswatch.Watch(wctx, fswatch.Options{Tick: 250 * time.Millisecond}, filepath.Dir(path))
	if err != nil {
		return err
	}
	var offset int64
	read := func() error {
		offset, err = readFrom(path, offset, func(it events.RunItem) error {
			if err := fn(it); err != nil {
				return err
			}
			if it.Kind == ItemEnded {
				return errEnded
			}
			return nil
		})
		return err
	}
	for {
		if err := read(); err != nil {
			if errors.Is(err, errEnded) {
				return nil
			}
			return err
		}
		if live != nil && !live() {
			if err := read(); err != nil && !errors.Is(err, errEnded) {
				return err
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.C:
			w.Add(filepath.Dir(path))
		}
	}
}

// WatchLog publishes every item of the log at path on bus as a RunEvent
// (from the first, then each new one as it is written) with the names of
// base (root, agent, task, run) and Source "watch", until run_ended, ctx
// ends or live says the run is over: how a run written by another process
// (a detached supervisor) reaches a process's bus.
func WatchLog(ctx context.Context, path string, live func() bool, bus *events.Bus, base events.Event) error {
	return FollowLog(ctx, path, live, func(it events.RunItem) error {
		e := base
		e.Kind, e.Source, e.Run = events.RunEvent, "watch", &it
		bus.Publish(e)
		return nil
	})
}
