// Command gen writes the generated matrices of the real-world corpus:
// timestamps/, dashes/ and legacy/ (cellcounts/ is written by hand). The output
// is committed; rerun it only to change the corpus on purpose:
//
//	go run ./testdata/realworld/gen
//
// It runs from the repository root, uses a fixed seed, and writes the same
// bytes every time. Each case also gets ids.txt: the IDs a correct reader
// returns, in file order (empty for legacy/, which has no task table).
package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const root = "testdata/realworld"

func main() {
	r := rand.New(rand.NewPCG(9, 2026))
	write("timestamps", timestamps(r))
	write("dashes", dashes(r))
	write("legacy", legacy(r))
}

type matrixFile struct {
	src string
	ids []string
}

func write(name string, m matrixFile) {
	p := filepath.Join(root, name, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(m.src), 0o644); err != nil {
		log.Fatal(err)
	}
	ids := strings.Join(m.ids, "\n")
	if ids != "" {
		ids += "\n"
	}
	if err := os.WriteFile(filepath.Join(root, name, "ids.txt"), []byte(ids), 0o644); err != nil {
		log.Fatal(err)
	}
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// pad surrounds a cell value the way hands do: mostly one space, sometimes
// none, two or three, or a tab.
func pad(r *rand.Rand, v string) string {
	switch r.IntN(10) {
	case 0:
		return v
	case 1:
		return "  " + v + "   "
	case 2:
		return " " + v + "  "
	case 3:
		if v != "" {
			return "\t" + v + " "
		}
		return " "
	default:
		return " " + v + " "
	}
}

var (
	subjects = []string{
		"sync engine", "note editor", "tag sidebar", "search index", "`sqlite` schema", "export to PDF",
		"Tauri IPC bridge", "settings pane", "offline queue", "markdown preview", "attachment store",
		"crash reporter", "onboarding flow", "keyboard shortcuts", "theme switcher", "backup job",
		"conflict resolver", "i18n strings (de/fr/日本語)", "window state", "auto-updater",
	}
	verbs = []string{
		"Fix", "Refactor", "Add tests for", "Speed up", "Document", "Harden", "Split", "Rewrite",
		"Investigate flaky", "Polish", "Migrate", "Wire up",
	}
	tails = []string{
		"",
		" — see [#142](https://github.com/inkwell/app/issues/142)",
		" (regression since `v0.14.2`)",
		" 🐛",
		" so it survives a `SIGTERM` mid-write",
		"; blocked on upstream `tauri-plugin-fs`",
		" for Zoë's café demo ☕",
		" — follow-up of 260103093012",
		" using `serde_json::from_str::<Vec<Note>>()`",
		" ✨ nicer empty state",
		", then ping @maria in #desktop",
	}
)

func description(r *rand.Rand) string {
	return pick(r, verbs) + " " + pick(r, subjects) + pick(r, tails)
}

// continuation is the rest of a Description that goes on over several lines,
// in one of the shapes people write; each ends with the text that precedes the
// row's closing cells on the last line ("" when the last line opens with '|').
func continuation(r *rand.Rand, k int) (lines []string, last string) {
	switch k % 6 {
	case 0: // numbered list
		lines = []string{
			"1. reproduce with `cargo tauri dev` on a fresh profile",
			"2. add a failing test in `src-tauri/tests/sync.rs`",
			"3. fix, then run the full suite twice  ",
		}
	case 1: // a paragraph after a blank line
		lines = []string{
			"",
			"Context: the old code assumed one window per vault. Since 0.15 we open one per",
			"workspace, so the lock has to move into the backend. Keep the public API.",
		}
		last = "Owner: @maria"
	case 2: // bullet list
		lines = []string{
			"- [ ] measure cold start on the Intel Mac",
			"- [x] drop the unused `lodash` import",
			"* check Windows paths with `C:\\Users\\Zoë\\Notes`",
		}
	case 3: // fenced bash code with pipes in it
		lines = []string{
			"Repro:",
			"```bash",
			"cat notes.log | grep -c 'conflict'   # a | b",
			"sqlite3 inkwell.db 'select id, title from notes' | column -t",
			"| x | y |",
			"```",
		}
	case 4: // a heading inside a cell
		lines = []string{
			"",
			"## Notes",
			"",
			"The importer treats `#tag` at line start as a heading. Decide with design first.",
		}
		last = "see thread"
	case 5: // list, blank line, then more prose
		lines = []string{
			"Steps:",
			"1. bump `rusqlite` to 0.31",
			"2. regenerate `schema.sql`",
			"",
			"Afterwards **verify** the migration on a 2 GB vault (ask Jörg for the file).",
		}
	}
	return lines, last
}

func stamp(t time.Time) string { return t.Format("060102150405") }

func timestamps(r *rand.Rand) matrixFile {
	var b strings.Builder
	b.WriteString(`# Inkwell — Development Matrix

> Single source of truth for what we are working on. Agents: read ` + "`AGENTS.md`" + ` first, then pick a TODO
> row that matches your mode. **Do not reorder rows.**  

Last big cleanup: 2026-01-16 (see ` + "`tasks/260116_bug_fixes/`" + `).

## Legend

| Status | Meaning |
|---|---|
| TODO | nobody started |
| IN_PROGRESS | someone (or some agent) is on it |
| BLOCKED | waiting on something, say what in the description |
| REVIEW | PR open |
| DONE | merged |

Difficulty: ` + "`trivial`/`S`/`easy`" + ` < ` + "`M`/`medium`" + ` < ` + "`L`/`hard`" + `. Modes: ` + "`code`, `architect`, `agent`" + ` (generic).

## Tasks

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|--------------|--------|-----|------|------|--------|--------|-------------|---------|---------|
`)
	var ids []string
	t := time.Date(2026, 1, 1, 9, 12, 40, 0, time.UTC)
	const n = 162
	// Continued rows are spread through the file: about every fifth row, never
	// two in a row, the first early and the last near the end.
	continued := map[int]int{}
	k := 0
	for i := 3; i < n-2; i += 4 + r.IntN(3) {
		continued[i] = k
		k++
	}
	diffs := []string{"medium", "M", "trivial", "hard", "easy", "S", "L", "med", "medium", "M", "hard"}
	modes := []string{"code", "code", "code", "architect", "agent", "code", "agent"}
	skills := []string{"", "", "rust-tauri", "sqlite", "rust-tauri, sqlite", "ui-polish", ""}
	agents := []string{"", "@claude", "@codex", "@claude @codex", "@gemini", ""}
	for i := 0; i < n; i++ {
		t = t.Add(time.Duration(2+r.IntN(6*3600)) * time.Second)
		id := stamp(t)
		ids = append(ids, id)
		status := "DONE"
		switch x := r.IntN(20); {
		case i > n-40 && x < 9:
			status = "TODO"
		case x < 2:
			status = "TODO"
		case x == 2:
			status = "IN_PROGRESS"
		case x == 3:
			status = "BLOCKED"
		case x == 4 && i > n/2:
			status = "REVIEW"
		}
		if i == 40 || i == 101 || i == 150 {
			status = "IN_PROGRESS"
		}
		created := t.Format("2006-01-02")
		if r.IntN(3) > 0 {
			created = t.Format("2006-01-02 15:04:05")
		}
		u := t.Add(time.Duration(r.IntN(5*24*3600)) * time.Second)
		updated := u.Format("2006-01-02 15:04:05")
		if r.IntN(4) == 0 {
			updated = u.Format("2006-01-02")
		}
		pri := fmt.Sprintf("P%d", 1+r.IntN(3))
		cells := []string{id, status, pri, pick(r, diffs), pick(r, modes), pick(r, skills), pick(r, agents)}
		for j, c := range cells {
			cells[j] = pad(r, c)
			if c == "" && r.IntN(2) == 0 {
				cells[j] = " "
			}
		}
		line := "|" + strings.Join(cells, "|") + "|" + pad(r, description(r))
		if kk, ok := continued[i]; ok {
			more, last := continuation(r, kk)
			b.WriteString(line + "\n")
			for _, m := range more {
				b.WriteString(m + "\n")
			}
			if last != "" {
				last += " "
			}
			b.WriteString(last + "|" + pad(r, created) + "|" + pad(r, updated) + "|\n")
			continue
		}
		end := "|"
		if r.IntN(12) == 0 {
			end = "|  " // trailing spaces people leave
		}
		b.WriteString(line + "|" + pad(r, created) + "|" + pad(r, updated) + end + "\n")
	}
	b.WriteString(`
<!-- new rows go above this line -->

## Notes

- IDs are ` + "`date +%y%m%d%H%M%S`" + ` at creation time. Never reuse one.
- Rows can span lines when the description needs a list; GitHub renders them badly, we know. 🙈
- Batch fixes live in ` + "`tasks/YYMMDD_topic/`" + `.
`)
	return matrixFile{b.String(), ids}
}

func dashes(r *rand.Rand) matrixFile {
	var b strings.Builder
	b.WriteString(`# DEVELOPMENT MATRIX

Project: **fjord-cli** · owner: Ingrid Ødegård  
Empty cells are written ` + "`-`" + ` (some older rows use an em dash).

| ID | Status | Pri | Diff | Mode | Skills | Agents | Research | Workflows | Description | Created | Updated |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
`)
	var ids []string
	day := time.Date(2025, 11, 3, 0, 0, 0, 0, time.UTC)
	statuses := []string{"DONE", "DONE", "DONE", "TODO", "TODO", "IN_PROGRESS", "BLOCKED", "REVIEW"}
	subjects := []string{
		"`fjord sync --dry-run` prints a plan", "retry on HTTP 429 with `Retry-After`", "config schema v2",
		"shell completions (bash, zsh, fish)", "`--json` for every list command", "progress bar on slow links",
		"Windows long paths (`\\\\?\\C:\\…`)", "man page", "telemetry opt-out 🔕", "ÆØÅ in file names",
	}
	for i := 0; i < 41; i++ {
		id := fmt.Sprintf("TASK-%d", i+1)
		ids = append(ids, id)
		day = day.AddDate(0, 0, 1+r.IntN(2))
		dash := "-"
		if i < 9 && i%3 == 0 {
			dash = "—"
		}
		mode, sk, ag, res, wf := dash, dash, dash, dash, dash
		switch i % 7 {
		case 2:
			mode, ag = "code", "@claude"
		case 4:
			sk, res = "rust-cli", "[notes](research/retry.md)"
		case 5:
			wf = "release"
		}
		if i == 11 {
			mode, sk, ag, res, wf = "code", "rust-cli, testing", "@claude, @codex", "research/completions.md", "ci, release"
		}
		cells := []string{id, pick(r, statuses), fmt.Sprintf("P%d", 1+r.IntN(4)), pick(r, []string{"easy", "med", "hard"}),
			mode, sk, ag, res, wf, pick(r, []string{"Add", "Fix", "Test", "Design"}) + " " + pick(r, subjects),
			day.Format("2006-01-02"), day.AddDate(0, 0, r.IntN(6)).Format("2006-01-02")}
		for j, c := range cells {
			cells[j] = pad(r, c)
		}
		b.WriteString("|" + strings.Join(cells, "|") + "|\n")
	}
	b.WriteString("\nQuestions → #fjord-dev on Slack.") // no final newline
	return matrixFile{b.String(), ids}
}

func legacy(r *rand.Rand) matrixFile {
	var b strings.Builder
	b.WriteString(`# Development Matrix (v1)

This is the old format we used before IDs. Sizes and priorities are explained below.

## Legend

| Size | Meaning |
|------|---------|
| S | under an hour |
| M | half a day |
| L | two or three days |
| XL | a week or more — split it |

| Priority | Meaning |
|----------|---------|
| Critical | breaks builds or loses data |
| High | this sprint |
| Medium | next sprint |
| Low | someday |

Markers: ✅ or [x] = done, ~~struck~~ = dropped, nothing = open.
`)
	sections := []struct{ title, pri string }{
		{"## 🔴 Critical", "Critical"}, {"## High priority", "High"}, {"## Medium", "Medium"}, {"## Low / nice to have", "Low"},
	}
	items := []string{
		"Login page", "Password reset mail", "Rate limiter", "Audit log", "CSV import", "Dark mode",
		"Mobile layout", "Billing webhooks", "Search autocomplete", "Avatar upload", "2FA via TOTP",
		"Admin impersonation", "GDPR export", "Slack notifications", "API keys page", "Invoice PDFs",
		"SSO with Okta", "Team invites", "Usage dashboard", "Email digests", "Webhook retries",
		"Onboarding checklist", "Stripe tax IDs", "Role-based access", "Activity feed", "Bulk delete",
		"Saved filters", "Public status page", "Trial expiry banner", "Session timeout", "Export to Excel",
		"Keyboard shortcuts", "Localisation (de, fr)", "Accessibility audit", "Error pages", "Rate-limit headers",
		"Password strength meter", "Soft delete + restore", "Changelog page", "Favicon & PWA manifest",
		"Zapier integration", "Cookie banner",
	}
	order := r.Perm(len(items))
	count := 0
	for si, s := range sections {
		b.WriteString("\n" + s.title + "\n\n")
		if si == 2 {
			b.WriteString("Everything here waits for the Q3 planning.\n\n")
		}
		b.WriteString("| Item | Priority | Difficulty | Backlog | Description |\n|------|----------|------------|---------|-------------|\n")
		for j := 0; j < 10+si%2; j++ {
			count++
			name := items[order[count-1]]
			switch r.IntN(6) {
			case 0:
				name = "✅ " + name
			case 1:
				name = "[x] " + name
			case 2:
				name = "~~" + name + "~~"
			}
			backlog := pick(r, []string{"", "yes", "Sprint 12", "no", ""})
			desc := pick(r, []string{"", "needs design", "see `docs/auth.md`", "customer ask (Müller GmbH)", "blocked by vendor 🙄", "spike first"})
			cells := []string{name, s.pri, pick(r, []string{"S", "M", "L", "XL", "M"}), backlog, desc}
			for k, c := range cells {
				cells[k] = pad(r, c)
			}
			b.WriteString("|" + strings.Join(cells, "|") + "|\n")
		}
	}
	b.WriteString("\n_Last updated 2024-06-02 by hand._\n")
	return matrixFile{b.String(), nil}
}
