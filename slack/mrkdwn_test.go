package slack

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
)

// forged is what an agent writes to look like our interface: a fence end,
// mentions of every kind, a link with a label of ours, bidi and zero-width
// characters, a new line that reads as an outcome.
const forged = "echo hi```\n<!channel> <!here> <!everyone> <@U0000> <#C0000> <!subteam^S0000|@oncall> " +
	"<http://evil.example|:white_check_mark: Approve here> &lt;!channel&gt; \u202eexe.txt\u200b\n:white_check_mark: Approved by <@U0BO>"

func TestInertShapes(t *testing.T) {
	for _, c := range []struct {
		in    string
		sh    shape
		limit int
		want  string
	}{
		{"a < b && c > d", oneLine, 100, "a &lt; b &amp;&amp; c &gt; d"},
		{"<!channel>", oneLine, 100, "&lt;!channel&gt;"},
		{"two\nlines\tand a tab", oneLine, 100, `two\nlines\tand a tab`},
		{"two\nlines", quoted, 100, ">two\n>lines"},
		{"echo hi```\n<!here>", codeBlock, 100, "```echo hiˋˋˋ\n&lt;!here&gt;```"},
		{"`ls` and ``x``", codeBlock, 100, "```ˋls` and ˋˋxˋˋ```"},
		{"a `b` c", oneLine, 100, "a `b` c"},
		{"a `b` c", codeSpan, 100, "`a ˋbˋ c`"},
		{"rtl \u202e here\u200b", oneLine, 100, `rtl \u202e here\u200b`},
		{"bell\a esc\x1b bad\xff", oneLine, 100, `bell\x07 esc\x1b bad\xff`},
		{"&&&&&&", oneLine, 13, "&amp;&amp;…"},  // never half an entity
		{"abcdef", codeBlock, 10, "```abc…```"}, // the fence counted in the budget
		{"abc", codeBlock, 9, "```abc```"},
		{"😀😀😀", oneLine, 5, "😀😀…"}, // UTF-16: two units each
	} {
		got := inert(c.in, c.sh, c.limit)
		if got != c.want {
			t.Errorf("inert(%q, %d, %d) = %q, want %q", c.in, c.sh, c.limit, got, c.want)
		}
		if width(got) > c.limit {
			t.Errorf("inert(%q, %d, %d) is %d long", c.in, c.sh, c.limit, width(got))
		}
	}
}

func TestFitText(t *testing.T) {
	long := "head " + inert(strings.Repeat("<", 100), codeBlock, 1000) + " tail"
	got := fitText(long, 60)
	if width(got) > 60 || strings.Count(got, "```")%2 != 0 || !strings.HasSuffix(got, "…") {
		t.Fatalf("%q", got)
	}
	if got := fitText("a &amp; b", 6); got != "a …" {
		t.Fatalf("an entity cut: %q", got)
	}
	if got := fitText("short", 60); got != "short" {
		t.Fatalf("%q", got)
	}
}

// What a person types reaches the agent as typed.
func TestPlainText(t *testing.T) {
	conf := testConfig()
	for in, want := range map[string]string{
		"run `go test ./... &amp;&amp; go vet`":          "run `go test ./... && go vet`",
		"&lt;repo&gt;":                                   "<repo>",
		"&amp;lt; stays as typed":                        "&lt; stays as typed",
		"ask <@U0ANA> or <@U0NOBODY>":                    "ask @ana or @U0NOBODY",
		"see <#C0123|general> and <#C0456>":              "see #general and #C0456",
		"docs: <https://example.com/a?b=1&amp;c=2>":      "docs: https://example.com/a?b=1&c=2",
		"the <https://example.com|docs page>":            "the docs page (https://example.com)",
		"bare <http://example.com|example.com>":          "bare http://example.com",
		"write <mailto:ana@example.com|ana@example.com>": "write ana@example.com",
		"<!here> and <!subteam^S01|@oncall>":             "@here and @oncall",
		"unclosed < is &lt; text":                        "unclosed < is < text",
	} {
		if got := conf.plainText(in); got != want {
			t.Errorf("plainText(%q) = %q, want %q", in, got, want)
		}
	}
}

// mrkdwnToken is a Slack control sequence: a mention, a channel, a link.
var mrkdwnToken = regexp.MustCompile(`<[^<>]*>`)

// ours are the sequences our own messages hold: the config's members and
// the app.
var ours = map[string]bool{"<@U0ANA>": true, "<@U0BO>": true, "<@U0EVE>": true, "<@UAGENTINFRA>": true}

// checkInert fails when a text of a message holds a control sequence that
// is not ours, an entity that is not Slack's three, a character that
// reorders or hides text, or a code block left open.
func checkInert(t *testing.T, where, text string) {
	t.Helper()
	for _, m := range mrkdwnToken.FindAllString(text, -1) {
		if !ours[m] {
			t.Errorf("%s: live mrkdwn %q in %q", where, m, text)
		}
	}
	for i := strings.IndexByte(text, '&'); i >= 0; i = nextAmp(text, i) {
		if !strings.HasPrefix(text[i:], "&amp;") && !strings.HasPrefix(text[i:], "&lt;") && !strings.HasPrefix(text[i:], "&gt;") {
			t.Errorf("%s: a raw & at %d in %q", where, i, text)
		}
	}
	for _, r := range text {
		if hides(r) && r != '\n' && r != '\t' {
			t.Errorf("%s: %U left in %q", where, r, text)
		}
	}
	if strings.Count(text, "```")%2 != 0 {
		t.Errorf("%s: a code block left open (or closed early) in %q", where, text)
	}
	if fence := strings.Index(text, "```"); fence >= 0 {
		inside := text[fence+3:]
		if end := strings.Index(inside, "```"); end >= 0 && strings.Contains(inside[:end], "``") {
			t.Errorf("%s: a fence inside a code block in %q", where, text)
		}
	}
}

