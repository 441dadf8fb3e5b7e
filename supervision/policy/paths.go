package policy

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Place is where a path an agent names leads once its symlinks and ".."
// are followed, and what that means for the policy. Every path rule — a
// write, an edit, a read, a redirection, a command's file operand, and the
// agent-side tools' accept_diff — judges the Place (JudgePath), never the
// text it was given: a committed symlink docs/gitdir → ../.git makes
// docs/gitdir/config the file .git/config, and a write: ["docs/**"] rule
// does not match it.
type Place struct {
	// Given is the path as the agent named it.
	Given string
	// Abs is where it leads: absolute, its symlinks followed.
	Abs string
	// Rel is Abs relative to the root in slash form ("." for the root
	// itself); "" when it leads outside the root.
	Rel string
	// Symlink: a symlink was followed on the way.
	Symlink bool
	// Never says why no rule may auto-approve it (it leads outside the
	// worktree, into a git directory, or to one of agentinfra's control
	// files); "" when rules may. A path with a Never reason is critical.
	Never string
	// Where says what the place is when Never is set: outside (the
	// worktree), git (a git directory) or control (agentinfra's files).
	Where string
	// Secret: a secrets path (.env, keys, credentials).
	Secret bool
}

// Shown is the path as a person should read it: through a symlink, the
// name given and where it leads ("docs/gitdir/config → .git/config").
func (pl Place) Shown() string {
	to := pl.Rel
	if to == "" {
		to = pl.Abs
	}
	given := filepath.ToSlash(pl.Given)
	if to == "" || to == given || to == path.Clean(given) {
		return given
	}
	if !pl.Symlink && !strings.Contains(given, "..") && !filepath.IsAbs(pl.Given) {
		return given
	}
	return given + " → " + to
}

// maxSymlinks bounds the symlinks one path may follow (Linux's own limit).
const maxSymlinks = 40

// controlNames are agentinfra's own files in a worktree, relative to it: an
// agent that could write them would change who decides (supervision.operators),
// what is auto-approved, or the decisions themselves (the store).
var controlNames = []string{".agent/config.yaml", ".agent/" + FileName, ".agent/state"}

// Place judges file (absolute, or relative to the worktree) — the one
// judgement of paths that Assess, Evaluate, RuleFor and the agent-side
// tools share.
func (p *Policy) Place(file string) Place {
	return p.judge("", file)
}

func (p *Policy) judge(cwd, file string) Place {
	return judge(realRoot(p.Root), p.control(), p.Paths.Home, cwd, file)
}

// control are the absolute paths that are agentinfra's control files
// besides the worktree's own (controlNames): the user's agentinfra folders
// (the allowlist, the console and MCP tokens) and the policy file.
func (p *Policy) control() []string {
	var out []string
	if p.Paths.Allowlist != "" {
		out = append(out, filepath.Dir(p.Paths.Allowlist))
	}
	if p.Paths.UserConfig != "" {
		out = append(out, p.Paths.UserConfig)
	}
	if p.Paths.Workspace != "" {
		out = append(out, p.Paths.Workspace)
	}
	return out
}

func realRoot(root string) string {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return filepath.Clean(root)
}

// unknownDir is the folder of a command that runs after a cd agentinfra
// could not follow.
const unknownDir = "\x00unknown"

// Where a path leads, as Place.Where says it.
const (
	whereInside  = ""        // inside the worktree, and no rule forbids it
	whereOutside = "outside" // outside the worktree (or only the shell knows where)
	whereGit     = "git"     // inside a git directory
	whereControl = "control" // one of agentinfra's control files
)

// judge judges p (absolute, ~/…, or relative to cwd; cwd "" is the root)
// of the worktree root (its own symlinks resolved): it follows p's
// symlinks and ".." component by component, as the kernel would (a
// component that does not exist yet — a new file, a new folder — is taken
// as it is), and says where it leads and whether a rule may auto-approve it.
func judge(root string, control []string, home, cwd, p string) Place {
	pl := Place{Given: p}
	switch {
	case p == "":
		pl.Where, pl.Never = whereOutside, "an empty path"
		return pl
	case strings.ContainsRune(p, 0):
		pl.Where, pl.Never = whereOutside, "a path with a NUL byte"
		return pl
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			pl.Abs, pl.Where, pl.Never, pl.Secret = p, whereOutside, "it is in a home folder, outside the worktree", secret(p)
			return pl
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "~"):
		pl.Abs, pl.Where, pl.Never, pl.Secret = p, whereOutside, "it is in a home folder, outside the worktree", secret(p)
		return pl
	case cwd == unknownDir && !filepath.IsAbs(p):
		pl.Where, pl.Never = whereOutside, "it is relative to a folder only the shell knows (after a cd agentinfra cannot follow)"
		pl.Secret = secret(p)
		return pl
	}
	if cwd == "" || cwd == unknownDir {
		cwd = root
	} else if !filepath.IsAbs(cwd) {
		cwd = filepath.Join(root, cwd)
	}
	abs, linked, ok := resolve(cwd, p)
	pl.Abs, pl.Symlink = abs, linked
	if !ok {
		pl.Where, pl.Never = whereOutside, "its symlinks do not resolve (a loop)"
		return pl
	}
	pl.Rel, pl.Where, pl.Never = classify(root, control, abs)
	// Some tools clean a path as text before the kernel follows it
	// (dir/link/.. is dir as text, the link's parent to the kernel): a
	// path is judged both ways, and the worse one counts.
	lex, _, ok2 := resolve(cwd, filepath.Clean(p))
	if lex != abs {
		rel2, where2, never2 := classify(root, control, lex)
		if !ok2 {
			where2, never2 = whereOutside, "its symlinks do not resolve (a loop)"
		}
		if pl.Never == "" && never2 != "" {
			pl.Abs, pl.Rel, pl.Where, pl.Never = lex, rel2, where2, never2
		}
	}
	// The name as written counts too: .git named in the path is git's
	// folder whatever it resolves to.
	written := filepath.Clean(p)
	if !filepath.IsAbs(p) {
		written = filepath.Join(cwd, p)
	}
	if pl.Never == "" && within(root, written) {
		for _, el := range strings.Split(filepath.ToSlash(fromRoot(root, written)), "/") {
			if gitName(el) {
				pl.Where, pl.Never = whereGit, "it names a .git folder (git's own files: a hook or a config setting there runs commands)"
			}
		}
	}
	pl.Secret = secret(fromRoot(root, abs)) || secret(fromRoot(root, lex)) || secret(fromRoot(root, written))
	return pl
}

