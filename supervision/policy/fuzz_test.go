package policy

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// criticalExamples are the command table's critical examples and the
// issue's own vectors: forms that run other code or write outside.
func criticalExamples() []string {
	out := slices.Clone(issueCommands)
	for _, f := range commandForms {
		if f.Risk == RiskCritical {
			out = append(out, f.Example)
		}
	}
	return out
}

// embed puts line e in one of the contexts a shell line can hide it in.
func embed(e, filler string, ctx uint8) string {
	q, _ := syntax.Quote(e, syntax.LangBash)
	echo := "echo " + filler
	contexts := []string{
		e,
		echo + " && " + e,
		echo + "; " + e,
		e + " || " + echo,
		echo + " | " + e,
		"echo $(" + e + ")",
		`echo "$(` + e + `)"`,
		"bash -c " + q,
		"/bin/sh -lc " + q,
		"LANG=C " + e,
		"( " + e + " )",
		"{ " + e + "; }",
		"if true; then " + e + "; fi",
		"while false; do " + e + "; done",
		"for x in a b; do " + e + "; done",
		"f() { " + e + "; }; f",
		e + " &",
		"! " + e,
		"time " + e,
		e + " 2>/dev/null",
		"cd docs && " + e,
		"case a in a) " + e + ";; esac",
		"echo <(" + e + ")",
		"[[ -n x ]] && " + e,
	}
	return contexts[int(ctx)%len(contexts)]
}

var plainName = regexp.MustCompile(`^[a-z][a-z0-9.+_-]*$`)

