package fix

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/agentinfra/agentinfra/internal/testing/gfmtable"
	"github.com/agentinfra/agentinfra/matrix"
)

// genMatrix writes a matrix the way people do, with rows broken over lines
// in every shape the reader takes: lists, paragraphs after blank lines,
// fences holding pipes and backticks, headings, trailing backslashes and
// spaces, tabs, stray pipes in the text, CRLF files; a few rows without an ID
// or with an ID used twice.
func genMatrix(r *rand.Rand) string {
	nl := "\n"
	if r.IntN(5) == 0 {
		nl = "\r\n"
	}
	words := []string{"Fix", "sync", "engine", "Zoë's", "café", "🐛", "`v0.14.2`", "**bold**", "[#142](https://x.y/142)", "a\\|b", "<kbd>x</kbd>", "C:\\Users", "e.g.", "done.", "why?", "~~old~~", "#tag", "x\ty"}
	text := func(n int) string {
		var w []string
		for range n {
			w = append(w, words[r.IntN(len(words))])
		}
		return strings.Join(w, " ")
	}
	more := []func() []string{
		func() []string { return []string{"1. " + text(3), "2. " + text(2)} },
		func() []string { return []string{"", text(5), text(4) + "  "} },
		func() []string { return []string{"- [ ] " + text(2), "* " + text(2)} },
		func() []string {
			return []string{"```bash", "cat a.log | grep -c 'x'   # a | b", "", "echo `date` ``q``", "| x | y |", "```"}
		},
		func() []string { return []string{"~~~", "  indented | code", "~~~~"} },
		func() []string { return []string{"", "## Notes", "", text(3) + " \\"} },
		func() []string { return []string{"see thread | and | more words"} },
	}
	var b strings.Builder
	b.WriteString("# Matrix" + nl + nl + "Prose." + nl + nl)
	b.WriteString("| ID | Status | Pri | Diff | Description | Created | Updated |" + nl + "|---|---|--|--|---|---|---|" + nl)
	for i := range 12 + r.IntN(12) {
		id := fmt.Sprintf("2601%08d", i*7919)
		switch r.IntN(12) {
		case 0:
			id = ""
		case 1:
			id = "260100000000" // a duplicate (likely)
		}
		pad := []string{"", " ", "  ", "\t"}[r.IntN(4)]
		head := fmt.Sprintf("|%s%s | TODO |P2| med |%s%s", pad, id, pad, text(1+r.IntN(4)))
		tail := fmt.Sprintf(" | 2026-01-%02d |%s2026-01-%02d 10:00 |", 1+i%28, pad, 1+i%28)
		if r.IntN(3) > 0 {
			b.WriteString(head + tail + nl)
			continue
		}
		b.WriteString(head + nl)
		for _, l := range more[r.IntN(len(more))]() {
			b.WriteString(l + nl)
		}
		if r.IntN(2) == 0 {
			b.WriteString(text(2)) // the text goes on on the closing line
		}
		b.WriteString(tail + nl)
	}
	b.WriteString(nl + "After." + nl)
	return b.String()
}

func runeCounts(s string) map[rune]int {
	m := map[rune]int{}
	for _, c := range s {
		if !unicode.IsSpace(c) {
			m[c]++
		}
	}
	return m
}

// The promise of --fix, on generated matrices: every non-space character is
// still in the matrix or a README the fix wrote, the same tasks are read,
// GFM sees one task table with one row per task, and a second run finds
// nothing to fix.
func TestFixPropertiesOnGeneratedMatrices(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 9))
		src := genMatrix(r)
		for _, mode := range []Mode{Join, Move} {
			t.Run(fmt.Sprintf("%d/%s", seed, mode), func(t *testing.T) {
				ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": src})
				before := matrix.Parse([]byte(src))
				if len(before.ContinuedRows()) == 0 || len(before.ReadProblems()) > 0 {
					t.Skipf("generated no continued row or an unreadable one:\n%s", src)
				}
				rep, err := Run(context.Background(), ws, Options{Mode: mode, Now: now})
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md")
				have := runeCounts(got)
				for _, f := range rep.Files {
					if strings.HasSuffix(f.Path, "README.md") {
						b, err := os.ReadFile(filepath.Join(ws.Root, f.Path))
						if err != nil {
							t.Fatal(err)
						}
						for c, n := range runeCounts(string(b)) {
							have[c] += n
						}
					}
				}
				for c, n := range runeCounts(src) {
					if have[c] < n {
						t.Errorf("lost %q ×%d", c, n-have[c])
					}
				}
				after := matrix.Parse([]byte(got))
				ids := func(d *matrix.Doc) []string {
					var out []string
					for _, tk := range d.Tasks() {
						out = append(out, tk.ID)
					}
					return out
				}
				if !slices.Equal(ids(after), ids(before)) {
					t.Errorf("tasks after %v, before %v", ids(after), ids(before))
				}
				if len(rep.NotFixed) > 0 || len(after.ContinuedRows()) > 0 {
					t.Errorf("left: %+v, %d continued rows", rep.NotFixed, len(after.ContinuedRows()))
				}
				var seen []string
				tables := gfmtable.Parse([]byte(got))
				for _, tb := range tables {
					for _, row := range tb.Rows {
						seen = append(seen, row.Cells[0])
					}
				}
				if len(tables) != 1 || !slices.Equal(seen, ids(before)) {
					t.Errorf("GFM sees %d tables with rows %v, want one with %v", len(tables), seen, ids(before))
				}
				again, err := Run(context.Background(), ws, Options{Mode: mode, Now: now})
				if err != nil || again.Changed() {
					t.Errorf("second run: %v, changed %+v", err, again.Files)
				}
				if t.Failed() {
					t.Logf("input:\n%s\noutput:\n%s", src, got)
				}
			})
		}
	}
}
