package task

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// emptyDirs are created by Init even though the skeleton holds no files in them.
var emptyDirs = []string{"tasks", "archive", "skills"}

// Init creates root/.agent/ from the embedded skeleton: DEVELOPMENT_MATRIX.md,
// agents/ (starter modes, unless the workspace has modes of its own), skills/,
// tasks/, archive/ and templates/unified_task.md.
// It never overwrites anything that exists, so running it again is harmless.
// created lists what it made, relative to root, slash-separated, folders
// ending in "/", in creation order (empty when the workspace was complete).
func Init(ctx context.Context, root string) (created []string, err error) {
	created = []string{}
	if err := ctx.Err(); err != nil {
		return created, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return created, fmt.Errorf("resolve %q: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return created, fmt.Errorf("workspace root: %w; create the folder first or pass an existing --root", err)
	} else if !fi.IsDir() {
		return created, fmt.Errorf("workspace root %s is not a folder", abs)
	}
	agent := filepath.Join(abs, ".agent")
	mkdir := func(rel string) error {
		p := filepath.Join(agent, filepath.FromSlash(rel))
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s exists but is not a folder; move it away and run init again", p)
			}
			return nil
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil
			}
			return fmt.Errorf("create %s: %w", p, err)
		}
		created = append(created, path.Join(".agent", rel)+"/")
		return nil
	}
	if err := mkdir("."); err != nil {
		return created, err
	}
	// A workspace with modes of its own (not the starter modes an earlier
	// init wrote) keeps them alone: the four starter modes would sit beside
	// them as if they were the workspace's.
	sk := Skeleton()
	ownModes := false
	if ws, err := workspace.New(abs); err == nil {
		for _, m := range skills.ModeNames(ws) {
			if _, err := fs.Stat(sk, "agents/"+m+".md"); err != nil {
				ownModes = true
			}
		}
	}
	err = fs.WalkDir(sk, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if ownModes && path.Dir(p) == "agents" && !e.IsDir() {
			return nil
		}
		if e.IsDir() {
			return mkdir(p)
		}
		data, err := fs.ReadFile(sk, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(agent, filepath.FromSlash(p))
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil // never overwrite
			}
			return fmt.Errorf("create %s: %w", dst, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", dst, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
		created = append(created, path.Join(".agent", p))
		return nil
	})
	if err != nil {
		return created, err
	}
	for _, d := range emptyDirs {
		if err := mkdir(d); err != nil {
			return created, err
		}
	}
	return created, nil
}
