package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// UpdateOptions tunes UpdateTask.
type UpdateOptions struct {
	// Force skips the check that a new Mode or Skills exist in the workspace.
	Force bool
	// Getenv locates the global skills folder; nil means os.Getenv.
	Getenv func(string) string
}

// UpdateResult reports what UpdateTask did.
type UpdateResult struct {
	Before matrix.Task `json:"before"`
	After  matrix.Task `json:"after"`
	// Changed names the fields that changed (status, priority, difficulty,
	// mode, skills, agents, description, created, or an extra column's header),
	// not counting Updated.
	Changed []string `json:"changed"`
	// LogFile is the README (absolute path) that got a status line, or "".
	LogFile string `json:"log_file,omitempty"`
}

// UpdateTask changes one row under the matrix lock (see matrix.Doc.UpdateTask:
// only given fields, Updated set, @mentions added once, values validated).
// When the status changes and the task's README has a status or log section,
// a dated line "- YYYY-MM-DD HH:MM: status OLD → NEW" is appended to it; the
// README and the row change together or not at all.
func UpdateTask(ctx context.Context, ws *workspace.Workspace, id string, u matrix.Update, now time.Time, o UpdateOptions) (UpdateResult, error) {
	if !o.Force {
		mode := ""
		if u.Mode != nil {
			mode = *u.Mode
		}
		var sk []string
		if u.Skills != nil {
			sk = cleanList(*u.Skills)
		}
		for k, v := range u.Set {
			switch matrix.CanonicalColumn(k) {
			case matrix.ColMode:
				mode = v
			case matrix.ColSkills:
				sk = append(sk, cleanList(strings.Split(v, ","))...)
			}
		}
		if err := CheckRefs(ws, o.Getenv, mode, sk); err != nil {
			return UpdateResult{}, err
		}
	}
	var (
		res     UpdateResult
		readme  string // README rewritten in fn
		oldBody []byte
	)
	s, err := store(ws)
	if err != nil {
		return UpdateResult{}, err
	}
	_, err = s.Modify(ctx, func(d *matrix.Doc) error {
		before, ok := d.Task(id)
		if !ok {
			return d.NotFound(id)
		}
		after, err := d.UpdateTask(id, u, now)
		if err != nil {
			return err
		}
		res = UpdateResult{Before: before, After: after, Changed: changedFields(before, after)}
		if before.Status == after.Status {
			return nil
		}
		dir, _ := ws.FindTaskDir(id)
		if dir == "" {
			return nil
		}
		p := filepath.Join(dir, "README.md")
		body, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("read task README: %w", err)
		}
		line := fmt.Sprintf("- %s: status %s → %s", now.Format("2006-01-02 15:04"), before.Status, after.Status)
		nb, ok := AppendStatusLine(body, line)
		if !ok {
			return nil
		}
		if err := writeFileAtomic(p, nb); err != nil {
			return fmt.Errorf("append to task README: %w", err)
		}
		readme, oldBody, res.LogFile = p, body, p
		if testHookBeforeWrite != nil {
			return testHookBeforeWrite()
		}
		return nil
	})
	if err != nil {
		if readme != "" {
			_ = writeFileAtomic(readme, oldBody) // the row was not written: undo the README line
		}
		return UpdateResult{}, err
	}
	return res, nil
}

func changedFields(a, b matrix.Task) []string {
	out := []string{}
	add := func(name string, x, y string) {
		if x != y {
			out = append(out, name)
		}
	}
	add("status", a.Status, b.Status)
	add("priority", a.Priority, b.Priority)
	add("difficulty", a.Difficulty, b.Difficulty)
	add("mode", a.Mode, b.Mode)
	add("skills", strings.Join(a.Skills, ","), strings.Join(b.Skills, ","))
	add("agents", strings.Join(a.Agents, " "), strings.Join(b.Agents, " "))
	add("description", a.Description, b.Description)
	add("created", a.Created, b.Created)
	var keys []string
	for k := range b.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(k, a.Extra[k], b.Extra[k])
	}
	return out
}

// AppendStatusLine adds line at the end of the README's status or log
// section: the first Markdown heading whose text contains "status", "log" or
// "history" (outside code fences). ok is false when there is no such section.
func AppendStatusLine(readme []byte, line string) (out []byte, ok bool) {
	lines := strings.SplitAfter(string(readme), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type heading struct{ idx, level int }
	var heads []heading
	start, level := -1, 0
	fence := ""
	for i, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		trim := strings.TrimLeft(t, " ")
		if len(t)-len(trim) <= 3 && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
			switch {
			case fence == "":
				fence = trim[:3]
			case strings.HasPrefix(trim, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		lv, text := atxHeading(t)
		if lv == 0 {
			continue
		}
		heads = append(heads, heading{i, lv})
		lt := strings.ToLower(text)
		// The first matching section heading wins; a level-1 title only when nothing else matches.
		if strings.Contains(lt, "status") || strings.Contains(lt, "log") || strings.Contains(lt, "history") {
			if start < 0 || (level == 1 && lv > 1) {
				start, level = i, lv
			}
		}
	}
	if start < 0 {
		return readme, false
	}
	end := len(lines)
	for _, h := range heads {
		if h.idx > start && h.level <= level {
			end = h.idx
			break
		}
	}
	last := start
	for i := end - 1; i > start; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			last = i
			break
		}
	}
	eol := "\n"
	if strings.HasSuffix(lines[start], "\r\n") {
		eol = "\r\n"
	}
	var b strings.Builder
	for i := 0; i <= last; i++ {
		b.WriteString(lines[i])
	}
	if !strings.HasSuffix(lines[last], "\n") {
		b.WriteString(eol)
	}
	if last == start {
		b.WriteString(eol)
	}
	b.WriteString(line + eol)
	for i := last + 1; i < len(lines); i++ {
		b.WriteString(lines[i])
	}
	return []byte(b.String()), true
}

// atxHeading returns the level and text of a "# text" line, or 0.
func atxHeading(l string) (int, string) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return 0, ""
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, ""
	}
	return n, strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[n:]), "#"))
}

// writeFileAtomic replaces p via a temp file and rename, keeping p's mode.
func writeFileAtomic(p string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
