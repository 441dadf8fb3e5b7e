package task

import (
	"os"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Folder finds the folder of task id, in .agent/tasks/ first, then
// .agent/archive/ (archived reports which). The matrix decides whose a
// folder is (matrix.TaskFolderID): with rows ISSUE and ISSUE_003, a lookup
// for ISSUE never returns ISSUE_003_login. d is the matrix when the caller
// has it parsed; nil reads the matrix file, only when a folder's name
// could belong to a longer ID.
func Folder(ws *workspace.Workspace, d *matrix.Doc, id string) (dir string, archived bool) {
	return ws.FindTaskDirOwned(id, folderOwner(ws, d, id))
}

// Folders lists every folder of task id in .agent/tasks/ (or .agent/archive/
// when archived), sorted, with Folder's rule.
func Folders(ws *workspace.Workspace, d *matrix.Doc, id string, archived bool) []string {
	return ws.TaskDirs(id, archived, folderOwner(ws, d, id))
}

func folderOwner(ws *workspace.Workspace, d *matrix.Doc, id string) func(string) string {
	if d != nil {
		return FolderOwner(d)
	}
	return fileFolderOwner(ws, id)
}

// fileFolderOwner is FolderOwner without a parsed matrix, for the callers
// that read one row (`agentinfra prompt ID`, a fleet task's prompt): a
// folder {id}_{rest} whose rest has no '_' is id's without a look; for one
// like auth_v2_login (task auth), the matrix file is read once and the
// longer IDs (auth_v2_login, auth_v2) are looked up in it.
func fileFolderOwner(ws *workspace.Workspace, id string) func(string) string {
	var src []byte
	var known map[string]bool // ID → has a row; each looked up once
	return func(name string) string {
		if rest, ok := strings.CutPrefix(name, id+"_"); !ok || !strings.Contains(rest, "_") {
			return ""
		}
		if known == nil {
			src, _ = os.ReadFile(ws.MatrixPath()) // none: every folder is id's, as before
			known = map[string]bool{}
		}
		hasID := func(c string) bool {
			has, ok := known[c]
			if !ok {
				has = len(src) > 0 && len((matrix.Query{ID: c}).Select(src)) > 0
				known[c] = has
			}
			return has
		}
		if owner, known := matrix.TaskFolderID(name, hasID); known {
			return owner
		}
		return ""
	}
}

// FolderOwner returns the task a folder name {id}_{slug} belongs to by the
// rows of d, "" when no row claims it; nil for a nil d.
func FolderOwner(d *matrix.Doc) func(folder string) string {
	if d == nil {
		return nil
	}
	return func(name string) string {
		if id, known := matrix.TaskFolderID(name, d.HasID); known {
			return id
		}
		return ""
	}
}
