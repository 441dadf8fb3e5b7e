package policy

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/internal/textdiff"
)

// Rule is one auto-approve entry: Key is commands, tools, read or write.
type Rule struct {
	Key   string
	Value string
}

// RuleFor is the rule that would auto-approve an action like a ("approve
// --always"), in the form the rules match: a command as its shell words
// (one plain command; each word quoted only as the shell needs, so `echo
// 'hello world'` stays that and `/bin/bash -lc 'touch ok.txt'` becomes
// `touch ok.txt`), the file's resolved worktree-relative path with its
// glob characters escaped (a file named ** is the rule \*\*, not every
// file), or the tool's name. A path that is never auto-approved has no rule.
func RuleFor(root string, a Action) (Rule, error) {
	switch a.Kind {
	case KindCommand:
		if strings.TrimSpace(a.Command) == "" {
			return Rule{}, agenterr.Invalidf("command", "the request has no command")
		}
		pc := parseCommand(a.Command)
		if pc.Dynamic || len(pc.Cmds) != 1 || len(pc.Cmds[0].Redirects) > 0 {
			return Rule{}, agenterr.Refusedf("%q is not one plain command (it has pipes, ;, &&, redirections, variables or substitutions): a rule matches one command; approve it alone (not always, not for the session), or add a rule for each part to .agent/%s by hand", a.Command, FileName)
		}
		return Rule{"commands", pc.Cmds[0].String()}, nil
	case KindEdit, KindRead:
		pl := (&Policy{Root: root}).Place(a.File)
		if pl.Never != "" {
			return Rule{}, agenterr.Refusedf("%s is never auto-approved (%s): no rule can approve it", pl.Shown(), pl.Never)
		}
		key := "write"
		if a.Kind == KindRead {
			key = "read"
		}
		return Rule{key, escapeGlob(pl.Rel)}, nil
	}
	if a.Tool == "" {
		return Rule{}, agenterr.Invalidf("tool", "the request names no tool")
	}
	return Rule{"tools", a.Tool}, nil
}

// escapeGlob makes a path a doublestar pattern matching only itself.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// AddRule returns the policy file's bytes with r added under auto_approve
// (every other byte kept as it was), and the unified diff between the two.
// A rule already there changes nothing (new == old, diff "").
func AddRule(path string, r Rule) (newSrc []byte, diff string, err error) {
	old, err := readPolicyFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", err
	}
	if len(old) > 0 {
		f, perr := Parse(path, old)
		if perr != nil {
			return nil, "", &agenterr.Error{Kind: agenterr.Invalid, Field: "policy",
				Reason: perr.Error() + ": fix it first (a rule cannot be added to a policy that does not parse; until it is fixed every action is asked)"}
		}
		if slices.Contains(listOf(f.AutoApprove, r.Key), r.Value) {
			return old, "", nil
		}
	}
	item := strconv.Quote(r.Value)
	src := string(old)
	var root yaml.Node
	yaml.Unmarshal(old, &root)
	aa, list := findList(&root, r.Key)
	lines := strings.SplitAfter(src, "\n")
	switch {
	case list != nil && list.Style&yaml.FlowStyle == 0 && len(list.Content) > 0:
		// A block list: a new item after its last one, indented the same.
		last := list.Content[len(list.Content)-1]
		indent := strings.Repeat(" ", max(last.Column-3, 0))
		at := lastLineOf(last)
		lines = insertLine(lines, at, indent+"- "+item+"\n")
	case aa != nil && list == nil && aa.Style&yaml.FlowStyle == 0 && len(aa.Content) > 0:
		// auto_approve is there without this key: add the key under it.
		indent := strings.Repeat(" ", aa.Content[0].Column-1)
		at := lastLineOf(aa)
		lines = insertLine(lines, at, indent+r.Key+":\n"+indent+"  - "+item+"\n")
	case aa == nil:
		if src != "" && !strings.HasSuffix(src, "\n") {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines, "auto_approve:\n  "+r.Key+":\n    - "+item+"\n")
	default:
		return nil, "", agenterr.Refusedf("%s: auto_approve.%s is written in a form agentinfra does not edit (a flow list or mapping); add %s to it by hand", path, r.Key, item)
	}
	out := strings.Join(lines, "")
	if _, err := Parse(path, []byte(out)); err != nil {
		return nil, "", agenterr.Refusedf("the edited policy would not parse (%v); add %s under auto_approve.%s by hand", err, item, r.Key)
	}
	diff, err = textdiff.Diff(".agent/"+FileName, src, out)
	return []byte(out), diff, err
}

// WriteRule writes what AddRule made (atomically).
func WriteRule(path string, src []byte) error {
	return atomicfile.Write(path, src)
}

func listOf(a AutoApprove, key string) []string {
	switch key {
	case "commands":
		return a.Commands
	case "tools":
		return a.Tools
	case "read":
		return a.Read
	case "write":
		return a.Write
	}
	return nil
}

// findList finds auto_approve and auto_approve.KEY in a parsed file.
func findList(root *yaml.Node, key string) (aa, list *yaml.Node) {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	doc := root.Content[0]
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "auto_approve" && doc.Content[i+1].Kind == yaml.MappingNode {
			aa = doc.Content[i+1]
		}
	}
	if aa == nil {
		return nil, nil
	}
	for i := 0; i+1 < len(aa.Content); i += 2 {
		if aa.Content[i].Value == key && aa.Content[i+1].Kind == yaml.SequenceNode {
			return aa, aa.Content[i+1]
		}
	}
	return aa, nil
}

// lastLineOf is the last line (1-based) a node spans.
func lastLineOf(n *yaml.Node) int {
	l := n.Line
	for _, c := range n.Content {
		l = max(l, lastLineOf(c))
	}
	return l
}

// insertLine inserts text after line at (1-based).
func insertLine(lines []string, at int, text string) []string {
	if at > len(lines) {
		at = len(lines)
	}
	if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
		lines[at-1] += "\n"
	}
	return slices.Insert(lines, at, text)
}
