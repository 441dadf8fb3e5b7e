package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docTable reads the command table of docs/supervision.md: the rows
// between its markers, as form → (example, risk).
func docTable(t *testing.T) [][3]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "supervision.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start, end := strings.Index(doc, "<!-- command table: policy.commandForms -->"), strings.Index(doc, "<!-- end of the command table -->")
	if start < 0 || end < start {
		t.Fatal("docs/supervision.md has no command table between its markers")
	}
	var rows [][3]string
	for _, line := range strings.Split(doc[start:end], "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Form") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := splitRow(line)
		if len(cells) != 3 {
			t.Fatalf("a row of the command table without 3 cells: %s", line)
		}
		ex := cells[1]
		if !strings.HasPrefix(ex, "`") || !strings.HasSuffix(ex, "`") {
			t.Fatalf("an example that is not in backquotes: %s", line)
		}
		rows = append(rows, [3]string{strings.ReplaceAll(cells[0], `\|`, "|"), strings.ReplaceAll(strings.Trim(ex, "`"), `\|`, "|"), cells[2]})
	}
	return rows
}

// splitRow splits a Markdown table row on the | that are not escaped.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && line[i+1] == '|' {
			cur.WriteString(`\|`)
			i++
			continue
		}
		if line[i] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// The docs' command table is the code's, row for row, and each example is
// graded as the table says — by its own row.
func TestDocsCommandTableIsHonest(t *testing.T) {
	rows := docTable(t)
	if len(rows) != len(commandForms) {
		t.Errorf("the docs' table has %d rows, commandForms %d", len(rows), len(commandForms))
	}
	root := t.TempDir()
	for i, r := range rows {
		if i >= len(commandForms) {
			break
		}
		f := commandForms[i]
		if r[0] != f.Form || r[1] != f.Example || r[2] != f.Risk {
			t.Errorf("row %d of the docs' table:\n  %q | %q | %s\nthe code's:\n  %q | %q | %s", i+1, r[0], r[1], r[2], f.Form, f.Example, f.Risk)
			continue
		}
		as := Assess(root, Action{Kind: KindCommand, Command: r[1]})
		if as.Risk != r[2] {
			t.Errorf("%s: graded %s (%q), the docs say %s", r[1], as.Risk, as.Why, r[2])
		}
		g := &grader{root: realRoot(root)}
		g.grade(r[1], 0)
		matched := f.line != nil && f.line(g) != ""
		for _, c := range g.calls {
			matched = matched || f.call != nil && f.call(g, c) != ""
		}
		if !matched {
			t.Errorf("%s is not graded by its own row %q", r[1], f.Form)
		}
	}
}

// Commands that only read or build stay low, whatever the table adds.
func TestOrdinaryCommandsStayLow(t *testing.T) {
	root := t.TempDir()
	for _, line := range []string{"git status", "git log --oneline -5", "git diff HEAD~1 -- docs", "git stash show stash@{0}", "git add -A",
		"git commit -m 'a message'", "git config user.name", "git config --get user.email", "go test ./...", "go vet ./...", "go build -o bin/x ./cmd/x",
		"ls -la", "cat README.md", "sed -n 1,20p main.go", "sed -i s/old/new/g main.go", "awk '{print $1}' a.txt", "grep -rn TODO .",
		"find . -name '*.go'", "echo hello > out.txt", "mkdir -p docs/x", "touch a.txt", "cp a.txt b.txt", "npm ls", "python3 --version",
		"[ -f x ] && echo y", "git log --output=o.txt", "head -n 5 a.txt 2>&1", "/bin/bash -lc 'git status'", "cd docs && ls",
		"timeout 60 go test ./...", "nice -n 10 go build ./..."} {
		if as := Assess(root, Action{Kind: KindCommand, Command: line}); as.Risk != RiskLow {
			t.Errorf("%s: %s %q, want low", line, as.Risk, as.Why)
		}
	}
}

// Tricks that hide a form from a text match: quotes, escapes, $'…',
// groups, substitutions, a cd into .git, a variable as the program.
func TestHiddenFormsAreFound(t *testing.T) {
	root := t.TempDir()
	for _, line := range []string{`"git" "-c" "x=y" status`, `g""it -c x=y status`, `\git -c x=y status`, `$'\x67it' -c x=y status`,
		`(git -c x=y status)`, `{ git -c a=b log; }`, `if true; then git -c a=b log; fi`, `echo "$(ls)"`, "echo `ls`", `cat <(ls)`,
		`g{i,}t status`, `$X status`, `cd .git && echo x > config`, `cd .git/hooks; cat > pre-commit <<EOF` + "\nid\nEOF",
		`git -C sub -c core.pager=id log`, `x='a[$(id)]'; echo $((x))`, `export GIT_DIR=/tmp/x`, `PATH=/tmp; git status`,
		`bash -c 'bash -c "git -c a=b log"'`, `f() { git -c a=b log; }; f`, `echo x >& .git/config`, `git log >.git/x`,
		`/usr/bin/env sh`, `./node_modules/.bin/x`, `git $(echo -c) a=b log`, "sed -n '1e id' README.md", "awk 'BEGIN{system(\"id\")}'",
		`tar xzf a.tgz`, `git --exec-path=/tmp log`, `git -c alias.x='!agentinfra approve 87 --reason x' x`,
		`timeout 60 sh script.sh`, `timeout 9 bash -c "git -c a=b log"`, `nice -n 5 timeout -s KILL 9 python3 x.py`, `nohup ./x &`, `cp -r /tmp/evil/.git sub/`,
		`cp -r /tmp/evil sub/`, `git init --separate-git-dir=/tmp/g x`, `echo x > /dev/tcp/127.0.0.1/80`} {
		if as := Assess(root, Action{Kind: KindCommand, Command: line}); as.Risk != RiskCritical {
			t.Errorf("%s: %s %q, want critical", line, as.Risk, as.Why)
		}
	}
}

