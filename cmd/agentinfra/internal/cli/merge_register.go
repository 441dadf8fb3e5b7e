package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// The merge driver's registration: a .gitattributes line, committed so that
// every clone names the driver for the matrix, and two keys of this clone's
// git config, which git never shares (a clone without them merges the
// matrix line by line, without a word: validate warns about that).

const (
	matrixRel        = ".agent/DEVELOPMENT_MATRIX.md"
	mergeAttribute   = "merge=agentinfra"
	mergeDriverKey   = "merge.agentinfra.driver"
	mergeNameKey     = "merge.agentinfra.name"
	mergeDriverTitle = "agentinfra: merge the task matrix by task ID"
	registerCommand  = "agentinfra hook install"
)

// mergeDriverCommand is the driver git runs (through sh, from the
// repository's top). The binary that registers it is named by its absolute
// path: git is often run where PATH differs (an IDE, a GUI client, a
// hook), and the absolute path is the binary that knows the command. When
// that file is gone (moved, or a `go run` build) agentinfra on PATH runs;
// with neither, git's own line merge does, so that the file always gets
// markers rather than one side's version alone.
func mergeDriverCommand(self string) string {
	bin := "agentinfra"
	if self != "" && filepath.IsAbs(self) && !strings.Contains(self, string(filepath.Separator)+"go-build") {
		bin = self
	}
	// git expands %O %A %B %P %L; a % of the path is written %%.
	q := strings.ReplaceAll(ShellQuote(bin), "%", "%%")
	return "b=" + q + `; [ -x "$b" ] || b=$(command -v agentinfra) || { echo "agentinfra merge driver: agentinfra is not at "` + q +
		` "nor on PATH, so %P is merged line by line; run agentinfra hook install again" >&2; exec git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B; }; exec "$b" merge-driver %O %A %B %P %L`
}

// registerMergeDriver writes the .gitattributes line (in the workspace
// root, next to .agent/) and this clone's git config. It returns what it
// changed, in words; nothing when root is in no git repository.
func registerMergeDriver(ctx context.Context, root, self string) ([]string, error) {
	if _, err := gitOutput(ctx, root, "rev-parse", "--git-dir"); err != nil {
		return nil, nil // not a repository: nothing for git to run
	}
	var done []string
	changed, err := ensureMergeAttribute(filepath.Join(root, ".gitattributes"))
	if err != nil {
		return nil, err
	}
	if changed != "" {
		done = append(done, changed)
	}
	want := mergeDriverCommand(self)
	cur, _ := gitOutput(ctx, root, "config", "--local", "--get", mergeDriverKey)
	if strings.TrimSpace(cur) != want {
		if _, err := gitOutput(ctx, root, "config", "--local", mergeNameKey, mergeDriverTitle); err != nil {
			return nil, err
		}
		if _, err := gitOutput(ctx, root, "config", "--local", mergeDriverKey, want); err != nil {
			return nil, err
		}
		done = append(done, "registered the matrix's merge driver in this clone's git config ("+mergeDriverKey+")")
	}
	return done, nil
}

// ensureMergeAttribute adds the matrix's merge attribute to .gitattributes
// unless a line already sets it; every other line keeps its bytes.
func ensureMergeAttribute(path string) (string, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if line, _ := mergeAttributeLine(old); line > 0 {
		return "", nil
	}
	eol := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		eol = "\r\n"
	}
	buf := append([]byte{}, old...)
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		buf = append(buf, eol...)
	}
	buf = append(buf, matrixRel+" "+mergeAttribute+eol...)
	if err := atomicfile.Write(path, buf); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if len(old) == 0 {
		return "created .gitattributes (" + matrixRel + " " + mergeAttribute + "; commit it, so that every clone merges the matrix by task ID)", nil
	}
	return "added " + matrixRel + " " + mergeAttribute + " to .gitattributes (commit it, so that every clone merges the matrix by task ID)", nil
}

// mergeAttributeLine returns the line of .gitattributes that gives the
// matrix merge=agentinfra (0: none), and whether a line gives it another
// merge attribute after it (which wins).
func mergeAttributeLine(src []byte) (int, bool) {
	found, overridden := 0, false
	for i, line := range strings.Split(string(src), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if p := strings.TrimPrefix(f[0], "/"); p != matrixRel && p != "**/"+matrixRel && p != "*/"+matrixRel {
			continue
		}
		for _, a := range f[1:] {
			switch {
			case a == mergeAttribute:
				found, overridden = i+1, false
			case found > 0 && (strings.HasPrefix(a, "merge=") || a == "-merge" || a == "!merge" || a == "merge"):
				overridden = true
			}
		}
	}
	return found, overridden
}

// mergeDriverWarning is validate's warning for a clone whose .gitattributes
// names the driver while its git config lacks it: git then merges the matrix
// line by line and says nothing. Nil when all is well, or root is in no
// repository.
func mergeDriverWarning(ctx context.Context, f *Factory, ws *workspace.Workspace) *matrix.Diagnostic {
	path := filepath.Join(ws.Root, ".gitattributes")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	line, _ := mergeAttributeLine(src)
	if line == 0 || configFileSetsDriver(ws.Root) {
		return nil
	}
	// Not in the repository's config file: git decides (an include, a
	// worktree's config, no repository at all).
	if _, err := gitOutput(ctx, ws.Root, "rev-parse", "--git-dir"); err != nil {
		return nil
	}
	if cur, _ := gitOutput(ctx, ws.Root, "config", "--get", mergeDriverKey); strings.TrimSpace(cur) != "" {
		return nil
	}
	return &matrix.Diagnostic{File: displayPath(f.Cwd, path), Line: line, Col: 1, Severity: matrix.SeverityWarning,
		Message: "the matrix's merge driver (" + mergeAttribute + ") is named here but this clone's git config has no " + mergeDriverKey +
			", so git merges the matrix line by line, without a word; run `" + registerCommand + "` to register it"}
}

// configFileSetsDriver reports whether the config file of the repository
// holding dir sets merge.agentinfra.driver: read as text, so that validate
// (and every commit's hook) starts no git process in a clone that is set
// up. False when it cannot tell; the caller then asks git.
func configFileSetsDriver(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		gitPath := filepath.Join(d, ".git")
		fi, err := os.Stat(gitPath)
		if err == nil {
			common := gitPath
			if !fi.IsDir() { // a worktree's .git file: "gitdir: PATH", whose commondir holds the config
				b, err := os.ReadFile(gitPath)
				p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if err != nil || !ok {
					return false
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				common = p
				if c, err := os.ReadFile(filepath.Join(p, "commondir")); err == nil {
					common = strings.TrimSpace(string(c))
					if !filepath.IsAbs(common) {
						common = filepath.Join(p, common)
					}
				}
			}
			cfg, err := os.ReadFile(filepath.Join(common, "config"))
			return err == nil && configSetsDriver(string(cfg))
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// configSetsDriver reports whether a git config file's text has a driver
// key in its [merge "agentinfra"] section.
func configSetsDriver(cfg string) bool {
	in := false
	for _, line := range strings.Split(cfg, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			in = strings.EqualFold(strings.Join(strings.Fields(strings.Trim(l, "[]")), " "), `merge "agentinfra"`)
			continue
		}
		if k, v, ok := strings.Cut(l, "="); in && ok && strings.EqualFold(strings.TrimSpace(k), "driver") && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}
