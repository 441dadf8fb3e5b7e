package matrix

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

var fuzzWordRe = regexp.MustCompile(`[\p{L}\p{N}]+`)

func wordCounts(s string) map[string]int {
	out := map[string]int{}
	for _, w := range fuzzWordRe.FindAllString(s, -1) {
		out[w]++
	}
	return out
}

// FuzzMigrateKeepsEveryWord puts any text in the Item, Backlog and
// Description cells of one item of an older-format file. Migrate either
// refuses and changes nothing, or gives a file that reads back as one task
// per item, with no error, in which every word of those cells still is (the
// words done, todo and x may be markers, and go).
//
//	go test ./matrix -run x -fuzz FuzzMigrateKeepsEveryWord -fuzztime 1m
func FuzzMigrateKeepsEveryWord(f *testing.F) {
	f.Add("Fix login", "✅", "Users bounce `a \\| b` [link](http://x.y)")
	f.Add("~~Drop legacy API~~", "", "done in #212")
	f.Add("[x] DONE: thing ✔️", "sprint 4", "")
	f.Add("a | b", "x", "c")
	f.Add("trailing backslash \\", "⬜", "TODO")
	f.Fuzz(func(t *testing.T, item, backlog, desc string) {
		oneLine := strings.NewReplacer("\n", " ", "\r", " ")
		item, backlog, desc = oneLine.Replace(item), oneLine.Replace(backlog), oneLine.Replace(desc)
		template := func(item, backlog, desc string) string {
			return "# Plan\n\n| Size | Meaning |\n|---|---|\n| S | under an hour |\n\n## P1 — Critical\n\n" +
				"| Item | Priority | Difficulty | Backlog | Description |\n|---|---|---|---|---|\n" +
				"| Alpha one | P1 | S | ✅ | first |\n" +
				"| " + item + " | P2 | M | " + backlog + " | " + desc + " |\n" +
				"| Omega three | | L | | last |\n\nThe end.\n"
		}
		// The same file with those cells empty, migrated with the same IDs:
		// the words the cells add must all be there on top of its words.
		countingRand(t)
		base := Parse([]byte(template("", "", "")))
		if _, err := base.Migrate(migrateNow); err != nil {
			t.Fatal(err)
		}
		countingRand(t)
		src := template(item, backlog, desc)
		d := Parse([]byte(src))
		m, err := d.Migrate(migrateNow)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Migrate failed without refusing: %v", err)
			}
			if string(d.Bytes()) != src {
				t.Fatalf("a refused Migrate changed the document")
			}
			return
		}
		out := string(d.Bytes())
		nd := Parse(d.Bytes())
		if m.Migrated != 3 || len(nd.Tasks()) != 3 {
			t.Fatalf("%d items migrated, %d tasks read back; want 3\n%s", m.Migrated, len(nd.Tasks()), out)
		}
		for _, dg := range nd.Diagnostics() {
			if dg.Severity == SeverityError {
				t.Fatalf("the migrated file has an error: %s\n%s", dg, out)
			}
		}
		fixed := wordCounts(string(base.Bytes()))
		in, got := wordCounts(item+" "+backlog+" "+desc), wordCounts(out)
		for w, n := range in {
			switch strings.ToLower(w) {
			case "done", "todo", "x":
				continue
			}
			if got[w] < n+fixed[w] {
				t.Fatalf("word %q: %d in the cells, %d in the migrated file\n%s", w, n, got[w], out)
			}
		}
		if !strings.HasPrefix(out, "# Plan\n\n| Size | Meaning |\n|---|---|\n| S | under an hour |\n\n## P1 — Critical\n\n") || !strings.HasSuffix(out, " |\n\nThe end.\n") {
			t.Fatalf("the prose around the table changed:\n%s", out)
		}
	})
}
