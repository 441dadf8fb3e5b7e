package bridge

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/internal/textdiff"
)

// editDiff is the unified diff of an edit computed against the file on
// disk: the file's current content with oldText replaced by newText (all
// of them when all), or newText as the whole file when oldText is nil.
func EditDiff(root, file string, oldText *string, newText string, all bool) string {
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	cur, _ := os.ReadFile(path)
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
