package policy

import (
	"net/url"
	"slices"
	"strings"
)

// Action is something an agent wants to do.
type Action struct {
	Kind    string // command, edit, read, fetch, tool
	Tool    string
	Command string
	File    string // absolute, or relative to the worktree
	// Files are more files the same action changes (a codex apply_patch
	// of several files): each is judged as File is.
	Files []string
	URL   string
}

// Action kinds.
const (
	KindCommand = "command"
	KindEdit    = "edit"
	KindRead    = "read"
	KindFetch   = "fetch"
	KindTool    = "tool"
)

// Assessment is an action's risk and why.
type Assessment struct {
	Risk string
	Why  []string
	// Paths are the action's files as a person should read them
	// (Place.Shown: "docs/gitdir/config → .git/config").
	Paths []string
	// Never says why no rule may auto-approve the action ("" when rules
	// may): a path outside the worktree, in .git or a control file.
	Never string
}

func (a *Assessment) raise(risk, why string) {
	if !RiskAtMost(risk, a.Risk) {
		a.Risk = risk
	}
	if why != "" && !slices.Contains(a.Why, why) {
		a.Why = append(a.Why, why)
	}
}

// Assess grades an action of the worktree at root with no policy files
// (Policy.Assess with the user's allowlist folder as a control file too).
func Assess(root string, a Action) Assessment {
	return (&Policy{Root: root}).Assess(a)
}

// Assess grades an action: critical — every command form of the command
// table (commandForms: what runs other code or writes outside the
// worktree), a path that leads outside the worktree, into .git or a
// control file, writing a secrets file; high — network, rm -r, reading a
// secrets file, a git alias, anything a shell must expand; else low.
func (p *Policy) Assess(a Action) Assessment {
	as := Assessment{Risk: RiskLow}
	switch a.Kind {
	case KindCommand:
		p.assessCommand(a.Command, &as)
	case KindEdit, KindRead:
		for _, f := range append([]string{a.File}, a.Files...) {
			if f != "" || len(a.Files) == 0 {
				p.assessFile(f, a.Kind == KindEdit, &as)
			}
		}
	case KindFetch:
		as.raise(RiskHigh, "network: fetches "+hostOf(a.URL))
		if u, err := url.Parse(a.URL); err == nil && strings.EqualFold(u.Scheme, "file") {
			p.assessFile(u.Path, false, &as)
		}
	}
	return as
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// assessCommand grades a command line by the command table.
func (p *Policy) assessCommand(line string, as *Assessment) {
	g := &grader{root: realRoot(p.Root), control: p.control(), home: p.Paths.Home}
	g.grade(line, 0)
	if parseCommand(line).Dynamic {
		as.raise(RiskHigh, "the command has parts only a shell can expand")
	}
	for _, f := range commandForms {
		if f.line != nil {
			if why := f.line(g); why != "" {
				as.raise(f.Risk, why)
			}
			continue
		}
		for _, c := range g.calls {
			if why := f.call(g, c); why != "" {
				as.raise(f.Risk, why)
			}
		}
	}
}

// assessFile grades reading or writing file, judged where it leads.
func (p *Policy) assessFile(file string, write bool, as *Assessment) {
	if strings.TrimSpace(file) == "" {
		as.raise(RiskCritical, "the request names no file")
		as.Never = "the request names no file"
		return
	}
	pl := p.Place(file)
	as.Paths = append(as.Paths, pl.Shown())
	verb := "reads "
	if write {
		verb = "writes "
	}
	switch {
	case pl.Never != "":
		as.raise(RiskCritical, verb+pl.Shown()+": "+pl.Never)
		if as.Never == "" {
			as.Never = pl.Shown() + ": " + pl.Never
		}
	case write && pl.Secret:
		as.raise(RiskCritical, "writes a secrets path: "+pl.Shown())
	case pl.Secret:
		as.raise(RiskHigh, "reads a secrets path: "+pl.Shown())
	}
}
