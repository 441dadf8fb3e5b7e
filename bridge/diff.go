package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/internal/regularfile"
	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// MaxEditFileBytes bounds the file an edit's diff is computed against
// (an Edit of a 30 MB file is diffed; the request keeps the diff's head).
const MaxEditFileBytes = 64 << 20

// EditDiff is the unified diff of an edit computed against the file on
// disk: the file's current content with oldText replaced by newText (all
// of them when all), or newText as the whole file when oldText is nil.
// The path is the agent's: it is read only if it is a regular file of at
// most MaxEditFileBytes — a FIFO would block the caller (the reader of
// the CLI's output) for good, /dev/zero would fill memory. Otherwise the
// diff is one line saying why there is none.
//
// A file whose content must not be shown (policy.ContentHidden: outside
// the worktree, a secrets file) is never read: the diff is the edit's own
// text alone (the old text the agent gave against the new), under a line
// saying why.
func EditDiff(root, file string, oldText *string, newText string, all bool) string {
	if why := policy.ContentHidden(root, file); why != "" {
		before := ""
		if oldText != nil {
			before = *oldText
		}
		d, _ := textdiff.Diff(filepath.ToSlash(file), before, newText)
		return fmt.Sprintf("agentinfra shows only the edit's own text, not the file's content: %s\n", why) + d
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	cur, err := regularfile.Read(path, MaxEditFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("agentinfra shows no diff of this edit: %v\n", err)
	}
	before := string(cur)
	after := newText
	if oldText != nil {
		if all {
			after = strings.ReplaceAll(before, *oldText, newText)
		} else {
			after = strings.Replace(before, *oldText, newText, 1)
		}
	}
	name := file
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		name = filepath.ToSlash(rel)
	}
	d, _ := textdiff.Diff(name, before, after)
	return d
}
