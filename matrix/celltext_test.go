package matrix

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/agentinfra/agentinfra/internal/testing/gfmtable"
)

func TestJoinCell(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"numbered list", "Investigate flaky `sqlite` schema \n1. reproduce\n2. add a test  ",
			"Investigate flaky `sqlite` schema<br>1. reproduce<br>2. add a test"},
		{"blank lines are one paragraph break", "Speed up export\n\n\nContext: one window\nper vault.",
			"Speed up export<br><br>Context: one window<br>per vault."},
		{"heading and bullets stay as written", "Polish queue\n\n## Notes\n- [ ] measure\n* check `C:\\Users`",
			"Polish queue<br><br>## Notes<br>- [ ] measure<br>* check `C:\\Users`"},
		{"bare pipes are escaped, escaped ones kept", "a | b\nc \\| d", `a \| b<br>c \| d`},
		{"CRLF", "first\r\nsecond\r\n\r\nthird", "first<br>second<br><br>third"},
		{"a trailing backslash does not escape the tag", "hard break\\\nnext", `hard break\ <br>next`},
		{"code fence: each line inline code, fences kept",
			"Repro:\n```bash\ncat notes.log | grep -c 'conflict'   # a | b\n| x | y |\n```\nthen run it",
			"Repro:<br>` ```bash `<br>`cat notes.log \\| grep -c 'conflict'   # a \\| b`<br>`\\| x \\| y \\|`<br>` ``` `<br>then run it"},
		{"code with backticks and a blank line", "See:\n~~~\necho `date`\n\n  x ``y``\n~~~",
			"See:<br>`~~~`<br>`` echo `date` ``<br><br>`   x ``y`` `<br>`~~~`"},
		{"a fence that never closes runs to the end", "x\n```\na\nb", "x<br>` ``` `<br>`a`<br>`b`"},
		{"a closing fence must be as long", "x\n````\n```\n````", "x<br>` ```` `<br>` ``` `<br>` ```` `"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JoinCell(tt.in)
			if got != tt.want {
				t.Errorf("JoinCell(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if strings.ContainsAny(got, "\r\n") {
				t.Errorf("still holds a line break: %q", got)
			}
		})
	}
}

// What GitHub shows of a joined cell: one row, the cell with its line breaks,
// each code line as code with its pipes, the text of lists and headings.
func TestJoinCellRendersAsOneCell(t *testing.T) {
	desc := "Add tests 🐛\nRepro:\n```bash\ncat a.log | wc -l\n```\n\n## Notes\n1. step"
	table := "| ID | Description | Created |\n|---|---|---|\n| 260103114541 | " + JoinCell(desc) + " | 2026-01-03 |\n"
	tables := gfmtable.Parse([]byte(table))
	if len(tables) != 1 || len(tables[0].Rows) != 1 {
		t.Fatalf("GFM sees %+v, want one table with one row", tables)
	}
	if got := tables[0].Rows[0].Cells[2]; got != "2026-01-03" {
		t.Errorf("Created cell = %q: the joined cell shifted its neighbours", got)
	}
	// GitHub keeps <br> in cells: render raw HTML as it does.
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(html.WithUnsafe())).Convert([]byte(table), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<td>Add tests 🐛<br>Repro:<br><code>```bash</code><br><code>cat a.log | wc -l</code><br><code>```</code><br><br>## Notes<br>1. step</td>",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendered HTML lacks\n%s\ngot\n%s", want, out.String())
		}
	}
}

