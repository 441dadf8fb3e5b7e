package host

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// reach is since when a host could not be reached, kept in a file per
// host (when there is a folder for them) so that the next process says
// the same: the first failure after an answer creates it, the next answer
// removes it.
type reach struct {
	mu     sync.Mutex
	file   string // "" = memory only
	now    func() time.Time
	loaded bool
	since  time.Time
	why    string
}

// downFile is what the file holds.
type downFile struct {
	Since time.Time `json:"since"`
	Error string    `json:"error"`
}

func newReach(dir, name string, now func() time.Time) *reach {
	r := &reach{now: now}
	if dir != "" {
		// Host names are Coder workspace names (letters, digits,
		// hyphens): nothing else reaches the path.
		r.file = filepath.Join(dir, strings.Map(func(c rune) rune {
			if c == '/' || c == '\\' || c == 0 {
				return '_'
			}
			return c
		}, name)+".down")
	}
	return r
}

// load reads the file once. The caller holds r.mu.
func (r *reach) load() {
	if r.loaded || r.file == "" {
		r.loaded = true
		return
	}
	r.loaded = true
	var d downFile
	if b, err := os.ReadFile(r.file); err == nil && json.Unmarshal(b, &d) == nil {
		r.since, r.why = d.Since, d.Error
	}
}

func (r *reach) state() (time.Time, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.load()
	return r.since, r.why
}

// up: the host answered.
func (r *reach) up() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.load()
	if r.since.IsZero() {
		return
	}
	r.since, r.why = time.Time{}, ""
	if r.file != "" {
		if err := os.Remove(r.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// down: the host did not answer; the first failure since its last answer
// says since when (another process's too: the file is created once).
func (r *reach) down(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.load()
	r.why = why
	if !r.since.IsZero() {
		return
	}
	r.since = r.now()
	if r.file == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(r.file), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(r.file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		var d downFile
		if b, err := os.ReadFile(r.file); err == nil && json.Unmarshal(b, &d) == nil && !d.Since.IsZero() {
			r.since = d.Since
		}
		return
	}
	if err != nil {
		return
	}
	defer f.Close()
	_ = json.NewEncoder(f).Encode(downFile{Since: r.since, Error: why})
}