// fromRoot is p relative to root when it is inside (a secrets folder name
// in the worktree's own path does not count), else p.
func fromRoot(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && within(root, p) {
		return r
	}
	return p
}

// resolve follows p's symlinks and ".." from base (p absolute, or
// relative to base), as the kernel would. A component that does not exist
// is taken as it is and the walk goes on from it, so a ".." after it comes
// back to where the kernel would be once a tool has made the folder.
// ok is false after maxSymlinks symlinks (a loop).
func resolve(base, p string) (abs string, followed, ok bool) {
	if !filepath.IsAbs(p) {
		p = base + string(filepath.Separator) + p
	}
	todo := strings.Split(filepath.ToSlash(p), "/")
	cur := string(filepath.Separator)
	links := 0
	for len(todo) > 0 {
		el := todo[0]
		todo = todo[1:]
		switch el {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, el)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			cur = next
			continue
		}
		if links++; links > maxSymlinks {
			return next, true, false
		}
		followed = true
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return cur, followed, true
}

// classify says where abs is relative to root ("" when outside), where
// that is (whereGit, …), and why no rule may auto-approve it ("" when rules
// may).
func classify(root string, control []string, abs string) (rel, where, never string) {
	for _, c := range control {
		if c == "" {
			continue
		}
		if c = realRoot(c); within(c, abs) {
			where, never = whereControl, "it is agentinfra's own configuration ("+c+"): an agent must not change who decides or what is auto-approved"
		}
	}
	if !within(root, abs) {
		if never == "" {
			where, never = whereOutside, "it is outside the worktree"
		}
		return "", where, never
	}
	r, _ := filepath.Rel(root, abs)
	rel = filepath.ToSlash(r)
	for _, el := range strings.Split(rel, "/") {
		if gitName(el) {
			return rel, whereGit, "it is inside a .git folder (git's own files: a hook or a config setting there runs commands)"
		}
	}
	for _, c := range controlNames {
		if rel == c || strings.HasPrefix(rel, c+"/") {
			return rel, whereControl, "it is agentinfra's control file " + c + ": an agent must not change who decides, what is auto-approved, or the decisions"
		}
	}
	if never != "" {
		return rel, where, never
	}
	// A git directory by another name: a .git file's gitdir: link, a
	// worktree's or a submodule's folder, a bare repository.
	for dir := filepath.Dir(abs); within(root, dir) && dir != root; dir = filepath.Dir(dir) {
		if gitDir(dir) {
			r, _ := filepath.Rel(root, dir)
			return rel, whereGit, "it is inside the git directory " + filepath.ToSlash(r) + " (git's own files: a hook or a config setting there runs commands)"
		}
	}
	return rel, whereInside, ""
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// gitName reports whether a path element names git's folder, also as a
// case-insensitive file system or NTFS would read it (.GIT, ".git.", git~1).
func gitName(el string) bool {
	return strings.EqualFold(strings.TrimRight(el, ". "), ".git") || strings.EqualFold(el, "git~1")
}

// gitDir reports whether dir is a git directory by git's own test: HEAD
// and objects/ and refs/, or HEAD and commondir (a worktree's).
func gitDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	o, err1 := os.Stat(filepath.Join(dir, "objects"))
	r, err2 := os.Stat(filepath.Join(dir, "refs"))
	return err1 == nil && err2 == nil && o.IsDir() && r.IsDir()
}

var secretNames = []string{".env", ".netrc", ".npmrc", ".pypirc", "credentials", "id_rsa", "id_ed25519", "id_ecdsa", ".git-credentials"}
var secretDirs = []string{".ssh", ".aws", ".gnupg", ".docker", ".kube"}
var secretExts = []string{".pem", ".key", ".p12", ".pfx"}

func secret(p string) bool {
	p = filepath.ToSlash(p)
	base := path.Base(p)
	if slices.Contains(secretNames, base) || strings.HasPrefix(base, ".env.") || slices.Contains(secretExts, path.Ext(base)) {
		return true
	}
	for _, d := range secretDirs {
		if strings.Contains("/"+p+"/", "/"+d+"/") {
			return true
		}
	}
	return false
}

// ContentHidden says why a file's current content must not be shown in an
// edit's diff — a request, the inbox, the console, Slack — or "" when it
// may: a path (relative to root, or absolute) that leads outside the
// worktree, as named or through a symlink (~/.aws/credentials), or a
// secrets file (.env, keys) would put its secret in front of everyone who
// sees the request.
func ContentHidden(root, file string) string {
	pl := judge(realRoot(root), nil, "", "", file)
	switch {
	case pl.Where == whereOutside:
		return "it is outside the worktree"
	case pl.Secret:
		return "it is a secrets file"
	}
	return ""
}
