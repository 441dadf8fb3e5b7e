package skills

import (
	"sort"
	"strings"
)

// Suggest returns up to three candidates close to name: those within an edit
// distance of max(2, len(name)/3), or that contain name (or are contained in
// it), closest first, ties by name.
func Suggest(name string, candidates []string) []string {
	type scored struct {
		s string
		d int
	}
	lname := strings.ToLower(name)
	limit := max(2, len([]rune(name))/3)
	var hits []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(lname, lc)
		if d <= limit || (len(lname) >= 3 && (strings.Contains(lc, lname) || strings.Contains(lname, lc))) {
			hits = append(hits, scored{c, d})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].d != hits[j].d {
			return hits[i].d < hits[j].d
		}
		return hits[i].s < hits[j].s
	})
	out := []string{}
	for i := 0; i < len(hits) && i < 3; i++ {
		out = append(out, hits[i].s)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
