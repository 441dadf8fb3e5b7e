package policy

import (
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// simpleCommand is one command of a command line, its words literal.
type simpleCommand struct {
	Args []string
	// Redirects are the files it writes to ("" for a descriptor duplication).
	Redirects []string
}

// parsed is what a command line is made of.
type parsed struct {
	Cmds []simpleCommand
	// Dynamic: something only a shell can know (a substitution, a variable,
	// a loop, a function, a background job, an assignment): never
	// auto-approved, and at least high risk.
	Dynamic bool
	Err     error
}

// parseCommand splits a command line into its simple commands (joined by
// ;, &&, ||, |), unwrapping `bash -c 'LINE'` (as codex shows its commands).
func parseCommand(line string) parsed {
	var p parsed
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return parsed{Dynamic: true, Err: err}
	}
	for _, st := range f.Stmts {
		p.stmt(st, 0)
	}
	return p
}

func (p *parsed) stmt(st *syntax.Stmt, depth int) {
	if st.Background || st.Coprocess || depth > 4 {
		p.Dynamic = true
		return
	}
	var redirs []string
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.DplOut, syntax.DplIn:
			redirs = append(redirs, "")
			continue
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
			w, ok := literal(r.Word)
			if !ok {
				p.Dynamic = true
			}
			if w != "/dev/null" {
				redirs = append(redirs, w)
			}
		case syntax.RdrIn:
			if _, ok := literal(r.Word); !ok {
				p.Dynamic = true
			}
		default: // here-documents and the like
			p.Dynamic = true
		}
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			p.Dynamic = true
			return
		}
		var args []string
		for _, w := range c.Args {
			s, ok := literal(w)
			if !ok {
				p.Dynamic = true
				return
			}
			args = append(args, s)
		}
		if inner, ok := shellDashC(args); ok {
			q := parseCommand(inner)
			p.Cmds = append(p.Cmds, q.Cmds...)
			p.Dynamic = p.Dynamic || q.Dynamic
			if len(redirs) > 0 && len(p.Cmds) > 0 {
				p.Cmds[len(p.Cmds)-1].Redirects = append(p.Cmds[len(p.Cmds)-1].Redirects, redirs...)
			}
			return
		}
		p.Cmds = append(p.Cmds, simpleCommand{Args: args, Redirects: redirs})
	case *syntax.BinaryCmd:
		p.stmt(c.X, depth+1)
		p.stmt(c.Y, depth+1)
		if len(redirs) > 0 && len(p.Cmds) > 0 {
			p.Cmds[len(p.Cmds)-1].Redirects = append(p.Cmds[len(p.Cmds)-1].Redirects, redirs...)
		}
	default:
		p.Dynamic = true
	}
}

// shellDashC recognizes `bash -c LINE` / `sh -lc LINE` / `/bin/zsh -c LINE`.
func shellDashC(args []string) (string, bool) {
	if len(args) != 3 {
		return "", false
	}
	switch path.Base(args[0]) {
	case "bash", "sh", "zsh", "dash":
	default:
		return "", false
	}
	if args[1] != "-c" && args[1] != "-lc" {
		return "", false
	}
	return args[2], true
}

// literal is a word's value when it has no expansion.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, "*?[") { // a glob only the shell expands
				return "", false
			}
			b.WriteString(unescape(x.Value))
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	s := b.String()
	if strings.HasPrefix(s, "~") {
		return s, true // kept as written; risk rules treat ~ as outside the workspace
	}
	return s, true
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// String is the command's words joined by single spaces (what globs match).
func (c simpleCommand) String() string { return strings.Join(c.Args, " ") }

// globMatch matches a command glob: * is any run of characters (spaces and
// slashes included), ? any one character; everything else is itself.
func globMatch(glob, s string) bool {
	return globRegexp(glob).MatchString(s)
}

func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range strings.TrimSpace(glob) {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func anyGlob(globs []string, s string) string {
	for _, g := range globs {
		if globMatch(g, s) {
			return g
		}
	}
	return ""
}
