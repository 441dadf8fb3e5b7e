// Package testmatrix generates large, valid matrix files for tests and benchmarks.
package testmatrix

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var (
	statuses = []string{"TODO", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE"}
	modes    = []string{"coder", "reviewer", "oracle", "explorer"}
	skills   = []string{"go-testing", "code-review", "matrix-editing", "", "go-testing, code-review"}
	// Skills are the skill slugs the generated rows name.
	Skills = []string{"go-testing", "code-review", "matrix-editing"}
	words  = strings.Fields("add fix refactor parser store lock retry fetcher cache index matrix cli server prompt model skill handoff archive docs bench")
)

// Generate returns a matrix with n task rows (about 170 bytes each: 10,000
// rows make the 1.7 MB file the README figures use) and a
// preamble, deterministic for a given seed. ID i is fmt.Sprintf("%06x", i*7919+1).
func Generate(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	b.Grow(n*175 + 512)
	b.WriteString("# Development Matrix\n\nGenerated for benchmarks. People write prose here.\n\n")
	b.WriteString("| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n")
	b.WriteString("|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n")
	for i := 0; i < n; i++ {
		desc := make([]string, 9+r.IntN(7))
		for j := range desc {
			desc[j] = words[r.IntN(len(words))]
		}
		fmt.Fprintf(&b, "| %s | %s | P%d | %s | %s | %s | @%s | %s | 2026-%02d-%02d | 2026-%02d-%02d |\n",
			ID(i), statuses[r.IntN(len(statuses))], 1+r.IntN(4), []string{"easy", "med", "hard"}[r.IntN(3)],
			modes[r.IntN(len(modes))], skills[r.IntN(len(skills))], modes[r.IntN(len(modes))],
			strings.Join(desc, " "), 1+r.IntN(12), 1+r.IntN(28), 1+r.IntN(12), 1+r.IntN(28))
	}
	b.WriteString("\n## Notes\n\nKept byte for byte.\n")
	return []byte(b.String())
}

// ID is the ID of generated row i.
func ID(i int) string { return fmt.Sprintf("%06x", (i*7919+1)%0xffffff) }
