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

// HideFromGit keeps a file agentinfra creates for itself (the matrix store's
// lock file) out of `git status`: it adds the file, anchored at the work
// tree's top, to the repository's .git/info/exclude — the ignore list that
// lives in the clone and is never committed — unless a .gitignore next to it
// names it already (the one `agentinfra init` writes). Outside a git
// repository it does nothing. It is best-effort: nothing fails because of it.
func HideFromGit(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	name := filepath.Base(abs)
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(abs), ".gitignore")); err == nil && hasLine(b, name) {
		return
	}
	top, common, ok := gitDirs(filepath.Dir(abs))
	if !ok {
		return
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	entry := "/" + filepath.ToSlash(rel)
	exclude := filepath.Join(common, "info", "exclude")
	old, err := os.ReadFile(exclude)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if hasLine(old, entry) {
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
	_, _ = f.WriteString(sep + "# agentinfra: the matrix store's lock file (local to this clone)\n" + entry + "\n")
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
