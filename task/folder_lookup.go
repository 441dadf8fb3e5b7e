package task

import (
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Folder finds the folder of task id, in .agent/tasks/ first, then
// .agent/archive/ (archived reports which). With d, the matrix decides whose
// a folder is (matrix.TaskFolderID): with rows ISSUE and ISSUE_003, a lookup
// for ISSUE never returns ISSUE_003_login. d may be nil (no matrix at hand).
func Folder(ws *workspace.Workspace, d *matrix.Doc, id string) (dir string, archived bool) {
	return ws.FindTaskDirOwned(id, FolderOwner(d))
}

// Folders lists every folder of task id in .agent/tasks/ (or .agent/archive/
// when archived), sorted, with Folder's rule.
func Folders(ws *workspace.Workspace, d *matrix.Doc, id string, archived bool) []string {
	return ws.TaskDirs(id, archived, FolderOwner(d))
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
