package full

import (
	"fmt"
	"strings"
	"testing"
)

// rwUnifiedDiff returns a unified diff (ctx lines of context) of a and b, or ""
// when they are equal. Lines are compared with their line endings, so a
// changed "\r\n" or a lost final newline shows; trailing spaces are printed as
// they are.
func rwUnifiedDiff(name string, a, b string, ctx int) string {
	if a == b {
		return ""
	}
	al, bl := rwSplitLinesKeepEOL(a), rwSplitLinesKeepEOL(b)
	ops := rwDiffLines(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk runs from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx lines from the next.
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
				continue
			}
			if j-end > 2*ctx {
				break
			}
		}
		stop := min(end+ctx+1, len(ops))
		h := ops[start:stop]
		aStart, bStart, aLen, bLen := h[0].a+1, h[0].b+1, 0, 0
		for _, op := range h {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		if aLen == 0 {
			aStart--
		}
		if bLen == 0 {
			bStart--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
		for _, op := range h {
			line, eol := strings.CutSuffix(op.line, "\n")
			out.WriteString(string(op.kind) + line + "\n")
			if !eol {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

// rwSplitLinesKeepEOL splits s after each "\n"; the last line may lack one.
func rwSplitLinesKeepEOL(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

type rwDiffOp struct {
	kind byte // ' ', '-' or '+'
	line string
	a, b int // 0-based positions in a and b before this op
}

// rwDiffLines is a longest-common-subsequence diff after trimming the common
// prefix and suffix; the corpus files are small enough for the table.
func rwDiffLines(a, b []string) []rwDiffOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	n, m := len(am), len(bm)
	var ops []rwDiffOp
	for i := 0; i < p; i++ {
		ops = append(ops, rwDiffOp{' ', a[i], i, i})
	}
	ai, bi := p, p
	emit := func(kind byte, line string) {
		ops = append(ops, rwDiffOp{kind, line, ai, bi})
		switch kind {
		case ' ':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
	if n*m > 1<<22 {
		for _, l := range am {
			emit('-', l)
		}
		for _, l := range bm {
			emit('+', l)
		}
	} else {
		// lcs[i][j] is the LCS length of am[i:] and bm[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && am[i] == bm[j]:
				emit(' ', am[i])
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				emit('-', am[i])
				i++
			default:
				emit('+', bm[j])
				j++
			}
		}
	}
	for k := len(a) - s; k < len(a); k++ {
		emit(' ', a[k])
	}
	return ops
}

func TestRWUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\nten"
	want := `--- a/f
+++ b/f
@@ -1,5 +1,5 @@
 1
 2
-3
+three
 4
 5
@@ -8,2 +8,3 @@
 8
 9
+ten
\ No newline at end of file
`
	if got := rwUnifiedDiff("f", a, b, 2); got != want {
		t.Errorf("diff =\n%s\nwant\n%s", got, want)
	}
	if got := rwUnifiedDiff("f", a, a, 2); got != "" {
		t.Errorf("diff of equal texts = %q, want empty", got)
	}
	// Changes closer than 2*ctx lines share a hunk; a trailing space counts.
	got := rwUnifiedDiff("f", "a\nb\nc\nd\ne\n", "a\nb \nc\nd\ne\nf\n", 2)
	want = "--- a/f\n+++ b/f\n@@ -1,5 +1,6 @@\n a\n-b\n+b \n c\n d\n e\n+f\n"
	if got != want {
		t.Errorf("diff =\n%q\nwant\n%q", got, want)
	}
}
