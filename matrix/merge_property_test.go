package matrix

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// The property of issue 32: for two sides of random row adds, deletes and
// cell edits of one base, every change of either side that does not touch
// the same cell is in the result, no row is lost or duplicated, and the
// conflicts are exactly the rows where both sides changed the same cell
// differently (or one deleted what the other changed, or both added one
// ID as different rows). The expected result is computed here from the
// rules, field by field, not from the merge's code.

// pRow is a generated row: its fields, and how its line is padded.
type pRow struct {
	id, status, pri, desc, updated string
	skills, agents                 []string
	tight                          bool
}

var propFields = []string{"Status", "Pri", "Description", "Skills", "Agents", "Updated"}

func (r pRow) field(f string) string {
	switch f {
	case "Status":
		return r.status
	case "Pri":
		return r.pri
	case "Description":
		return r.desc
	case "Skills":
		return strings.Join(r.skills, ", ")
	case "Agents":
		return strings.Join(r.agents, " ")
	}
	return r.updated
}

func (r pRow) line() string {
	cells := []string{r.id, r.status, r.pri, "med", "coder", strings.Join(r.skills, ", "), strings.Join(r.agents, " "), r.desc, "2026-01-01", r.updated}
	if r.tight {
		for i, c := range cells {
			if c == "" {
				cells[i] = " " // `||` reads as no cell at a line's end: keep every empty cell a space
			}
		}
		return "|" + strings.Join(cells, "|") + "|"
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

func propDoc(rows []pRow) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = r.line()
	}
	return "# Matrix\n\nProse before.\n\n" + mergeHeader + strings.Join(lines, "\n") + "\n\n## Notes\n\nProse after.\n"
}

type propGen struct{ r *rand.Rand }

func (g propGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g propGen) subset(list []string) []string {
	var out []string
	for _, x := range list {
		if g.r.IntN(2) == 0 {
			out = append(out, x)
		}
	}
	return out
}

func (g propGen) date() string { return fmt.Sprintf("2026-01-%02d", 1+g.r.IntN(28)) }

func (g propGen) newRow(id string) pRow {
	return pRow{id: id, status: g.pick(Statuses), pri: g.pick(Priorities), desc: g.pick(words) + " " + g.pick(words),
		updated: g.date(), skills: g.subset(propSkills), agents: g.subset(propAgents), tight: g.r.IntN(4) == 0}
}

var (
	words      = strings.Fields("fix add login cache docs retry parser index store lock")
	propSkills = []string{"go", "sh", "rust", "py"}
	propAgents = []string{"@ann", "@bob", "@cy"}
)

// edit changes one field of r.
func (g propGen) edit(r pRow) pRow {
	switch f := g.pick(propFields); f {
	case "Status":
		r.status = g.pick(Statuses)
	case "Pri":
		r.pri = g.pick(Priorities)
	case "Description":
		r.desc = g.pick(words) + " " + g.pick(words) + " " + g.pick(words)
	case "Skills":
		r.skills = g.subset(propSkills)
	case "Agents":
		r.agents = g.subset(propAgents)
	default:
		r.updated = g.date()
	}
	return r
}

// side derives one side from base: deletes, edits, adds (IDs prefix-n).
func (g propGen) side(base []pRow, prefix string, shared *pRow) []pRow {
	var out []pRow
	n := 0
	addSome := func() {
		for g.r.IntN(5) == 0 {
			n++
			out = append(out, g.newRow(fmt.Sprintf("%s-%d", prefix, n)))
		}
	}
	addSome()
	for _, r := range base {
		switch k := g.r.IntN(10); {
		case k == 0:
			// deleted
		case k < 4:
			r = g.edit(r)
			if g.r.IntN(3) == 0 {
				r = g.edit(r)
			}
			out = append(out, r)
		default:
			out = append(out, r)
		}
		addSome()
	}
	if shared != nil {
		out = append(out, *shared) // both sides append the task they create
	}
	return out
}

// expected is a row as a side's view of the result must read.
type expected struct {
	fields map[string]string
	sets   map[string][]string
}

func fieldsOf(r pRow) expected {
	e := expected{fields: map[string]string{}, sets: map[string][]string{"Skills": r.skills, "Agents": r.agents}}
	for _, f := range propFields {
		e.fields[f] = r.field(f)
	}
	return e
}

