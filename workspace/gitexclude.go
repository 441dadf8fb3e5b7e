package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HideFromGit keeps files agentinfra creates for itself beside the matrix
// (the store's lock file, the previous version, the record of a change in
// progress) out of `git status`: it adds them, anchored at the work tree's
// top, to the repository's .git/info/exclude — the ignore list that lives in
// the clone and is never committed — unless a .gitignore next to the first
// names it already (the one `agentinfra init` writes names them all). A name
// may be a glob (".DEVELOPMENT_MATRIX.md.tmp-*"). Outside a git repository it
// does nothing. It is best-effort: nothing fails because of it.
func HideFromGit(paths ...string) {
	if len(paths) == 0 {
		return
	}
	abs, err := filepath.Abs(paths[0])
	if err != nil {
		return
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(abs), ".gitignore")); err == nil && hasLine(b, filepath.Base(abs)) {
		return
	}
	top, common, ok := gitDirs(filepath.Dir(abs))
	if !ok {
		return
	}
	exclude := filepath.Join(common, "info", "exclude")
	old, err := os.ReadFile(exclude)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	var add []string
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(top, a)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if entry := "/" + filepath.ToSlash(rel); !hasLine(old, entry) {
			add = append(add, entry)
		}
	}
	if len(add) == 0 {
		return
	}
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(exclude, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	sep := ""
	if len(old) > 0 && old[len(old)-1] != '\n' {
		sep = "\n"
	}
	_, _ = f.WriteString(sep + "# agentinfra: the matrix store's own files (local to this clone)\n" + strings.Join(add, "\n") + "\n")
}

// gitDirs finds the git work tree holding dir: its top, and the common git
// folder (the main .git of a linked worktree), where info/exclude lives.
func gitDirs(dir string) (top, common string, ok bool) {
	for {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return dir, dotgit, true
		case err == nil:
			// A linked worktree or a submodule: ".git" holds "gitdir: PATH".
			b, err := os.ReadFile(dotgit)
			if err != nil {
				return "", "", false
			}
			gitdir := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(dir, gitdir)
			}
			common = gitdir
			if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
				common = strings.TrimSpace(string(c))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gitdir, common)
				}
			}
			return dir, filepath.Clean(common), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", false
		}
		dir = parent
	}
}

// hasLine reports whether b has a line that is s (white space around it aside).
func hasLine(b []byte, s string) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == s {
			return true
		}
	}
	return false
}