// normalizedText is what a cell can keep of text typed over several lines:
// line endings as LF, text lines without their indentation and trailing
// white space, a run of blank lines as one, no blank lines at either end;
// the lines of a fenced code block keep their indentation and their blank
// lines. Written from the rule, not from the encoder.
func normalizedText(v string) string {
	v = strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\r", "\n")
	var out []string
	var inCode bool
	var fenceChar byte
	var fenceLen int
	blank := false
	for _, line := range strings.Split(v, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		t := strings.TrimLeft(line, " \t")
		run := 0
		for run < len(t) && (t[run] == '`' || t[run] == '~') && t[run] == t[0] {
			run++
		}
		switch {
		case inCode:
			if run >= fenceLen && t[0] == fenceChar && strings.TrimSpace(t[run:]) == "" {
				inCode = false
			}
			out = append(out, line)
			continue
		case run >= 3 && !(t[0] == '`' && strings.Contains(t[run:], "`")):
			inCode, fenceChar, fenceLen = true, t[0], run
			if blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = false
			out = append(out, line)
			continue
		}
		if strings.TrimSpace(line) == "" {
			blank = true
			continue
		}
		if blank && len(out) > 0 {
			out = append(out, "")
		}
		blank = false
		out = append(out, strings.TrimLeftFunc(line, unicode.IsSpace))
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// decodable tells whether v is text DecodeText(EncodeText(v)) must give
// back as normalizedText(v): it holds no `\“ and no HTML entity of a <br>
// (which DecodeText reads as GitHub shows them), and no text line is one
// code span that opens a fence (which reads as a code block's first line).
func decodable(v string) bool {
	l := strings.ToLower(v)
	if strings.Contains(v, "\\`") || strings.Contains(l, "&lt;") || strings.Contains(l, "&amp;") || !utf8.ValidString(v) {
		return false
	}
	for _, line := range strings.Split(strings.ReplaceAll(v, "\r", "\n"), "\n") {
		if c, ok := soleCodeSpan(strings.TrimSpace(line)); ok && opensFence(c) {
			return false
		}
	}
	return true
}

var cellTextSeeds = []string{
	"Show a toast when creation fails.\n\n```typescript\nconst msg = error?.message || '';\n```",
	"Steps:\n1. reproduce with `curl | tee`\n2. fix it\n\n\n## Notes\n- [ ] measure",
	"See:\n~~~\necho `date`\n\n  x ``y``\n~~~\nthen `ls`",
	"an HTML line break: <br> and <BR/> typed as text, and `<br>` as code",
	"run `foo\nbar` now, press ` to open the console",
	"x\n```\na\n\nb",
	"hard break\\\nnext",
	"a | b \\| c",
	"```go",
	"crlf\r\nbreak\rcr",
	"  indented\n    more\n\t\ttabs  ",
	"code with a pipe:\n```\n| x | y |\n```\n| 2026-01-20 |",
}

// A value written by a command reads back as it was typed (what a cell can
// keep of it), through the real parser: line breaks, code blocks, pipes,
// backticks and a typed <br> (issue 19).
func TestEncodeTextReadsBack(t *testing.T) {
	for _, v := range cellTextSeeds {
		if !decodable(v) {
			t.Fatalf("seed %q is not decodable", v)
		}
		checkEncodeTextReadsBack(t, v)
	}
}

func checkEncodeTextReadsBack(t *testing.T, v string) {
	t.Helper()
	want := normalizedText(v)
	if want == "" {
		return
	}
	cell := EncodeText(v)
	if strings.ContainsAny(cell, "\r\n") {
		t.Fatalf("EncodeText(%q) = %q holds a line break", v, cell)
	}
	src := "| ID | Status | Description | Created |\n|---|---|---|---|\n| a1 | TODO | " + cell + " | 2026-01-01 |\n"
	d := Parse([]byte(src))
	tk, ok := d.Task("a1")
	if !ok || len(d.Diagnostics()) > 0 {
		t.Fatalf("EncodeText(%q) = %q breaks the row: %v", v, cell, d.Diagnostics())
	}
	if tk.Description != want || tk.Created != "2026-01-01" {
		t.Errorf("EncodeText(%q) = %q\nreads back as %q\nwant          %q", v, cell, tk.Description, want)
	}
}

// FuzzEncodeTextReadsBack: any text a command writes into a cell reads back
// as typed (normalizedText), and the cell never splits the row.
//
//	go test ./matrix -run x -fuzz FuzzEncodeTextReadsBack -fuzztime 1m
func FuzzEncodeTextReadsBack(f *testing.F) {
	for _, v := range append(append([]string{}, cellTextSeeds...), nastyValues...) {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !decodable(v) || strings.ContainsRune(v, 0) {
			t.Skip()
		}
		checkEncodeTextReadsBack(t, v)
	})
}

// A row repaired by `validate --fix` reads as it did before the repair: the
// joined cell decodes to the text of the continued one (issue 19).
func TestJoinedRowReadsAsBefore(t *testing.T) {
	joined := 0
	for _, v := range cellTextSeeds {
		if checkJoinReadsAsBefore(t, v) {
			joined++
		}
	}
	if joined < len(cellTextSeeds)-2 {
		t.Errorf("only %d of %d seeds were joined", joined, len(cellTextSeeds))
	}
}

// checkJoinReadsAsBefore reports whether v was read as a continued row and
// joined (false: nothing to compare).
func checkJoinReadsAsBefore(t *testing.T, v string) bool {
	t.Helper()
	v = strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\r", "\n")
	raw := "| ID | Status | Description | Created |\n|---|---|---|---|\n| a1 | TODO | " + v + "\n| 2026-01-01 |\n"
	before, ok := Parse([]byte(raw)).Task("a1")
	if !ok || before.Created != "2026-01-01" {
		return false // not read as one continued row
	}
	d := Parse([]byte(raw))
	crs := d.ContinuedRows()
	if len(crs) != 1 {
		return false
	}
	joined := make([]string, len(crs[0].Cells))
	for i, c := range crs[0].Cells {
		if strings.Contains(c, "\n") {
			joined[i] = JoinCell(c)
		} else {
			joined[i] = EscapePipes(c)
		}
	}
	if err := d.ReplaceRowAt(crs[0].Line, joined); err != nil {
		return false // the fix names such a row instead of joining it
	}
	after, _ := d.Task("a1")
	if want := normalizedText(before.Description); after.Description != want {
		t.Errorf("continued cell %q\nread before the fix as %q\nafter it as            %q\nwant                   %q\nrow: %q",
			v, before.Description, after.Description, want, lineOf(d.Bytes(), after.Line))
	}
	return true
}

// FuzzJoinedRowReadsAsBefore: validate --fix's join loses nothing a reader
// shows.
func FuzzJoinedRowReadsAsBefore(f *testing.F) {
	for _, v := range cellTextSeeds {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !decodable(v) || strings.ContainsRune(v, 0) || !strings.Contains(v, "\n") || !checkJoinReadsAsBefore(t, v) {
			t.Skip()
		}
	})
}
