package task

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// The holder of a task on a matrix without an Agents column.
//
// Many real matrices have no Agents column. A claim (task claim, dispatch,
// a fleet agent's --task) must still record who holds the task, where a
// person reads it and where the next claimer's compare-and-set finds it:
// the task README's status log, in the line the status change writes
// anyway:
//
//	- 2026-01-21 10:00: status TODO → IN_PROGRESS by @alice: claimed by @alice
//
// The holder of an IN_PROGRESS task is the @mention of the README's last
// "claimed by" line. A task with no folder gets one (the scaffold) before it
// is claimed. `agentinfra migrate --add-columns` adds the Agents column and
// moves these holders into it. Every other @mention given for the row
// (task update --agent) is logged the same way ("@x named as an agent").

// claimedByMarker starts the holder's part of a status log line.
const claimedByMarker = "claimed by "

// ReadmeHolder returns the @mention of the last "claimed by @x" line of a
// task README, or "".
func ReadmeHolder(readme []byte) string {
	i := bytes.LastIndex(readme, []byte(claimedByMarker+"@"))
	if i < 0 {
		return ""
	}
	rest := readme[i+len(claimedByMarker):]
	n := 1
	for n < len(rest) && (isMentionByte(rest[n])) {
		n++
	}
	for n > 1 && rest[n-1] == '.' { // a sentence's full stop
		n--
	}
	if n == 1 {
		return ""
	}
	return string(rest[:n])
}

func isMentionByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// holderIn returns who holds task t of d: the last @mention of Agents when
// its table has an Agents column (Holder), else, while t is IN_PROGRESS, the
// holder its README's status log names ("" when none).
func holderIn(ws *workspace.Workspace, d *matrix.Doc, t matrix.Task) string {
	if d.RowHasColumn(t.ID, matrix.ColAgents) {
		return holderOf(t)
	}
	if !IsStatus(d.Vocabulary(), t, StatusInProgress) {
		return ""
	}
	return readmeHolderOf(ws, d, t.ID)
}

// readmeHolderOf reads the holder from the README of task id's folder.
func readmeHolderOf(ws *workspace.Workspace, d *matrix.Doc, id string) string {
	dir, _ := Folder(ws, d, id)
	if dir == "" {
		return ""
	}
	b, err := ws.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		return ""
	}
	return ReadmeHolder(b)
}

// RowUpdate splits u for the row of id: what the row can take, and the
// @mentions that go to the README instead because the row's table has no
// Agents column (u.AddAgents, and a Set of Agents). Readers that show a row
// as an update would leave it (dispatch --dry-run) use the first part.
func RowUpdate(d *matrix.Doc, id string, u matrix.Update) (matrix.Update, []string) {
	if d.TaskIndex(id) < 0 || d.RowHasColumn(id, matrix.ColAgents) {
		return u, nil
	}
	var mentions []string
	for _, a := range u.AddAgents {
		if m, err := matrix.NormalizeMention(a); err == nil {
			mentions = append(mentions, m)
		}
	}
	u.AddAgents = nil
	if len(u.Set) > 0 {
		set := make(map[string]string, len(u.Set))
		for k, v := range u.Set {
			if matrix.CanonicalColumn(k) == matrix.ColAgents {
				continue // a release empties it: the status log says so
			}
			set[k] = v
		}
		u.Set = set
	}
	return u, mentions
}

// agentsNote is the status log's words for mentions the row could not take:
// a claim when the status became IN_PROGRESS, else a naming.
func agentsNote(v *matrix.Vocabulary, after matrix.Task, mentions []string) string {
	if len(mentions) == 0 {
		return ""
	}
	if IsStatus(v, after, StatusInProgress) {
		return claimedByMarker + mentions[len(mentions)-1]
	}
	return strings.Join(mentions, " ") + " named as an agent (the matrix has no Agents column)"
}

// ensureHolderFolder gives task id a folder (the scaffold) when its row's
// table has no Agents column, it has none, and worth says the change will be
// made (a refused claim scaffolds nothing): the README is where its holder is
// recorded. A folder made meanwhile by someone else is fine.
func ensureHolderFolder(ctx context.Context, ws *workspace.Workspace, id string, now time.Time, worth func(*matrix.Doc, matrix.Task) bool) error {
	st, err := OpenStore(ws)
	if err != nil {
		return err
	}
	d, err := st.Load(ctx)
	if err != nil {
		return err
	}
	t, ok := d.Task(id)
	if !ok || d.RowHasColumn(id, matrix.ColAgents) || !worth(d, t) {
		return nil
	}
	if dir, _ := Folder(ws, d, id); dir != "" {
		return nil
	}
	if _, _, err := ScaffoldTask(ctx, ws, id, ScaffoldOptions{}, now); err != nil && !errors.Is(err, ErrExists) {
		return err
	}
	return nil
}
