package matrix

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// randRead is crypto/rand.Read; tests replace it to force collisions.
var randRead = rand.Read

const idAttempts = 3

// Layout of timestamp IDs: YYMMDDHHMMSS.
const timestampIDLayout = "060102150405"

// NewID returns an ID no row of d uses (nor taken, when given: task folders,
// say) in the file's own convention, decided by the IDs most rows have:
//
//   - 12-digit timestamps YYMMDDHHMMSS: now in that form, or the next free
//     second after it;
//   - a prefix and a number (TASK-12, T-7, ISSUE_003): the same prefix and the
//     highest number plus one, zero-padded as the file pads;
//   - otherwise 6 random lowercase hex characters (random reads the bytes;
//     nil means crypto/rand), drawn again on a collision.
//
// Callers hold the store's lock, so the ID is still free when the row is written.
func (d *Doc) NewID(now time.Time, taken func(string) bool, random func([]byte) (int, error)) (string, error) {
	used := func(id string) bool { return d.rowWithID(id) != nil || taken != nil && taken(id) }
	ids := d.allIDs()
	if isMajority(len(ids), countIf(ids, isTimestampID)) {
		t := now
		for i := 0; i < 1_000_000; i++ {
			if id := t.Format(timestampIDLayout); !used(id) {
				return id, nil
			}
			t = t.Add(time.Second)
		}
		return "", refusedf("no free timestamp ID after %s", now.Format(timestampIDLayout))
	}
	if prefix, next, width, ok := numberedConvention(ids); ok {
		for ; ; next++ {
			if id := prefix + fmt.Sprintf("%0*d", width, next); !used(id) {
				if !ValidID(id) {
					return "", refusedf("the next ID after %s%d would be longer than %d characters", prefix, next-1, MaxIDLen)
				}
				return id, nil
			}
		}
	}
	if random == nil {
		random = randRead
	}
	var b [3]byte
	for i := 0; i < idAttempts; i++ {
		if _, err := random(b[:]); err != nil {
			return "", fmt.Errorf("read random bytes for a task ID: %w", err)
		}
		id := hex.EncodeToString(b[:])
		if !used(id) {
			return id, nil
		}
	}
	return "", refusedf("%d random task IDs in a row collided with existing ones; try again", idAttempts)
}

// allIDs lists the IDs of every row, unreadable ones included.
func (d *Doc) allIDs() []string {
	out := make([]string, 0, len(d.rows)+len(d.unread))
	for _, r := range d.rows {
		if r.id != "" {
			out = append(out, r.id)
		}
	}
	for id := range d.unread {
		out = append(out, id)
	}
	return out
}

func isMajority(total, n int) bool { return total > 0 && 2*n > total }

func countIf(ids []string, f func(string) bool) int {
	n := 0
	for _, id := range ids {
		if f(id) {
			n++
		}
	}
	return n
}

// isTimestampID reports whether id is YYMMDDHHMMSS of a real date and time.
func isTimestampID(id string) bool {
	if len(id) != 12 {
		return false
	}
	_, err := time.Parse(timestampIDLayout, id)
	return err == nil
}

// splitNumbered splits "TASK-12" into "TASK-" and "12": letters, an optional
// '-' or '_', then digits. IDs like bd-a1b2 are not numbered, nor are IDs
// of 6 lowercase hex characters (agentinfra's own, which bead01 could be).
func splitNumbered(id string) (prefix, num string, ok bool) {
	if isHexID(id) {
		return "", "", false
	}
	i := 0
	for i < len(id) && (id[i] >= 'a' && id[i] <= 'z' || id[i] >= 'A' && id[i] <= 'Z') {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	if i < len(id) && (id[i] == '-' || id[i] == '_') {
		i++
	}
	if i == len(id) || strings.Trim(id[i:], "0123456789") != "" {
		return "", "", false
	}
	return id[:i], id[i:], true
}

// numberedConvention finds the prefix most IDs share as prefix + number and
// returns it with the next number and the zero-padded width ("003" pads to 3).
func numberedConvention(ids []string) (prefix string, next, width int, ok bool) {
	count := map[string]int{}
	best := ""
	for _, id := range ids {
		if p, _, ok := splitNumbered(id); ok {
			count[p]++
			if count[p] > count[best] || count[p] == count[best] && p < best {
				best = p
			}
		}
	}
	if best == "" || !isMajority(len(ids), count[best]) {
		return "", 0, 0, false
	}
	maxN := 0
	for _, id := range ids {
		p, num, ok := splitNumbered(id)
		if !ok || p != best {
			continue
		}
		if len(num) > 1 && num[0] == '0' && len(num) > width {
			width = len(num)
		}
		if n, err := strconv.Atoi(num); err == nil && n > maxN {
			maxN = n
		}
	}
	return best, maxN + 1, width, true
}

// isHexID reports whether id has the shape of agentinfra's random IDs.
func isHexID(id string) bool {
	if len(id) != 6 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// NumberedIDs reports whether NewID numbers d's new IDs (a prefix and the
// next number, TASK-12): IDs that two branches pick alike, unlike a
// timestamp or random hex, so a caller looks at the other branches' IDs.
func (d *Doc) NumberedIDs() bool {
	ids := d.allIDs()
	if isMajority(len(ids), countIf(ids, isTimestampID)) {
		return false
	}
	_, _, _, ok := numberedConvention(ids)
	return ok
}
