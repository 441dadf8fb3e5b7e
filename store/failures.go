package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// FailuresFile is the log of storage failures beside the database: a
// file, because what it records is that the database could not be
// trusted. One JSON object a line, appended.
const FailuresFile = "storage-failures.jsonl"

// Failure is one storage failure as a supervisor saw it.
type Failure struct {
	At time.Time `json:"at"`
	// What: "deleted" or "replaced" (the database under a running
	// supervisor), "denied" (a permission request denied because it could
	// not be recorded).
	What string `json:"what"`
	// Text says what happened and what was done about it.
	Text      string `json:"text"`
	SessionID int64  `json:"session_id,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	// Requests are the session's requests that were pending in the lost
	// database (a decision of theirs can no longer reach the run).
	Requests []int64 `json:"requests,omitempty"`
}

// NoteFailure appends f to the log of storage failures in the store's
// folder (created when the folder was deleted with the database).
func (s *Store) NoteFailure(f Failure) error { return NoteFailure(s.stateDir(), f) }

// NoteFailure appends f to dir's log of storage failures.
func NoteFailure(dir string, f Failure) error {
	if f.At.IsZero() {
		f.At = time.Now().UTC()
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("log a storage failure: %w", err)
	}
	// One write of one line with O_APPEND: lines of several processes do
	// not interleave.
	file, err := os.OpenFile(filepath.Join(dir, FailuresFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log a storage failure: %w", err)
	}
	_, err = file.Write(append(b, '\n'))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxFailureLines bounds how much of the log is read (its newest lines).
const maxFailureLines = 10000

// Failures reads the log of storage failures in dir, oldest first (none
// when there is no log).
func Failures(dir string) ([]Failure, error) {
	file, err := os.Open(filepath.Join(dir, FailuresFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var out []Failure
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var f Failure
		if json.Unmarshal(sc.Bytes(), &f) == nil {
			out = append(out, f)
		}
		if len(out) > 2*maxFailureLines {
			out = slices.Clone(out[len(out)-maxFailureLines:])
		}
	}
	if len(out) > maxFailureLines {
		out = out[len(out)-maxFailureLines:]
	}
	return out, sc.Err()
}

// Request reads request id. One that is not here but was pending in a
// database lost under its run (the log of storage failures) is said so:
// a person's decision can no longer reach that run.
func (s *Store) Request(ctx context.Context, id int64) (Request, error) {
	r, err := requestTx(ctx, s.db, id)
	if !errors.Is(err, ErrNotFound) {
		return r, err
	}
	fs, _ := Failures(s.stateDir())
	for i := len(fs) - 1; i >= 0; i-- {
		if f := fs[i]; slices.Contains(f.Requests, id) {
			return r, &agenterr.Error{Kind: agenterr.NotFound, What: "request", Value: strconv.FormatInt(id, 10), Err: ErrNotFound,
				Reason: fmt.Sprintf("it was pending in a database that is gone: %s (%s); nothing was decided; see %s",
					f.Text, f.At.Local().Format("2006-01-02 15:04:05"), filepath.Join(s.stateDir(), FailuresFile))}
		}
	}
	return r, err
}
