package runner

import (
	"fmt"
	"sync"
)

// headTail keeps the first head and the last tail bytes written to it, so a
// child that prints gigabytes costs a bounded amount of memory while the start
// (usually the command's own banner) and the end (usually the error) survive.
type headTail struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // ring buffer of cap tailMax
	start int    // ring start once full
	hmax  int
	tmax  int
	total int64
}

func newHeadTail(head, tail int) *headTail {
	return &headTail{hmax: head, tmax: tail}
}

func (b *headTail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.hmax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if b.tmax == 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= b.tmax {
		b.tail = append(b.tail[:0], p[len(p)-b.tmax:]...)
		b.start = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(b.tail) < b.tmax {
			k := min(b.tmax-len(b.tail), len(p))
			b.tail = append(b.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(b.tail[b.start:], p)
		p = p[k:]
		b.start = (b.start + k) % b.tmax
	}
	return n, nil
}

// Total is the number of bytes written, kept or not.
func (b *headTail) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Bytes returns head + a marker for what was dropped + tail.
func (b *headTail) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]byte(nil), b.head...)
	tail := b.ordered()
	dropped := b.total - int64(len(b.head)) - int64(len(tail))
	if dropped > 0 {
		out = append(out, fmt.Sprintf("\n…[%d bytes omitted]…\n", dropped)...)
	}
	return append(out, tail...)
}

// Tail returns at most n of the last bytes written.
func (b *headTail) Tail(n int) []byte {
	all := b.Bytes()
	if len(all) > n {
		return all[len(all)-n:]
	}
	return all
}

func (b *headTail) ordered() []byte {
	if len(b.tail) < b.tmax || b.start == 0 {
		return append([]byte(nil), b.tail...)
	}
	out := make([]byte, 0, len(b.tail))
	out = append(out, b.tail[b.start:]...)
	return append(out, b.tail[:b.start]...)
}