// Globs match parsed words: a quoted word is one word, a quoted * is
// itself; and "approve always" writes the rule in that form.
func TestGlobsMatchWords(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		glob, line string
		match      bool
	}{
		{"echo 'hello world'", "echo 'hello world'", true},
		{"echo 'hello world'", `echo "hello world"`, true},
		{"echo 'hello world'", "echo hello world", false},
		{"echo hello world", "echo 'hello world'", false},
		{"go test *", "go test ./... -run 'A B'", true},
		{"go test *", "go test", false},
		{"echo '*'", "echo anything", false},
		{"echo '*'", "echo '*'", true},
		{`echo \*`, "echo '*'", true},
		{"git diff ?", "git diff x", true},
		{"git diff ?", "git diff 'a b'", false},
		{"ls | wc", "ls", false}, // not one command: matches nothing
	}
	for _, c := range cases {
		pc := parseCommand(c.line)
		if len(pc.Cmds) == 0 {
			t.Fatalf("%s does not parse", c.line)
		}
		if got := anyGlob([]string{c.glob}, pc.Cmds[0]) != ""; got != c.match {
			t.Errorf("glob %q against %q: %v, want %v", c.glob, c.line, got, c.match)
		}
	}
	// approve --always: the rule matches the command it came from, and
	// only it.
	for line, want := range map[string]string{
		"echo 'hello world'":            "echo 'hello world'",
		"/bin/bash -lc 'touch ok.txt'":  "touch ok.txt",
		`printf '%s\n' "a*b"`:           `printf '%s\n' 'a*b'`,
		"git log --format='%H %s' -n 3": "git log '--format=%H %s' -n 3",
	} {
		r, err := RuleFor(root, Action{Kind: KindCommand, Command: line})
		if err != nil || r.Value != want {
			t.Errorf("RuleFor(%s) = %q, %v; want %q", line, r.Value, err, want)
			continue
		}
		p := &Policy{Root: root, File: File{AutoApprove: AutoApprove{Commands: []string{r.Value}}}, Allowlist: Allowlist{Commands: []string{r.Value}}}
		if v := p.Evaluate(Action{Kind: KindCommand, Command: line}); !v.Auto {
			t.Errorf("the rule %q does not approve %s: %+v", r.Value, line, v)
		}
		if v := p.Evaluate(Action{Kind: KindCommand, Command: line + " extra"}); v.Auto {
			t.Errorf("the rule %q approves more than %s", r.Value, line)
		}
	}
	if _, err := RuleFor(root, Action{Kind: KindCommand, Command: "git status && rm -r build"}); err == nil {
		t.Error("a rule was made of two commands")
	}
}

// Item 10: "approve always" on a file named ** is a rule for that file.
func TestRuleForEscapesGlobCharacters(t *testing.T) {
	root := t.TempDir()
	r, err := RuleFor(root, Action{Kind: KindEdit, File: "**"})
	if err != nil || r != (Rule{"write", `\*\*`}) {
		t.Fatalf("RuleFor(**) = %+v, %v", r, err)
	}
	p := &Policy{Root: root, File: File{AutoApprove: AutoApprove{Write: []string{r.Value}}}, Allowlist: Allowlist{Write: []string{"**"}}}
	if !p.Evaluate(Action{Kind: KindEdit, File: "**"}).Auto || p.Evaluate(Action{Kind: KindEdit, File: "main.go"}).Auto {
		t.Errorf("the rule %q is not the file ** alone", r.Value)
	}
	r, _ = RuleFor(root, Action{Kind: KindEdit, File: "docs/[draft] {a,b}?.md"})
	if ok, _ := regexp.MatchString(`^docs/\\\[draft\\\] \\\{a,b\\\}\\\?\.md$`, r.Value); !ok {
		t.Errorf("escaped: %q", r.Value)
	}
	if _, err := RuleFor(root, Action{Kind: KindEdit, File: ".git/config"}); err == nil {
		t.Error("a rule was made for .git/config")
	}
}
