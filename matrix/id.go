package matrix

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// randRead is crypto/rand.Read; tests replace it to force collisions.
var randRead = rand.Read

const idAttempts = 3

// newID draws a random 6-hex-digit ID not used in d, trying idAttempts times.
func (d *Doc) newID() (string, error) {
	var b [3]byte
	for i := 0; i < idAttempts; i++ {
		if _, err := randRead(b[:]); err != nil {
			return "", fmt.Errorf("read random bytes for a task ID: %w", err)
		}
		id := hex.EncodeToString(b[:])
		if d.rowWithID(id) == nil {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w: %d random task IDs in a row collided with existing ones; try again", ErrRefused, idAttempts)
}