func nextAmp(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '&')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// FuzzInert: whatever the agent writes, in any shape and budget, comes
// out as text: no < or > (so no mention, channel, subteam or link), no &
// but Slack's three entities, nothing that reorders or hides text, within
// its budget, a code block that only its own fences open and close (no two
// backticks together inside, none at its ends), a code span without a
// backtick inside, one-line text on one line, every quoted line quoted.
func FuzzInert(f *testing.F) {
	for _, s := range []string{forged, "", "`", "``", "```", "````", "a```b", "&amp;", "\u202e", "x\ny", "\xff\xfe", strings.Repeat("<&>", 40)} {
		f.Add(s, uint16(100))
	}
	f.Fuzz(func(t *testing.T, s string, limit uint16) {
		lim := int(limit)%4000 + 10
		for _, sh := range []shape{oneLine, quoted, codeBlock, codeSpan} {
			out := inert(s, sh, lim)
			if width(out) > lim {
				t.Fatalf("shape %d: %d > %d: %q", sh, width(out), lim, out)
			}
			text := out
			if sh == quoted { // our quote marks
				text = strings.ReplaceAll(strings.TrimPrefix(text, ">"), "\n>", "\n")
			}
			if strings.ContainsAny(text, "<>") {
				t.Fatalf("shape %d: < or > in %q", sh, out)
			}
			if !utf8.ValidString(out) {
				t.Fatalf("shape %d: not UTF-8: %q", sh, out)
			}
			checkInert(t, "inert", out)
			switch sh {
			case codeBlock:
				inside := strings.TrimSuffix(strings.TrimPrefix(out, "```"), "```")
				if !strings.HasPrefix(out, "```") || !strings.HasSuffix(out, "```") || len(out) < 6 ||
					strings.Contains(inside, "``") || strings.HasPrefix(inside, "`") || strings.HasSuffix(inside, "`") {
					t.Fatalf("code block: %q", out)
				}
			case codeSpan:
				inside := strings.TrimSuffix(strings.TrimPrefix(out, "`"), "`")
				if strings.ContainsAny(inside, "`\n") {
					t.Fatalf("code span: %q", out)
				}
			case oneLine:
				if strings.ContainsAny(out, "\n") || strings.Contains(out, "``") {
					t.Fatalf("one line: %q", out)
				}
			case quoted:
				for _, l := range strings.Split(out, "\n") {
					if !strings.HasPrefix(l, ">") {
						t.Fatalf("quoted: a line out of the quote in %q", out)
					}
				}
			}
		}
	})
}

// FuzzMessages: agent text in every field of a session, a request, a
// prompt, an alert and their outcomes makes messages whose blocks and
// top-level text hold no mention, channel, subteam or link but ours, no
// code block it opened or closed, and fit Slack's limits.
func FuzzMessages(f *testing.F) {
	f.Add(forged, forged, strings.Repeat("<!channel>", 400))
	f.Add("```", "`", "x")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		s := &Service{conf: testConfig().withDefaults()}
		now := time.Now()
		ses := supervision.Session{ID: 1, Owner: a, Status: supervision.SessionTerminated, Mode: supervision.ModeRemote, CLI: b, Agent: c, TaskID: a,
			Title: b, LastTool: c, EndReason: a}
		r := supervision.Request{ID: 2, SessionID: 1, Tool: a, Command: b, File: c, URL: a, Diff: b, Title: c, Risk: a, Status: supervision.StatusRejected,
			DecidedBy: b, Surface: c, Reason: a, DecidedAt: &now, ExpiresAt: &now}
		p := supervision.Prompt{ID: 3, SessionID: 1, Kind: a, Text: b, Status: supervision.PromptRefined, Instruction: c, DecidedBy: a, Surface: b}
		al := supervision.Alert{ID: 4, SessionID: 1, Status: supervision.AlertDismissed, Reason: c, DecidedBy: a, Surface: b}
		type msg struct {
			text   string
			blocks []slack.Block
		}
		var msgs []msg
		add := func(text string, blocks []slack.Block) { msgs = append(msgs, msg{text, blocks}) }
		add(startBlocks(ses, s.conf))
		add(endBlocks(ses))
		for _, status := range []string{"", processing, outcome(s.conf, r, false), outcome(s.conf, r, true)} {
			add(requestBlocks(s, ses, r, status))
		}
		add(promptRender(s.conf, ses, p)(""))
		add(promptRender(s.conf, ses, p)(promptLine(s.conf, p, false)))
		add(alertRender(s.conf, ses, al)(alertLine(s.conf, al)))
		for i, m := range msgs {
			text := fitText(m.text, maxMessageText)
			checkInert(t, "text", text)
			if width(text) > maxMessageText {
				t.Fatalf("message %d: text of %d", i, width(text))
			}
			raw, _ := json.Marshal(m.blocks)
			var bs []struct {
				Text     *struct{ Text string }
				Elements []struct{ Text json.RawMessage }
			}
			json.Unmarshal(raw, &bs)
			for _, bl := range bs {
				var texts []string
				if bl.Text != nil {
					texts = append(texts, bl.Text.Text)
				}
				for _, e := range bl.Elements {
					var s string
					if json.Unmarshal(e.Text, &s) == nil {
						texts = append(texts, s)
					}
				}
				for _, x := range texts {
					checkInert(t, "block", x)
					if width(x) > maxSectionText {
						t.Fatalf("message %d: a block text of %d", i, width(x))
					}
				}
			}
		}
	})
}
