package matrix

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

// Issue 18, item 8: a NUL byte (or another control character) in a
// description was written verbatim, making the matrix a binary file to git,
// while validate said "no problems". Now a value with one is refused, on
// create and on update, and validate reports one wherever it is.
func TestControlCharactersAreRefusedAndReported(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"a\x00b", "bell\x07", "esc \x1b[31mred", "del\x7f", "c1 \u0085 next line"} {
		s := writeMatrix(t, controlSrc)
		_, err := createVia(s, ctx, Task{Description: bad}, goldenNow)
		var inv *agenterr.Error
		if !errors.As(err, &inv) || inv.Field != "description" || !strings.Contains(inv.Reason, "control character") {
			t.Errorf("create %q: %v, want an Invalid error for the description", bad, err)
		}
		if _, _, err := updateVia(s, ctx, "0000e1", Update{Set: map[string]string{"Description": bad}}, goldenNow); !errors.As(err, &inv) {
			t.Errorf("update %q: %v, want an Invalid error", bad, err)
		}
		assertUntouched(t, s, controlSrc)
	}
	// Tabs and line breaks are text (a line break becomes a space).
	s := writeMatrix(t, controlSrc)
	if _, err := createVia(s, ctx, Task{Description: "tab\there\nand a new line"}, goldenNow); err != nil {
		t.Errorf("tab and newline: %v", err)
	}

	src := controlSrc + "| 0000e2 | TODO | a\x00b |\n\nprose with an escape \x1b here\n"
	var got []string
	for _, dg := range Validate(Parse([]byte(src)), "M.md") {
		if strings.Contains(dg.Message, "control character") {
			got = append(got, dg.String())
		}
	}
	want := []string{
		"M.md:4:20: error: control character U+0000 (NUL): control characters have no place in the matrix (a NUL makes git treat it as a binary file); remove it",
		"M.md:6:22: error: control character U+001B (ESC): control characters have no place in the matrix (a NUL makes git treat it as a binary file); remove it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("validate:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Issue 18, item 10: no size limit on a description (a 10 MB row was
// accepted). A cell takes up to MaxCellBytes.
func TestCellSizeLimit(t *testing.T) {
	ctx := context.Background()
	s := writeMatrix(t, controlSrc)
	_, err := createVia(s, ctx, Task{Description: strings.Repeat("x", MaxCellBytes+1)}, goldenNow)
	var inv *agenterr.Error
	if !errors.As(err, &inv) || !strings.Contains(inv.Reason, "over the limit") || inv.Value != "" {
		t.Fatalf("err = %v, want an Invalid error naming the limit (and not echoing the value)", err)
	}
	assertUntouched(t, s, controlSrc)
	if _, err := createVia(s, ctx, Task{Description: strings.Repeat("x", MaxCellBytes)}, goldenNow); err != nil {
		t.Errorf("a description of exactly the limit: %v", err)
	}
}

// nextControl's word-at-a-time scan agrees with a plain loop.
func FuzzNextControl(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x00", "\x7f", "\u0085", "é\u00a0x", "\t\r\n", "0123456\x01", "ÿ\xc2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := -1
		if i, _ := firstControl(s); i >= 0 {
			want = i
		}
		if got := nextControl([]byte(s), 0); got != want {
			t.Fatalf("nextControl(%q) = %d, firstControl %d", s, got, want)
		}
	})
}

func BenchmarkControlScan10k(b *testing.B) {
	src := testmatrix.Generate(10000, 1)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if nextControl(src, 0) >= 0 {
			b.Fatal("a control character in the generated matrix")
		}
	}
}

const controlSrc = "| ID | Status | Description |\n|---|---|---|\n| 0000e1 | TODO | x |\n"
