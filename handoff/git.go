package handoff

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// handoffGit reads the branch, uncommitted files and last commits with the
// git CLI (argv, no shell). Failures become a note, never an error.
func readGit(ctx context.Context, root string, opts Options) Git {
	g := Git{Uncommitted: []GitFile{}, Commits: []GitCommit{}}
	bin, err := exec.LookPath(opts.Git)
	if err != nil {
		g.Note = fmt.Sprintf("git was not found (%s), so there is no repository information; install git or put it on PATH", mdtext.OneLine(err.Error()))
		return g
	}
	git := func(args ...string) (string, error) {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		// -c settings keep user configuration from changing the output we parse.
		argv := append([]string{"-C", root, "-c", "log.showSignature=false", "-c", "core.quotePath=false", "-c", "color.ui=never"}, args...)
		cmd := exec.CommandContext(cctx, bin, argv...)
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			msg := mdtext.OneLine(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return stdout.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return stdout.String(), nil
	}
	out, err := git("rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		if err != nil && !strings.Contains(err.Error(), "not a git repository") {
			g.Note = "git cannot read the workspace root: " + err.Error()
		} else {
			g.Note = "The workspace root is not in a git repository."
		}
		return g
	}
	g.Repo = true
	if p, err := git("rev-parse", "--show-prefix"); err == nil {
		g.Prefix = strings.TrimSpace(p)
	}
	if b, err := git("symbolic-ref", "--short", "-q", "HEAD"); err == nil && strings.TrimSpace(b) != "" {
		g.Branch = strings.TrimSpace(b)
	} else {
		g.Detached = true
	}
	hasHead := true
	if h, err := git("rev-parse", "--verify", "-q", "--short", "HEAD"); err == nil {
		g.Head = strings.TrimSpace(h)
	} else {
		hasHead = false
	}
	var notes []string
	if st, err := git("status", "--porcelain=v1", "-z", "--untracked-files=all"); err != nil {
		notes = append(notes, err.Error())
	} else {
		files := parseStatus(st)
		g.UncommittedTotal = len(files)
		g.Uncommitted = append(g.Uncommitted, files[:min(len(files), opts.GitFiles)]...)
	}
	if hasHead {
		lg, err := git("log", "-n", fmt.Sprint(Commits), "--no-color", "--date=iso-strict", "--format=%H%x1f%h%x1f%an%x1f%ad%x1f%s%x1e")
		if err != nil {
			notes = append(notes, err.Error())
		}
		for _, rec := range strings.Split(lg, "\x1e") {
			f := strings.Split(strings.TrimSpace(rec), "\x1f")
			if len(f) != 5 {
				continue
			}
			g.Commits = append(g.Commits, GitCommit{Hash: f[0], Short: f[1], Author: f[2], Date: f[3], Subject: f[4]})
		}
	} else {
		notes = append(notes, "The repository has no commits yet.")
	}
	g.Note = strings.Join(notes, " ")
	return g
}

// parseStatus parses `git status --porcelain=v1 -z`: "XY path\0",
// followed by "orig\0" for renames and copies.
func parseStatus(s string) []GitFile {
	files := []GitFile{}
	recs := strings.Split(s, "\x00")
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if len(r) < 4 {
			continue
		}
		f := GitFile{Status: r[:2], Path: r[3:]}
		if (r[0] == 'R' || r[0] == 'C') && i+1 < len(recs) {
			f.From = recs[i+1]
			i++
		}
		files = append(files, f)
	}
	return files
}
