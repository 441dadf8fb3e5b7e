package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
)

// MaxDiffBytes bounds the diff a request keeps in the database and every
// surface shows inline (issue 27: one Edit of a 30 MB file made a 65 MB
// diff). A longer diff is cut there at a line's end; the whole is kept in
// a file of the session's folder, with its size and SHA-256 in the row,
// for a person who asks (`agentinfra inbox show ID --whole-diff`, the
// console's "whole diff" link).
const MaxDiffBytes = 256 << 10

// MaxToolInputBytes bounds the tool input a request keeps (a Write's whole
// content is in it): what a decision needs is its command, file and diff.
const MaxToolInputBytes = 64 << 10

// wholeDiff is where the whole of a cut diff is.
type wholeDiff struct {
	bytes  int64
	sha256 string
	file   string // relative to the database's folder
}

// SessionDir is the folder of session id's files beside the database
// (whole diffs), which a purge of the session removes. It is inside the
// workspace's state folder, out of a sandboxed agent's sight: what a
// person is shown is what the agent asked, not what it wrote later.
func (s *Store) SessionDir(id int64) string {
	return filepath.Join(filepath.Dir(s.path), "sessions", strconv.FormatInt(id, 10))
}

// keepWholeDiff writes a diff longer than MaxDiffBytes to the session's
// folder, named by its SHA-256 (written before the row exists: a failed
// insert leaves a file the session's purge removes).
func (s *Store) keepWholeDiff(sessionID int64, diff string) (wholeDiff, error) {
	if len(diff) <= MaxDiffBytes {
		return wholeDiff{}, nil
	}
	sum := sha256.Sum256([]byte(diff))
	w := wholeDiff{bytes: int64(len(diff)), sha256: hex.EncodeToString(sum[:])}
	w.file = filepath.Join("sessions", strconv.FormatInt(sessionID, 10), w.sha256+".diff")
	path := filepath.Join(filepath.Dir(s.path), w.file)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return w, fmt.Errorf("keep the whole diff (%d bytes): %w", len(diff), err)
	}
	if err := atomicfile.Write(path, []byte(diff)); err != nil {
		return w, fmt.Errorf("keep the whole diff (%d bytes): %w", len(diff), err)
	}
	return w, nil
}

// WholeDiff opens the whole diff of request r, which was cut (DiffCut):
// the file is checked against the size and SHA-256 the row keeps first, so
// what is read is what was asked. The caller closes it.
func (s *Store) WholeDiff(r Request) (*os.File, error) {
	if !r.DiffCut() {
		return nil, fmt.Errorf("request %d's diff is whole in the database", r.ID)
	}
	// The file is found by the row's name inside this database's folder,
	// never by a path the row could point elsewhere with.
	path := filepath.Join(s.SessionDir(r.SessionID), filepath.Base(r.DiffFile))
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the whole diff of request %d: %w", r.ID, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err == nil && (n != r.DiffBytes || hex.EncodeToString(h.Sum(nil)) != r.DiffSHA256) {
		err = fmt.Errorf("%s is %d bytes with SHA-256 %x, not the %d bytes with SHA-256 %s the request recorded", path, n, h.Sum(nil), r.DiffBytes, r.DiffSHA256)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the whole diff of request %d: %w", r.ID, err)
	}
	return f, nil
}

// cutDiff is the head of diff that fits in max bytes, cut after a line
// (inside the line when the first line alone is longer).
func cutDiff(diff string, max int) string {
	if len(diff) <= max {
		return diff
	}
	head := diff[:max]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1]
	}
	return cutText(head, max)
}

// cutText is text cut to at most max bytes on a character's boundary, with
// a note of its whole length when cut.
func cutText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	note := fmt.Sprintf("… [cut: %d bytes in all]", len(text))
	cut := max - len(note)
	for i := 0; i < utf8.UTFMax && cut > 0 && !utf8.RuneStart(text[cut]); i++ {
		cut-- // not inside a character
	}
	return text[:cut] + note
}
