package termsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The vectors of issue 27, item 4: what an agent put in a request's title,
// command, file name or diff to drive the terminal of the person deciding.
var vectors = []struct{ name, in, want string }{
	{"window title (OSC 0 … BEL)", "\x1b]0;pwned\a", `\x1b]0;pwned\a`},
	{"screen clear", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"hidden text (SGR 8)", "ok \x1b[8mrm -rf ~\x1b[0m", `ok \x1b[8mrm -rf ~\x1b[0m`},
	{"clipboard write (OSC 52 of rm -rf ~)", "\x1b]52;c;cm0gLXJmIH4K\x1b\\", `\x1b]52;c;cm0gLXJmIH4K\x1b\`},
	{"a fake request after a clear", "echo hi\x1b[2J\x1b[HRequest 99: Run git status\nRisk: low\n",
		`echo hi\x1b[2J\x1b[HRequest 99: Run git status` + "\nRisk: low\n"},
	{"right-to-left override", "safe\u202etxt.exe", `safe\u202etxt.exe`},
	{"bidi isolates and marks", "a\u2066b\u2069c\u200fd\u061c", `a\u2066b\u2069c\u200fd\u061c`},
	{"zero-width and tag characters", "r\u200bm \u2060\ufeff\U000e0072\U000e006d", `r\u200bm \u2060\ufeff\U000e0072\U000e006d`},
	{"C1 CSI and OSC, DEL", "\u009b2J\u009d0;x\u009c\x7f", `\u009b2J\u009d0;x\u009c\x7f`},
	{"a lone 0x9b byte (8-bit CSI)", "a\x9b2Jb", `a\x9b2Jb`},
	{"carriage return over a line", "rm -rf ~\rls      ", `rm -rf ~\rls      `},
	{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"plain text in any script", "héllo 世界 — ok\tcol\n", "héllo 世界 — ok\tcol\n"},
}

func TestTextRendersTheIssueVectorsInert(t *testing.T) {
	for _, v := range vectors {
		got := Text(v.in)
		if got != v.want {
			t.Errorf("%s: Text(%q) = %q, want %q", v.name, v.in, got, v.want)
		}
		checkInert(t, v.in, got, true)
	}
}

func TestLineEscapesNewlineAndTabToo(t *testing.T) {
	got := Line("Run git status\nRisk: low\tx\x1b[2J")
	if want := `Run git status\nRisk: low\tx\x1b[2J`; got != want {
		t.Fatalf("Line = %q, want %q", got, want)
	}
}

// checkInert fails when out holds anything a terminal would act on or that
// hides text, or when text with nothing to escape was changed.
func checkInert(t *testing.T, in, out string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output of %q is not valid UTF-8: %q", in, out)
	}
	for i, r := range out {
		ok := r == '\n' || r == '\t'
		switch {
		case ok && multiline:
		case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), r == '\u2028', r == '\u2029':
			t.Fatalf("output of %q holds %U at byte %d: %q", in, r, i, out)
		}
	}
	clean := utf8.ValidString(in) && strings.IndexFunc(in, func(r rune) bool {
		return (unicode.Is(unicode.Cc, r) && !(multiline && (r == '\n' || r == '\t'))) ||
			unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
	}) < 0
	if clean && out != in {
		t.Fatalf("text with nothing to escape was changed: %q → %q", in, out)
	}
}

// The page's rule: the bidi override of a file name is shown, the rest
// (HTML already escaped by the template) is left as it is.
func TestVisibleShowsWhatReordersOrHidesOnly(t *testing.T) {
	in := "<td>evil\u202etxt.exe \u200b\x1b[2J\ttab\nline \xff</td>"
	want := "<td>evil\\u202etxt.exe \\u200b\x1b[2J\ttab\nline \xff</td>"
	if got := Visible(in); got != want {
		t.Fatalf("Visible(%q) = %q, want %q", in, got, want)
	}
}

// checkVisible fails when out holds a character that reorders or hides
// text, or differs from in where in had none.
func checkVisible(t *testing.T, in, out string) {
	t.Helper()
	hides := func(r rune) bool { return unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' }
	if i := strings.IndexFunc(out, hides); i >= 0 {
		t.Fatalf("Visible(%q) holds a bidi or invisible character at byte %d: %q", in, i, out)
	}
	if strings.IndexFunc(in, hides) < 0 && out != in {
		t.Fatalf("Visible changed text with nothing to show: %q → %q", in, out)
	}
}

// FuzzEscape: whatever the text, the output of Text and Line is valid
// UTF-8 with no control character but newline and tab (none at all from
// Line), no format character (bidi, zero-width, tags), no line separator;
// the output of Visible has no format character nor line separator; text
// with none of these comes out unchanged.
func FuzzEscape(f *testing.F) {
	for _, v := range vectors {
		f.Add(v.in)
	}
	f.Add("\xed\xa0\x80\xff\xfe\xc0\xaf")
	f.Fuzz(func(t *testing.T, s string) {
		checkInert(t, s, Text(s), true)
		checkInert(t, s, Line(s), false)
		checkVisible(t, s, Visible(s))
	})
}
