package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

// The real-world corpus (../testdata/realworld) merges with itself edited on
// two sides: ours changes a task and adds one, theirs changes another and
// adds one, each through the codec as agentinfra writes. The merge is clean
// and equals the two edits made one after the other; a file without a task
// table merges as lines, both prose edits in.
func TestMergeRealworldCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "realworld", "*", ".agent", "DEVELOPMENT_MATRIX.md"))
	if len(files) < 10 {
		t.Fatalf("%d corpus matrices under ../testdata/realworld", len(files))
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, file := range files {
		name := filepath.Base(filepath.Dir(filepath.Dir(file)))
		t.Run(name, func(t *testing.T) {
			base, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			d := Parse(base)
			if !d.HasTaskTable() {
				// Prose only: two edits apart, merged as lines.
				ours := "An added first line.\n\n" + string(base)
				theirs := string(base) + "\nAn added last line.\n"
				want := "An added first line.\n\n" + string(base) + "\nAn added last line.\n"
				if len(base) == 0 { // nothing between two edits: one side edits
					theirs, want = "", ours
				}
				res := mustMerge(t, string(base), ours, theirs)
				if string(res.Bytes) != want || len(res.Conflicts) > 0 {
					t.Errorf("merged (%v):\n%s", res.Conflicts, res.Bytes)
				}
				return
			}
			first, last := editableIDs(d)
			edit := func(id string, u Update, add Task) []byte {
				nd := Parse(append([]byte(nil), base...))
				if _, err := nd.UpdateTask(id, u, now); err != nil {
					t.Fatalf("update %s: %v", id, err)
				}
				if err := nd.AddTask(add); err != nil {
					t.Fatalf("add %s: %v", add.ID, err)
				}
				return nd.Bytes()
			}
			addO := Task{ID: "zz-ours", Status: "TODO", Priority: "P2", Difficulty: "med", Description: "added on ours", Created: "2026-03-04", Updated: "2026-03-04"}
			addT := Task{ID: "zz-theirs", Status: "TODO", Priority: "P3", Difficulty: "easy", Description: "added on theirs", Created: "2026-03-04", Updated: "2026-03-04"}
			uO := Update{Status: Str("DONE")}
			uT := Update{Description: Str("reworded on theirs")}
			ours, theirs := edit(first, uO, addO), edit(last, uT, addT)
			res, err := Merge(base, ours, theirs, MergeOptions{Lines: gitLines(t)})
			if err != nil || res.ByLines != "" || len(res.Conflicts) > 0 {
				t.Fatalf("merge: %v, by lines %q, conflicts %v", err, res.ByLines, res.Conflicts)
			}
			// The two edits one after the other.
			want := Parse(ours)
			if _, err := want.UpdateTask(last, uT, now); err != nil {
				t.Fatal(err)
			}
			if err := want.AddTask(addT); err != nil {
				t.Fatal(err)
			}
			if string(res.Bytes) != string(want.Bytes()) {
				t.Errorf("merged:\n%s\nwant the two edits made one after the other:\n%s", res.Bytes, want.Bytes())
			}
		})
	}
}

// editableIDs returns the first and the last ID of d that one row holds,
// on one line and readable.
func editableIDs(d *Doc) (string, string) {
	count := map[string]int{}
	for _, id := range d.IDs() {
		count[id]++
	}
	var ok []string
	for _, tk := range d.Tasks() {
		if count[tk.ID] == 1 && tk.EndLine == 0 && ValidID(tk.ID) && len(d.rowErrors(d.byID(tk.ID)[0])) == 0 {
			ok = append(ok, tk.ID)
		}
	}
	return ok[0], ok[len(ok)-1]
}

// BenchmarkMerge merges two 10,000-row matrices with 100 changes a side
// (cells of different rows, a new row each tenth change) into their base.
func BenchmarkMerge(b *testing.B) {
	for _, n := range []int{10000} {
		base := testmatrix.Generate(n, 1)
		side := func(from, step int, tag string) []byte {
			d := Parse(append([]byte(nil), base...))
			now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			for k := 0; k < 100; k++ {
				if k%10 == 9 {
					if err := d.AddTask(Task{ID: fmt.Sprintf("%s%04d", tag, k), Status: "TODO", Priority: "P2", Difficulty: "med", Description: "new on " + tag, Created: "2026-05-01", Updated: "2026-05-01"}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				id := testmatrix.ID(from + k*step)
				if _, err := d.UpdateTask(id, Update{Description: Str("changed on " + tag)}, now); err != nil {
					b.Fatal(err)
				}
			}
			return d.Bytes()
		}
		ours, theirs := side(0, 86, "ours"), side(1, 94, "theirs") // even rows and odd rows: no row changed twice
		b.Run(fmt.Sprintf("rows=%d/changes=100+100", n), func(b *testing.B) {
			b.SetBytes(int64(len(base)))
			b.ReportAllocs()
			cpu := processCPU()
			defer func() {
				if used := processCPU() - cpu; used > 0 {
					b.ReportMetric(float64(used.Microseconds())/1000/float64(b.N), "cpu-ms/op")
				}
			}()
			for b.Loop() {
				res, err := Merge(base, ours, theirs, MergeOptions{})
				if err != nil || len(res.Conflicts) > 0 || res.ByLines != "" {
					b.Fatalf("%v %v %s", err, res.Conflicts, res.ByLines)
				}
				if !strings.Contains(string(res.Bytes[len(res.Bytes)-400:]), "theirs0099") {
					b.Fatal("theirs' last row is not in the result")
				}
			}
		})
	}
}
