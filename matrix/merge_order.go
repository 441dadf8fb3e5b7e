package matrix

// The order of a merge's rows (and of a table's columns). Rows are matched
// by key, not by line: the result keeps the order of one side, the primary
// (ours, unless only theirs moved rows), drops what the other side deleted,
// and puts each row the other side has and the primary lacks right after
// the row that comes before it on that side. New rows of both sides after
// the same row come ours first, then theirs, each side in its own order.

// seqItem is one row (or column) of a side, in a group (a task table).
type seqItem struct {
	key string
	grp int
}

// seqNode is an item of the merged order: a linked list, so that inserting
// the other side's rows costs nothing per row of a large matrix.
type seqNode struct {
	item      seqItem
	next      *seqNode
	sentinel  bool // the start of a group
	primAdded bool // a row only the primary side has (new there)
}

// orderInputs are the sides of a merge of an order.
type orderInputs struct {
	groups    int
	prim, sec []seqItem
	// inBase and inSec tell whether base and the other side have a key;
	// primIndex is a key's index in prim (-1: none).
	inBase, inSec func(key string) bool
	primIndex     func(key string) int
	primOurs      bool
	// keepPrim decides a key of base and the primary that the other side
	// deleted; keepSec one of base and the other side that the primary
	// deleted. Both keep a row the keeping side changed (a conflict).
	keepPrim, keepSec func(key string) bool
}

// mergeOrder returns the merged order, as items with their group.
func mergeOrder(in orderInputs) []seqItem {
	groups := max(in.groups, 1)
	slab := make([]seqNode, 0, groups+len(in.prim)+len(in.sec)) // one allocation for every node
	node := func(n seqNode) *seqNode {
		slab = append(slab, n)
		return &slab[len(slab)-1]
	}
	sentinels := make([]*seqNode, groups)
	var tail *seqNode
	for g := range sentinels {
		sentinels[g] = node(seqNode{sentinel: true, item: seqItem{grp: g}})
		if tail != nil {
			tail.next = sentinels[g]
		}
		tail = sentinels[g]
	}
	placed := make([]*seqNode, len(in.prim)) // the node of each of prim's items, nil: dropped
	// The primary's rows, group by group: a group's rows go before the
	// next group's sentinel.
	cur, curGrp := sentinels[0], 0
	for i, it := range in.prim {
		if it.grp >= groups {
			continue
		}
		base, sec := in.inBase(it.key), in.inSec(it.key)
		if base && !sec && !in.keepPrim(it.key) {
			continue // deleted on the other side, unchanged here
		}
		if it.grp != curGrp {
			cur, curGrp = lastOf(sentinels[it.grp]), it.grp
		}
		n := node(seqNode{item: it, next: cur.next, primAdded: !base && !sec})
		cur.next = n
		cur = n
		placed[i] = n
	}
	var anchor *seqNode
	grp := -1
	for _, it := range in.sec {
		if it.grp >= groups {
			continue
		}
		if it.grp != grp {
			grp, anchor = it.grp, sentinels[it.grp]
		}
		if i := in.primIndex(it.key); i >= 0 {
			if n := placed[i]; n != nil && n.item.grp == it.grp {
				anchor = n
			}
			continue
		}
		if in.inBase(it.key) && !in.keepSec(it.key) {
			continue // deleted by the primary, unchanged here
		}
		at := anchor
		if in.primOurs {
			// Ours' new rows after the same row come first.
			for at.next != nil && !at.next.sentinel && at.next.primAdded {
				at = at.next
			}
		}
		n := node(seqNode{item: it, next: at.next})
		at.next = n
		anchor = n
	}
	out := make([]seqItem, 0, len(slab)-groups)
	for n := sentinels[0]; n != nil; n = n.next {
		if !n.sentinel {
			out = append(out, n.item)
		}
	}
	return out
}

// lastOf returns the last node of the group that starts at sentinel s.
func lastOf(s *seqNode) *seqNode {
	n := s
	for n.next != nil && !n.next.sentinel {
		n = n.next
	}
	return n
}

// commonOrder lists the keys of items that all three sides have, in the
// order of items, with their groups.
func commonOrder(items []seqItem, inAll func(string) bool) []seqItem {
	out := make([]seqItem, 0, len(items))
	for _, it := range items {
		if inAll(it.key) {
			out = append(out, it)
		}
	}
	return out
}

func sameOrder(a, b []seqItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// theirsLeads reports whether theirs is the primary side of an order: only
// theirs moved items that all three sides have (ours keeps base's order).
func theirsLeads(base, ours, theirs []seqItem, inAll func(string) bool) bool {
	b := commonOrder(base, inAll)
	return sameOrder(b, commonOrder(ours, inAll)) && !sameOrder(b, commonOrder(theirs, inAll))
}
