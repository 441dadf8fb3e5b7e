package fix

import (
	"bytes"
	"strings"
	"testing"

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

func TestFirstSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Fix the export. It breaks on big vaults\nmore", "Fix the export."},
		{"Bump `v0.14.2` deps\n1. step", "Bump `v0.14.2` deps"},
		{"Why? Because `a. b` said so", "Why?"},
		{"Keep `a. b` whole. Then", "Keep `a. b` whole."},
		{"  Ends with a dot.  \nnext", "Ends with a dot."},
		{"Unclosed ` tick. Then", "Unclosed ` tick."},
	}
	for _, tt := range tests {
		if got := FirstSentence(tt.in); got != tt.want {
			t.Errorf("FirstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
