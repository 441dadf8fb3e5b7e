package codex

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/store"
)

// hookAsk is the call a PreToolUse hook asks about, in agentinfra's
// terms. codex names its tools to hooks as claude does: Bash (the command
// as the model wrote it), apply_patch (the patch, in its command), an MCP
// tool as mcp__<server>__<tool>, view_image (a path).
func hookAsk(root string, q hookQuery) bridge.Ask {
	var in struct {
		Command  string `json:"command"`
		Path     string `json:"path"`
		FilePath string `json:"file_path"`
	}
	json.Unmarshal(q.ToolInput, &in)
	switch q.ToolName {
	case "Bash":
		return bridge.Ask{NativeID: q.ToolUseID, Kind: store.KindCommand, Tool: "shell", ToolInput: string(q.ToolInput), Command: in.Command, Title: "Run " + in.Command}
	case "apply_patch":
		return patchAsk(root, q.ToolUseID, in.Command)
	}
	a := bridge.Ask{NativeID: q.ToolUseID, Kind: store.KindTool, Tool: q.ToolName, ToolInput: string(q.ToolInput), Title: "Use " + q.ToolName}
	if f := in.Path + in.FilePath; f != "" { // a tool with a path is judged as a read of it
		a.File, a.Title = f, q.ToolName+" "+f
	}
	return a
}

// patchAsk is an apply_patch call: every file the patch adds, updates,
// deletes or moves to, each judged (a patch of docs/a.md and
// .git/hooks/x is as critical as its worst file).
func patchAsk(root, itemID, patch string) bridge.Ask {
	var files []string
	for _, l := range strings.Split(patch, "\n") {
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if f, ok := strings.CutPrefix(l, p); ok {
				files = append(files, absIn(root, strings.TrimSpace(f)))
			}
		}
	}
	return editAsk(itemID, files, patch, patch)
}

// fileAsk is a fileChange item (requestApproval, item/*): its files and
// their unified diffs.
func fileAsk(itemID string, raw json.RawMessage) bridge.Ask {
	var changes []struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
		Kind struct {
			MovePath string `json:"move_path"`
		} `json:"kind"`
	}
	json.Unmarshal(raw, &changes)
	var files []string
	var diff strings.Builder
	for _, c := range changes {
		files = append(files, c.Path)
		if c.Kind.MovePath != "" {
			files = append(files, c.Kind.MovePath)
		}
		diff.WriteString(c.Diff)
	}
	return editAsk(itemID, files, diff.String(), string(raw))
}

// editAsk is an edit of files: the first is File, the others Files.
func editAsk(itemID string, files []string, diff, input string) bridge.Ask {
	a := bridge.Ask{NativeID: itemID, Kind: store.KindEdit, Tool: "apply_patch", ToolInput: input, Diff: diff,
		Title: "Edit " + strings.Join(files, ", ")}
	if len(files) > 0 {
		a.File, a.Files = files[0], files[1:]
	}
	return a
}

// absIn is path made absolute in root.
func absIn(root, path string) string {
	if filepath.IsAbs(path) || root == "" {
		return filepath.Clean(path)
	}
	return filepath.Join(root, path)
}

// sameCall reports whether a request codex makes is about the very call
// its hook asked about and agentinfra allowed: the same command (codex
// wraps it in `bash -lc`), or the same files.
func sameCall(root string, hooked, req bridge.Ask) bool {
	if hooked.Kind != req.Kind {
		return false
	}
	switch hooked.Kind {
	case store.KindCommand:
		return hooked.Command == req.Command || hooked.Command == unwrapShell(req.Command)
	case store.KindEdit:
		set := func(a bridge.Ask) []string {
			var out []string
			for _, f := range append([]string{a.File}, a.Files...) {
				out = append(out, absIn(root, f))
			}
			slices.Sort(out)
			return slices.Compact(out)
		}
		return slices.Equal(set(hooked), set(req))
	}
	return hooked.Tool == req.Tool && hooked.ToolInput == req.ToolInput
}

// unwrapShell is the command codex runs through `bash -lc CMD` (or sh,
// zsh; -c): CMD, as the shell reads the quoted word; the command itself
// when it is not so wrapped.
func unwrapShell(command string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) != 1 {
		return command
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || st.Background || len(call.Assigns) > 0 || len(call.Args) != 3 {
		return command
	}
	plain := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob:
			plain = false
		}
		return plain
	})
	if !plain {
		return command
	}
	var argv []string
	for _, w := range call.Args {
		s, err := expand.Literal(nil, w)
		if err != nil {
			return command
		}
		argv = append(argv, s)
	}
	if argv[1] != "-lc" && argv[1] != "-c" {
		return command
	}
	switch filepath.Base(argv[0]) {
	case "bash", "sh", "zsh":
		return argv[2]
	}
	return command
}
