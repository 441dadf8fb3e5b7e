package policy

import (
	"errors"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// simpleCommand is one command of a command line, its words literal.
type simpleCommand struct {
	Args []string
	// Redirects are the files it writes to ("" for a descriptor duplication).
	Redirects []string
}

// parsed is what a command line is made of, for matching it against the
// auto_approve.commands globs.
type parsed struct {
	Cmds []simpleCommand
	// Dynamic: something only a shell can know (a substitution, a variable,
	// a glob, a loop, a function, a background job, an assignment, a
	// here-document): never auto-approved.
	Dynamic bool
	Err     error
}

// parseLine parses a command line as bash does.
func parseLine(line string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
}

// parseCommand splits a command line into its simple commands (joined by
// ;, &&, ||, |), unwrapping `bash -c 'LINE'` (as codex shows its commands).
// What the commands can do is graded separately (grade, commands.go): this
// is only the shape the globs match.
func parseCommand(line string) parsed {
	var p parsed
	f, err := parseLine(line)
	if err != nil {
		return parsed{Dynamic: true, Err: err}
	}
	for _, st := range f.Stmts {
		p.stmt(st, 0)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp, *syntax.ExtGlob:
			p.Dynamic = true
		}
		return true
	})
	return p
}

func (p *parsed) stmt(st *syntax.Stmt, depth int) {
	if st.Background || st.Coprocess || st.Negated || depth > 4 {
		p.Dynamic = true
		return
	}
	var redirs []string
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.DplOut, syntax.DplIn:
			if w, ok := literal(r.Word); ok && dupTarget(w) {
				redirs = append(redirs, "")
				continue
			}
			p.Dynamic = true
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.AppClob, syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
			w, ok := literal(r.Word)
			if !ok {
				p.Dynamic = true
			}
			if !harmlessDevice(w) {
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
		args, ok := literals(c.Args)
		if !ok {
			p.Dynamic = true
			return
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

// dupTarget reports whether a >& or <& word duplicates a descriptor (a
// number, or - to close) rather than naming a file (>&file writes it).
func dupTarget(w string) bool {
	if w == "-" {
		return true
	}
	w = strings.TrimSuffix(w, "-")
	return w != "" && strings.Trim(w, "0123456789") == ""
}

// harmlessDevice: redirections to these write no file.
func harmlessDevice(w string) bool {
	return w == "/dev/null" || w == "/dev/stdout" || w == "/dev/stderr" || w == "/dev/tty"
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
	if d := path.Dir(args[0]); d != "." && !trustedDir(d) {
		return "", false
	}
	if args[1] != "-c" && args[1] != "-lc" {
		return "", false
	}
	return args[2], true
}

func literals(ws []*syntax.Word) ([]string, bool) {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		s, ok := literal(w)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// literal is a word's value when the shell would not expand it: quotes
// and escapes removed ($'…' decoded), no parameter, substitution,
// arithmetic, glob or brace expansion. A leading ~ is kept as written (the
// path rules take it as a home folder, outside the worktree).
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if shellPattern(x.Value) {
				return "", false
			}
			b.WriteString(unescape(x.Value))
		case *syntax.SglQuoted:
			if !x.Dollar {
				b.WriteString(x.Value)
				continue
			}
			s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{x}})
			if err != nil || strings.ContainsRune(s, 0) {
				return "", false
			}
			b.WriteString(s)
		case *syntax.DblQuoted:
			if x.Dollar {
				return "", false // $"…": translated by the locale
			}
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return "", false
				}
			}
			s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{x}})
			if err != nil {
				return "", false
			}
			b.WriteString(s)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes an unquoted literal's backslashes (\x is x; a
