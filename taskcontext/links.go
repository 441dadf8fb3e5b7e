package taskcontext

import (
	"bytes"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/workspace"
)

// readmeLinks returns the Markdown links and images of src (reference links
// resolved by the parser), resolved against base, the README's folder.
func readmeLinks(ws *workspace.Workspace, base string, src []byte) []Link {
	out := []Link{}
	seen := map[string]bool{}
	root := goldmark.New().Parser().Parse(text.NewReader(src))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest []byte
		switch v := n.(type) {
		case *ast.Link:
			dest = v.Destination
		case *ast.Image:
			dest = v.Destination
		default:
			return ast.WalkContinue, nil
		}
		target := string(dest)
		if target == "" || seen[target] {
			return ast.WalkContinue, nil
		}
		seen[target] = true
		l := Link{Target: target, Text: mdtext.OneLine(string(nodeText(n, src))), Line: nodeLine(n, src)}
		resolveLink(ws, base, &l)
		if l.Status != "" {
			out = append(out, l)
		}
		return ast.WalkSkipChildren, nil
	})
	return out
}

func nodeText(n ast.Node, src []byte) []byte {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		case *ast.CodeSpan:
			for ch := t.FirstChild(); ch != nil; ch = ch.NextSibling() {
				if tx, ok := ch.(*ast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.Bytes()
}

// nodeLine is the 1-based line of an inline node: the position of its first
// text, else the first line of its block.
func nodeLine(n ast.Node, src []byte) int {
	off := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if off < 0 {
		for p := n.Parent(); p != nil; p = p.Parent() {
			if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
				off = p.Lines().At(0).Start
				break
			}
		}
	}
	if off < 0 {
		return 0
	}
	return bytes.Count(src[:min(off, len(src))], []byte("\n")) + 1
}

// resolveLink sets the status and path of l. Anchors only (#x) get no status
// and are dropped. Nothing outside the workspace is followed or statted
// beyond what ws.Resolve does to refuse it.
func resolveLink(ws *workspace.Workspace, base string, l *Link) {
	t := l.Target
	if strings.HasPrefix(t, "#") {
		return
	}
	if u, err := url.Parse(t); err == nil && (u.Scheme != "" && len(u.Scheme) > 1 || u.Host != "" || strings.HasPrefix(t, "//")) {
		l.Status = LinkExternal
		return
	}
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	if un, err := url.PathUnescape(t); err == nil {
		t = un
	}
	if t == "" {
		return
	}
	var abs string
	if strings.HasPrefix(t, "/") {
		abs = filepath.Join(ws.Root, filepath.FromSlash(t)) // repository-root link, GitHub style
	} else {
		abs = filepath.Join(base, filepath.FromSlash(t))
	}
	rel, err := filepath.Rel(ws.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		l.Status = LinkOutside
		return
	}
	l.Path = filepath.ToSlash(rel)
	if _, err := os.Lstat(abs); err != nil {
		l.Status = LinkMissing
		return
	}
	real, err := ws.Resolve(abs)
	if err != nil {
		if _, serr := os.Stat(abs); serr != nil && errors.Is(serr, fs.ErrNotExist) {
			l.Status = LinkMissing // a dangling symlink
			return
		}
		l.Status, l.Path = LinkOutside, ""
		return
	}
	fi, err := os.Stat(real)
	if err != nil {
		l.Status = LinkMissing
		return
	}
	l.Status, l.IsDir = LinkOK, fi.IsDir()
}
