package matrix

import "hash/maphash"

// idIndex finds the task rows of an ID. It is an open-addressing table of
// positions in Doc.rows: a Go map of 10,000 IDs costs about 150 page faults
// more than these 64 KB, in a parse that is meant to cost little more than
// reading the file.
type idIndex struct {
	slots []int32 // 1 + the position in Doc.rows of the first row of an ID; 0: empty
	n     int
	dups  map[string][]*row // every row of each ID that is on several rows
}

var idSeed = maphash.MakeSeed()

// reserve sizes the table for n IDs in all.
func (x *idIndex) reserve(rows []*row, n int) {
	if 2*n > len(x.slots) {
		x.rehash(rows, n)
	}
}

func (x *idIndex) rehash(rows []*row, n int) {
	size := 64
	for size < 2*n {
		size *= 2
	}
	old := x.slots
	x.slots = make([]int32, size)
	for _, s := range old {
		if s != 0 {
			x.put(rows[s-1].id, s)
		}
	}
}

func (x *idIndex) put(id string, s int32) { x.putHashed(maphash.String(idSeed, id), s) }

func (x *idIndex) putHashed(h uint64, s int32) {
	mask := uint64(len(x.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		if x.slots[p] == 0 {
			x.slots[p] = s
			return
		}
	}
}

// first returns the position in rows of the first row of id, or -1, and
// id's hash (for add).
func (x *idIndex) first(rows []*row, id string) (int, uint64) {
	h := maphash.String(idSeed, id)
	if len(x.slots) == 0 {
		return -1, h
	}
	mask := uint64(len(x.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		s := x.slots[p]
		if s == 0 {
			return -1, h
		}
		if rows[s-1].id == id {
			return int(s - 1), h
		}
	}
}

// add indexes rows[i], whose ID (hash h, from first) no earlier row has.
func (x *idIndex) add(rows []*row, i int, h uint64) {
	x.n++
	if 2*x.n > len(x.slots) {
		x.rehash(rows, x.n)
	}
	x.putHashed(h, int32(i+1))
}

// byID returns the task rows of id in file order (nil when none). The
// slice must not be modified.
func (d *Doc) byID(id string) []*row {
	i, _ := d.ids.first(d.rows, id)
	if i < 0 {
		return nil
	}
	if rs, ok := d.ids.dups[id]; ok {
		return rs
	}
	return d.rows[i : i+1 : i+1]
}
