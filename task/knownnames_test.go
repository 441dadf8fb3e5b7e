package task

import "testing"

// The cache in front of the set must never answer for another name: names
// of the same length, first and last letter share a slot.
func TestKnownNamesNeverConfusesNamesOfOneSlot(t *testing.T) {
	k := knownNames{set: map[string]bool{"coder": true, "cider": true}}
	for range 2 { // the second round answers from the cache
		for name, want := range map[string]bool{"coder": true, "cider": true, "cater": false, "c": false, "": false, "coders": false} {
			if got := k.has(name); got != want {
				t.Errorf("has(%q) = %v, want %v", name, got, want)
			}
		}
	}
}
