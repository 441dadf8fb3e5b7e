package poll

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			time.Sleep(time.Millisecond)
			n.Add(1)
		}
	}()
	if !Until(Timeout, func() bool { return n.Load() == 3 }) {
		t.Fatal("a condition that becomes true was not seen")
	}
	if Until(10*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds was reported true")
	}
}

// A condition that never holds fails the test with the message.
func TestEventuallyFails(t *testing.T) {
	ft := &fakeT{}
	done := make(chan struct{})
	go func() { // Fatalf ends the goroutine, as it ends a test
		defer close(done)
		EventuallyWithin(ft, 5*time.Millisecond, func() bool { return false }, "the row of %s", "a1")
	}()
	<-done
	if want := "after 5ms: the row of a1"; ft.msg != want {
		t.Fatalf("message %q, want %q", ft.msg, want)
	}
}

// EventuallyNil fails with the last thing that was wrong.
func TestEventuallyNilSaysWhatWasWrong(t *testing.T) {
	n := 0
	EventuallyNil(t, func() error {
		if n++; n < 3 {
			return fmt.Errorf("try %d", n)
		}
		return nil
	})
	if n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
}

type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