// backslash-newline joins lines).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// shellPattern reports whether an unquoted literal holds a glob the shell
// would expand (*, ?, [...]) or a brace expansion ({a,b}, {1..3}).
func shellPattern(s string) bool {
	s = unescapedOnly(s)
	if strings.ContainsAny(s, "*?") {
		return true
	}
	if i := strings.IndexByte(s, '['); i >= 0 && strings.IndexByte(s[i:], ']') > 0 {
		return true
	}
	if i := strings.IndexByte(s, '{'); i >= 0 {
		rest := s[i:]
		if j := strings.IndexByte(rest, '}'); j > 0 && (strings.Contains(rest[:j], ",") || strings.Contains(rest[:j], "..")) {
			return true
		}
	}
	return false
}

// unescapedOnly drops backslash-escaped characters of an unquoted literal
// (they are taken as they are) so that only the special ones remain.
func unescapedOnly(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// wordSep joins a command's words for glob matching: a byte no shell word
// holds, so a rule's words match the command's words, not their text.
const wordSep = "\x00"

// key is the command's words as globs match them.
func (c simpleCommand) key() string { return strings.Join(c.Args, wordSep) }

// String is the command as a person (and a rule) writes it: its words,
// each quoted only when the shell would otherwise read it differently.
func (c simpleCommand) String() string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		out[i] = quoteWord(a, i == 0)
	}
	return strings.Join(out, " ")
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./^-]+$`)

func quoteWord(s string, first bool) string {
	if plainWord.MatchString(s) && !(first && strings.Contains(s, "=")) {
		return s
	}
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "'" + s + "'"
	}
	return q
}

// commandGlob is an auto_approve.commands glob, compiled. A glob is
// written as a command is, in shell words: an unquoted * is any run of
// characters (across words too: `go test *`), an unquoted ? any one
// character; quoted or backslash-escaped they are themselves. `echo 'hello
// world'` matches the command echo with the one word hello world — the form
// "approve always" writes, with the command's own quoting.
type commandGlob struct{ re *regexp.Regexp }

var errNotOneCommand = errors.New("is not one plain command in shell words (no pipes, ;, redirections, variables or substitutions)")

func compileGlob(glob string) (commandGlob, error) {
	f, err := parseLine(strings.TrimSpace(glob))
	if err != nil {
		return commandGlob{}, errNotOneCommand
	}
	if len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) > 0 || f.Stmts[0].Background || f.Stmts[0].Negated {
		return commandGlob{}, errNotOneCommand
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return commandGlob{}, errNotOneCommand
	}
	var b strings.Builder
	b.WriteString("^")
	for i, w := range c.Args {
		if i > 0 {
			b.WriteString(regexp.QuoteMeta(wordSep))
		}
		for _, part := range w.Parts {
			switch x := part.(type) {
			case *syntax.Lit:
				for j := 0; j < len(x.Value); j++ {
					switch ch := x.Value[j]; {
					case ch == '\\' && j+1 < len(x.Value):
						j++
						b.WriteString(regexp.QuoteMeta(x.Value[j : j+1]))
					case ch == '*':
						b.WriteString(".*")
					case ch == '?':
						b.WriteString("[^\x00]")
					default:
						b.WriteString(regexp.QuoteMeta(x.Value[j : j+1]))
					}
				}
			case *syntax.SglQuoted, *syntax.DblQuoted:
				s, ok := literal(&syntax.Word{Parts: []syntax.WordPart{part}})
				if !ok {
					return commandGlob{}, errNotOneCommand
				}
				b.WriteString(regexp.QuoteMeta(s))
			default:
				return commandGlob{}, errNotOneCommand
			}
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return commandGlob{}, err
	}
	return commandGlob{re: re}, nil
}

func (g commandGlob) match(c simpleCommand) bool { return g.re != nil && g.re.MatchString(c.key()) }

// anyGlob is the first of globs that matches c ("" when none does; a glob
// that does not compile matches nothing).
func anyGlob(globs []string, c simpleCommand) string {
	for _, g := range globs {
		if cg, err := compileGlob(g); err == nil && cg.match(c) {
			return g
		}
	}
	return ""
}