// mergeModel merges the fields of o and t from b by the rules; it
// returns both sides' views and the fields in conflict.
func mergeModel(b, o, t pRow) (ours, theirs expected, conflicts []string) {
	ours, theirs = fieldsOf(o), fieldsOf(t)
	for _, f := range propFields {
		bv, ov, tv := b.field(f), o.field(f), t.field(f)
		var v string
		switch {
		case ov == tv, tv == bv:
			v = ov
		case ov == bv:
			v = tv
		case f == "Updated":
			v = max(ov, tv)
		case f == "Skills" || f == "Agents":
			bs, os, ts := map[bool][]string{true: b.skills, false: b.agents}[f == "Skills"], map[bool][]string{true: o.skills, false: o.agents}[f == "Skills"], map[bool][]string{true: t.skills, false: t.agents}[f == "Skills"]
			var set []string
			for _, x := range append(append([]string{}, os...), ts...) {
				removed := slices.Contains(bs, x) && (!slices.Contains(os, x) || !slices.Contains(ts, x))
				if !removed && !slices.Contains(set, x) {
					set = append(set, x)
				}
			}
			ours.sets[f], theirs.sets[f] = set, set
			continue
		default:
			conflicts = append(conflicts, f)
			continue
		}
		ours.fields[f], theirs.fields[f] = v, v
		if f == "Skills" || f == "Agents" {
			src := map[string]pRow{ov: o, tv: t}[v]
			if f == "Skills" {
				ours.sets[f], theirs.sets[f] = src.skills, src.skills
			} else {
				ours.sets[f], theirs.sets[f] = src.agents, src.agents
			}
		}
	}
	return ours, theirs, conflicts
}

func TestMergeProperty(t *testing.T) {
	n := 1000
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		n = 20000
	}
	conflicted, clean := 0, 0
	for seed := 0; seed < n; seed++ {
		if checkMergeCase(t, uint64(seed)) {
			conflicted++
		} else {
			clean++
		}
		if t.Failed() {
			t.Fatalf("case %d failed (re-run with that seed)", seed)
		}
	}
	t.Logf("%d cases: %d with conflicts, %d clean", n, conflicted, clean)
	if conflicted < n/10 || clean < n/10 {
		t.Errorf("the generator made %d conflicted and %d clean cases of %d: it no longer tests both", conflicted, clean, n)
	}
}

