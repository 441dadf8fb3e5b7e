// Package gfmtable is the strict reader: it finds the tables of a Markdown
// file exactly as a GitHub-flavoured Markdown renderer does (goldmark with its
// GFM table extension), so tests can check what GitHub will show of a matrix.
// It is no matrix reader: it pads short rows, drops extra cells and ends a
// table at the first line that is not a row, as GFM does.
package gfmtable

import (
	"bytes"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Table is one GFM table: its header cells and its rows, as written.
type Table struct {
	Line     int // 1-based line of the header
	TopLevel bool
	Header   []string
	Rows     []Row
}

// Row is one body row of a Table. Cells has exactly len(Header) entries, as a
// GFM renderer shows it: missing cells are "", extra cells are gone.
type Row struct {
	Line  int // 1-based
	Cells []string
}

// Column returns the index of the first header cell equal to name, ignoring
// case, or -1.
func (t Table) Column(name string) int {
	for i, h := range t.Header {
		if bytes.EqualFold([]byte(h), []byte(name)) {
			return i
		}
	}
	return -1
}

var md = goldmark.New(goldmark.WithExtensions(extension.Table))

// Parse returns the tables of src in document order, nested ones (in lists,
// block quotes) included. Each cell is its raw source text without the
// surrounding spaces: inline Markdown and `\|` are kept as written. A leading
// UTF-8 byte order mark is dropped first, as GitHub does.
func Parse(src []byte) []Table {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	doc := md.Parser().Parse(text.NewReader(src))
	var tables []Table
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering || n.Kind() != east.KindTable {
			return gast.WalkContinue, nil
		}
		if paddedHeader(n) {
			return gast.WalkSkipChildren, nil
		}
		t := Table{TopLevel: n.Parent() != nil && n.Parent().Kind() == gast.KindDocument}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			cells := cellTexts(c, src)
			line := lineOf(src, c.Pos())
			if c.Kind() == east.KindTableHeader {
				t.Header, t.Line = cells, line
				continue
			}
			t.Rows = append(t.Rows, Row{Line: line, Cells: cells})
		}
		tables = append(tables, t)
		return gast.WalkSkipChildren, nil
	})
	return tables
}

// paddedHeader reports a table whose header has fewer cells than its
// delimiter row. goldmark pads such a header and makes a table of it; the GFM
// spec (example 203) and GitHub do not: the lines stay a paragraph. A padded
// cell is one with no source segment (a written empty cell has an empty one).
func paddedHeader(table gast.Node) bool {
	for row := table.FirstChild(); row != nil; row = row.NextSibling() {
		if row.Kind() != east.KindTableHeader {
			continue
		}
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Lines().Len() == 0 {
				return true
			}
		}
	}
	return false
}

func cellTexts(row gast.Node, src []byte) []string {
	var cells []string
	for c := row.FirstChild(); c != nil; c = c.NextSibling() {
		var b []byte
		lines := c.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b = append(b, seg.Value(src)...)
		}
		cells = append(cells, string(b))
	}
	return cells
}

// lineOf returns the 1-based line of byte offset off (1 when unknown).
func lineOf(src []byte, off int) int {
	if off < 0 || off > len(src) {
		return 1
	}
	return bytes.Count(src[:off], []byte{'\n'}) + 1
}