// obfuscate rewrites e's first word as the shell still reads it.
func obfuscate(e string, how uint8) string {
	word, rest, _ := strings.Cut(e, " ")
	if !plainName.MatchString(word) {
		return e
	}
	forms := []string{word, `"` + word + `"`, "'" + word + "'", word[:1] + `""` + word[1:], `\` + word, "$'" + word + "'", "/usr/bin/" + word}
	return forms[int(how)%len(forms)] + " " + rest
}

var unsafeFiller = regexp.MustCompile(`[^A-Za-z0-9_./-]`)

// FuzzCommandGrader: random shell lines never make the grader panic (and
// critical is never auto-approved, even under "*" in both files); a known
// form that runs code is graded critical in whatever context and quoting
// it is put.
func FuzzCommandGrader(f *testing.F) {
	for i, e := range criticalExamples() {
		f.Add(e, uint8(i), uint8(i), uint8(i), "ok")
	}
	f.Add("git status && go test ./...", uint8(0), uint8(7), uint8(3), "docs")
	f.Add("echo 'hello world' > docs/a.md; cat <<EOF\n$(id)\nEOF", uint8(5), uint8(21), uint8(1), ".git")
	root := f.TempDir()
	p := &Policy{Root: root, File: File{AutoApprove: AutoApprove{Commands: []string{"*"}, MaxRisk: RiskCritical}},
		Allowlist: Allowlist{Commands: []string{"*"}, MaxRisk: RiskHigh}}
	examples := criticalExamples()
	f.Fuzz(func(t *testing.T, line string, form, ctx, obf uint8, filler string) {
		v := p.Evaluate(Action{Kind: KindCommand, Command: line})
		if v.Risk != RiskLow && v.Risk != RiskHigh && v.Risk != RiskCritical {
			t.Fatalf("%q: risk %q", line, v.Risk)
		}
		if v.Auto && v.Risk == RiskCritical {
			t.Fatalf("%q: critical and auto-approved", line)
		}
		filler = unsafeFiller.ReplaceAllString(filler, "")
		if filler == "" {
			filler = "ok"
		}
		e := obfuscate(examples[int(form)%len(examples)], obf)
		l := embed(e, filler, ctx)
		if v := p.Evaluate(Action{Kind: KindCommand, Command: l}); v.Risk != RiskCritical || v.Auto {
			t.Fatalf("%q: graded %s auto=%v (%q), want critical and asked", l, v.Risk, v.Auto, v.Why)
		}
	})
}

// pathTree makes a worktree with .git, a nested repository, a git
// directory linked by a .git file, agentinfra's control files, a secrets
// file, and a folder outside it; then the symlinks spec names
// ("link=target" lines; a target @N is the N-th of a preset list).
func pathTree(t *testing.T, spec string) (root string) {
	t.Helper()
	base := memTempDir(t)
	root = filepath.Join(base, "root")
	for _, d := range []string{".git/hooks", ".git/objects", ".git/refs", "sub/.git/hooks", "sub/.git/objects", "sub/.git/refs",
		"gitstore/objects", "gitstore/refs", "wt", ".agent/state", "docs", "src"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.MkdirAll(filepath.Join(base, "outside"), 0o755)
	for f, content := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", "sub/.git/HEAD": "ref: refs/heads/main\n",
		"gitstore/HEAD": "ref: refs/heads/main\n", "wt/.git": "gitdir: ../gitstore\n", ".agent/config.yaml": "{}\n", ".env": "K=v\n",
		"docs/a.md": "a\n"} {
		os.WriteFile(filepath.Join(root, f), []byte(content), 0o644)
	}
	presets := []string{"../.git", "../../outside", filepath.Join(base, "outside"), "../.env", "..", ".", ".git", "../sub/.git/hooks",
		"../gitstore", "../.agent", "../..", "../docs", "../wt", "hooks", "../../root/.git"}
	for _, line := range strings.Split(spec, "\n") {
		name, target, ok := strings.Cut(line, "=")
		name = strings.Trim(filepath.Clean("/"+name), "/")
		if !ok || name == "" || strings.ContainsRune(name+target, 0) || target == "" {
			continue
		}
		if n, isPreset := strings.CutPrefix(target, "@"); isPreset {
			target = presets[len(n)%len(presets)]
		} else if filepath.IsAbs(target) {
			continue // absolute targets: only the preset one, outside
		}
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		os.Symlink(target, filepath.Join(root, name))
	}
	return root
}

// memTempDir is a temporary folder in memory (/dev/shm) when there is
// one: the fuzz target makes a tree for every input, and a disk shared with
// other work makes that the whole cost.
func memTempDir(t *testing.T) string {
	t.Helper()
	if d, err := os.MkdirTemp("/dev/shm", "agentinfra-fuzz-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return t.TempDir()
}

// landed is where the kernel put a file created at p through os.Root (which
// refuses to leave root): protected reports whether that place is outside
// the worktree, in a git directory or a control file, by the tree's own
// layout. ok is false when nothing could be created there.
func landed(root, p string) (protected, ok bool) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return false, false
	}
	defer r.Close()
	r.MkdirAll(filepath.Dir(p), 0o755)
	f, err := r.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") || strings.Contains(err.Error(), "outside") {
			return true, true
		}
		return false, false
	}
	f.Close()
	real, err := filepath.EvalSymlinks(filepath.Join(root, p))
	if err != nil {
		return false, false
	}
	rr, _ := filepath.EvalSymlinks(root)
	rel, err := filepath.Rel(rr, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return true, true
	}
	rel = filepath.ToSlash(rel)
	for _, el := range strings.Split(rel, "/") {
		if el == ".git" {
			return true, true
		}
	}
	for _, c := range []string{".agent/config.yaml", ".agent/policy.yaml", ".agent/state", "gitstore"} {
		if rel == c || strings.HasPrefix(rel, c+"/") {
			return true, true
		}
	}
	return false, true
}

// FuzzPathJudgement: with write and read ["**"] in both files, a path
// (through random symlinks in a temporary tree) that the kernel resolves
// outside the worktree, into a git directory or a control file is never
// auto-approved and is graded critical — as written, and cleaned as text
// first (as some tools do before the kernel sees it).
func FuzzPathJudgement(f *testing.F) {
	f.Add("docs/gitdir=../.git", "docs/gitdir/config")
	f.Add("docs/gitdir=../.git", "docs/gitdir/hooks/pre-commit")
	f.Add("docs/out=@@", "docs/out/planted.txt")
	f.Add("docs/envlink=../.env", "docs/envlink")
	f.Add("", "sub/.git/hooks/post-checkout")
	f.Add("", ".agent/config.yaml")
	f.Add("", "wt/.git")
	f.Add("", "gitstore/hooks/post-checkout")
	f.Add("docs/l=../.git/hooks", "docs/l/../config")
	f.Add("docs/up=..\ndocs/x=../docs/up", "docs/x/.git/config")
	f.Add("docs/loop=loop", "docs/loop/x")
	f.Add("a/b=../../src\nsrc/c=@@@@@@@@", "a/b/c/x/../../config")
	f.Fuzz(func(t *testing.T, spec, p string) {
		if strings.ContainsRune(p, 0) || p == "" || len(p) > 200 || len(spec) > 400 {
			return
		}
		root := pathTree(t, spec)
		pol := &Policy{Root: root, File: File{AutoApprove: AutoApprove{Write: []string{"**"}, Read: []string{"**"}, MaxRisk: RiskCritical}},
			Allowlist: Allowlist{Write: []string{"**"}, Read: []string{"**"}, MaxRisk: RiskHigh}}
		for _, kind := range []string{KindEdit, KindRead} {
			v := pol.Evaluate(Action{Kind: kind, File: p})
			if v.Auto && v.Risk == RiskCritical {
				t.Fatalf("%s %q: critical and auto-approved", kind, p)
			}
		}
		v := pol.Evaluate(Action{Kind: KindEdit, File: p})
		for _, q := range []string{p, filepath.Clean(p)} {
			if filepath.IsAbs(q) {
				continue
			}
			protected, ok := landed(root, q)
			if ok && protected && (v.Auto || v.Risk != RiskCritical) {
				t.Fatalf("links %q: a write to %q lands outside or in git's or agentinfra's files, but was judged auto=%v risk=%s (%q)", spec, q, v.Auto, v.Risk, v.Why)
			}
		}
	})
}

// The fuzz oracle itself: it sees the issue's vectors as protected.
func TestFuzzOracleSeesTheVectors(t *testing.T) {
	root := pathTree(t, "docs/gitdir=../.git\ndocs/out=@@")
	for _, p := range []string{"docs/gitdir/config", "docs/out/x", "sub/.git/hooks/post-checkout", "gitstore/hooks/x"} {
		if protected, ok := landed(root, p); !ok || !protected {
			t.Errorf("%s: protected=%v ok=%v", p, protected, ok)
		}
	}
	if protected, ok := landed(root, "docs/new/b.md"); !ok || protected {
		t.Errorf("docs/new/b.md: protected=%v ok=%v", protected, ok)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "outside", "x")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the oracle wrote outside the worktree")
	}
}