// checkMergeCase generates and checks one case; it reports whether the
// case had conflicts.
func checkMergeCase(t *testing.T, seed uint64) bool {
	g := propGen{rand.New(rand.NewPCG(seed, 32))}
	base := make([]pRow, 1+g.r.IntN(20))
	for i := range base {
		base[i] = g.newRow(fmt.Sprintf("T-%d", i+1))
	}
	var sharedO, sharedT *pRow
	if g.r.IntN(8) == 0 {
		o := g.newRow("N-1")
		t := o
		if g.r.IntN(2) == 0 {
			t = g.edit(o)
		}
		sharedO, sharedT = &o, &t
	}
	ours, theirs := g.side(base, "O", sharedO), g.side(base, "X", sharedT)
	res, err := Merge([]byte(propDoc(base)), []byte(propDoc(ours)), []byte(propDoc(theirs)), MergeOptions{})
	if err != nil {
		t.Errorf("seed %d: %v", seed, err)
		return false
	}
	out := string(res.Bytes)
	if res.ByLines != "" {
		t.Errorf("seed %d: merged by lines: %s", seed, res.ByLines)
		return false
	}
	// The model.
	byID := func(rows []pRow) map[string]pRow {
		m := map[string]pRow{}
		for _, r := range rows {
			m[r.id] = r
		}
		return m
	}
	bm, om, tm := byID(base), byID(ours), byID(theirs)
	wantOurs, wantTheirs := map[string]expected{}, map[string]expected{}
	wantConflicts := map[string]string{}
	changed := func(x pRow, ok bool, b pRow) bool { return ok && fieldsDiffer(x, b) }
	for _, id := range unionIDs(base, ours, theirs) {
		b, inB := bm[id]
		o, inO := om[id]
		th, inT := tm[id]
		switch {
		case inO && inT:
			if !inB {
				b = pRow{} // a new ID on both sides: merged as if from nothing
			}
			eo, et, cs := mergeModel(b, o, th)
			if len(cs) > 0 && !inB {
				wantOurs[id], wantTheirs[id] = fieldsOf(o), fieldsOf(th)
				wantConflicts[id] = ConflictAddedBoth
				continue
			}
			wantOurs[id], wantTheirs[id] = eo, et
			if len(cs) > 0 {
				wantConflicts[id] = ConflictCells + " " + strings.Join(cs, ",")
			}
		case inO:
			if inB && !changed(o, inO, b) {
				continue // deleted by theirs
			}
			wantOurs[id] = fieldsOf(o)
			if inB {
				wantConflicts[id] = ConflictDeleted + " theirs"
			} else {
				wantTheirs[id] = fieldsOf(o)
			}
		case inT:
			if inB && !changed(th, inT, b) {
				continue
			}
			wantTheirs[id] = fieldsOf(th)
			if inB {
				wantConflicts[id] = ConflictDeleted + " ours"
			} else {
				wantOurs[id] = fieldsOf(th)
			}
		}
	}
	// Conflicts, exactly.
	got := map[string]string{}
	for _, c := range res.Conflicts {
		switch c.Kind {
		case ConflictCells:
			var cols []string
			for _, cc := range c.Cells {
				cols = append(cols, cc.Column)
			}
			got[c.ID] = c.Kind + " " + strings.Join(cols, ",")
		case ConflictDeleted:
			got[c.ID] = c.Kind + " " + c.DeletedBy
		default:
			got[c.ID] = c.Kind
		}
	}
	for id, w := range wantConflicts {
		if got[id] != w {
			t.Errorf("seed %d: task %s: conflict %q, want %q", seed, id, got[id], w)
		}
	}
	for id, g := range got {
		if _, ok := wantConflicts[id]; !ok {
			t.Errorf("seed %d: task %s: conflict %q, want none", seed, id, g)
		}
	}
	// Each side's view: every row, once, with its fields; each side's rows
	// in that side's order.
	for _, view := range []struct {
		ours bool
		want map[string]expected
		side []pRow
	}{{true, wantOurs, ours}, {false, wantTheirs, theirs}} {
		src := ResolveConflicts(res.Bytes, func(c ConflictBlock) (string, bool) {
			if view.ours {
				return c.Ours, true
			}
			return c.Theirs, true
		})
		d := Parse(src)
		if ds := d.Diagnostics(); len(ds) > 0 {
			t.Errorf("seed %d: the result reads with problems: %v\n%s", seed, ds, src)
		}
		tasks := d.Tasks()
		seen := map[string]bool{}
		for _, tk := range tasks {
			if seen[tk.ID] {
				t.Errorf("seed %d: task %s twice", seed, tk.ID)
			}
			seen[tk.ID] = true
			w, ok := view.want[tk.ID]
			if !ok {
				t.Errorf("seed %d: task %s in the result (ours view %v), want it gone", seed, tk.ID, view.ours)
				continue
			}
			for f, v := range w.fields {
				if f == "Skills" || f == "Agents" {
					continue
				}
				if gv, _ := tk.Field(f); gv != v {
					t.Errorf("seed %d: task %s %s = %q, want %q (ours view %v)", seed, tk.ID, f, gv, v, view.ours)
				}
			}
			for f, want := range w.sets {
				gv := tk.Skills
				if f == "Agents" {
					gv = tk.Agents
				}
				if !sameSet(gv, want) {
					t.Errorf("seed %d: task %s %s = %v, want %v", seed, tk.ID, f, gv, want)
				}
			}
		}
		for id := range view.want {
			if !seen[id] {
				t.Errorf("seed %d: task %s lost (ours view %v)", seed, id, view.ours)
			}
		}
		// Ours' rows keep ours' order; theirs' rows that ours lacks keep
		// theirs' (a row both have stands where ours has it).
		var order []string
		in := map[string]bool{}
		for _, r := range view.side {
			if _, both := om[r.id]; view.ours || !both {
				in[r.id] = true
			}
		}
		for _, tk := range tasks {
			if in[tk.ID] {
				order = append(order, tk.ID)
			}
		}
		var sideOrder []string
		for _, r := range view.side {
			if seen[r.id] && in[r.id] {
				sideOrder = append(sideOrder, r.id)
			}
		}
		if !slices.Equal(order, sideOrder) {
			t.Errorf("seed %d: the side's rows in the order %v, the side has %v", seed, order, sideOrder)
		}
	}
	// A row nobody changed keeps its bytes; the prose around is kept.
	for _, b := range base {
		o, inO := om[b.id]
		th, inT := tm[b.id]
		if inO && inT && !fieldsDiffer(o, b) && !fieldsDiffer(th, b) && !strings.Contains(out, "\n"+b.line()+"\n") {
			t.Errorf("seed %d: unchanged row %s lost its bytes:\n%s", seed, b.id, out)
		}
	}
	if !strings.HasPrefix(out, "# Matrix\n\nProse before.\n\n") || !strings.HasSuffix(out, "\n\n## Notes\n\nProse after.\n") {
		t.Errorf("seed %d: the prose changed:\n%s", seed, out)
	}
	if t.Failed() {
		t.Logf("base:\n%s\nours:\n%s\ntheirs:\n%s\nmerged:\n%s", propDoc(base), propDoc(ours), propDoc(theirs), out)
	}
	return len(res.Conflicts) > 0
}

func fieldsDiffer(a, b pRow) bool {
	for _, f := range propFields {
		if a.field(f) != b.field(f) {
			return true
		}
	}
	return false
}

func unionIDs(sides ...[]pRow) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sides {
		for _, r := range s {
			if !seen[r.id] {
				seen[r.id] = true
				out = append(out, r.id)
			}
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
