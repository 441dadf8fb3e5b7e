package events

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestSubscribersGetWhatTheirFilterMatchesInOrder(t *testing.T) {
	b := New()
	all := b.Subscribe(Filter{}, 0)
	defer all.Close()
	runs := b.Subscribe(Filter{Kinds: []Kind{RunEvent, RunEnded}, RunID: "papi-2"}, 0)
	defer runs.Close()
	task := b.Subscribe(Filter{Root: "/w", TaskID: "a1"}, 0)
	defer task.Close()

	b.Publish(Event{Kind: TaskChanged, Root: "/w", TaskID: "a1", Actor: "@papi", Before: "TODO", After: "IN_PROGRESS"})
	b.Publish(Event{Kind: TaskChanged, Root: "/other", TaskID: "a1"})
	b.Publish(Event{Kind: RunEvent, RunID: "papi-2", Run: &RunItem{Seq: 1, Kind: "tool_use", Tool: "run_shell_command"}})
	b.Publish(Event{Kind: RunEvent, RunID: "sony-1"})
	b.Publish(Event{Kind: RunEnded, RunID: "papi-2", Text: "completed"})

	ctx := context.Background()
	take := func(s *Subscription, n int) []Event {
		var out []Event
		for range n {
			e, ok := s.Next(ctx)
			if !ok {
				t.Fatal("subscription ended")
			}
			out = append(out, e)
		}
		if e, ok := s.TryNext(); ok {
			t.Fatalf("one event too many: %+v", e)
		}
		return out
	}
	got := take(all, 5)
	for i, e := range got {
		if e.Seq != uint64(i+1) || e.Time.IsZero() {
			t.Errorf("event %d: seq %d time %v", i, e.Seq, e.Time)
		}
	}
	if r := take(runs, 2); r[0].Run.Tool != "run_shell_command" || r[1].Kind != RunEnded {
		t.Errorf("run subscriber got %+v", r)
	}
	if tk := take(task, 1); tk[0].Actor != "@papi" || tk[0].After != "IN_PROGRESS" {
		t.Errorf("task subscriber got %+v", tk)
	}
}

// A subscriber that does not read loses the newest events, never blocks
// the publisher, and is told how many it lost after what it kept.
func TestASlowSubscriberLagsAndNeverBlocksThePublisher(t *testing.T) {
	b := New()
	slow := b.Subscribe(Filter{}, 4)
	defer slow.Close()
	fast := b.Subscribe(Filter{}, 1000)
	defer fast.Close()

	done := make(chan struct{})
	go func() {
		for i := range 100 {
			b.Publish(Event{Kind: RunEvent, Text: fmt.Sprint(i)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	ctx := context.Background()
	for i := range 4 {
		e, _ := slow.Next(ctx)
		if e.Kind != RunEvent || e.Text != fmt.Sprint(i) {
			t.Fatalf("kept event %d = %+v", i, e)
		}
	}
	e, _ := slow.Next(ctx)
	if e.Kind != Lagged || e.Dropped != 96 {
		t.Fatalf("after the kept events: %+v, want lagged with 96 dropped", e)
	}
	// Caught up: new events come again, and the count starts over.
	b.Publish(Event{Kind: AgentCreated, Agent: "papi"})
	if e, _ := slow.Next(ctx); e.Kind != AgentCreated {
		t.Fatalf("after catching up: %+v", e)
	}
	for i := range 100 {
		e, _ := fast.Next(ctx)
		if e.Text != fmt.Sprint(i) {
			t.Fatalf("the fast subscriber lost event %d: %+v", i, e)
		}
	}
}

func TestCloseEndsNextAndStopsDelivery(t *testing.T) {
	b := New()
	s := b.Subscribe(Filter{}, 0)
	got := make(chan bool)
	go func() {
		_, ok := s.Next(context.Background())
		got <- ok
	}()
	time.Sleep(10 * time.Millisecond)
	s.Close()
	if ok := <-got; ok {
		t.Fatal("Next after Close returned an event")
	}
	if n := b.Subscribers(); n != 0 {
		t.Fatalf("%d subscribers after Close", n)
	}
	b.Publish(Event{Kind: TaskChanged}) // no one: nothing happens
	ctx, cancel := context.WithCancel(context.Background())
	s2 := b.Subscribe(Filter{}, 0)
	defer s2.Close()
	cancel()
	if _, ok := s2.Next(ctx); ok {
		t.Fatal("Next with a canceled context returned an event")
	}
}

func TestConcurrentPublishersAndSubscribers(t *testing.T) {
	b := New()
	const publishers, each = 8, 500
	var subs []*Subscription
	for range 4 {
		subs = append(subs, b.Subscribe(Filter{}, publishers*each))
	}
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b.Publish(Event{Kind: RunEvent, Agent: fmt.Sprint(p), Text: fmt.Sprint(i)})
			}
		}()
	}
	// Subscribing and closing while publishing is safe.
	for range 50 {
		b.Subscribe(Filter{Kinds: []Kind{AgentCreated}}, 1).Close()
	}
	wg.Wait()
	for _, s := range subs {
		last := map[string]int{}
		var prev uint64
		for range publishers * each {
			e, ok := s.TryNext()
			if !ok {
				t.Fatal("an event is missing")
			}
			if e.Seq <= prev {
				t.Fatalf("seq %d after %d", e.Seq, prev)
			}
			prev = e.Seq
			var i int
			fmt.Sscan(e.Text, &i)
			if n, seen := last[e.Agent]; seen && i != n+1 {
				t.Fatalf("publisher %s: %d after %d", e.Agent, i, n)
			}
			last[e.Agent] = i
		}
		s.Close()
	}
}

// BenchmarkPublishNoSubscriber is what every task write pays when nobody
// listens.
func BenchmarkPublishNoSubscriber(b *testing.B) {
	bus := New()
	for b.Loop() {
		bus.Publish(Event{Kind: TaskChanged, TaskID: "a1"})
	}
}

func BenchmarkPublishTenFilteredSubscribers(b *testing.B) {
	bus := New()
	for i := range 10 {
		s := bus.Subscribe(Filter{RunID: fmt.Sprint(i)}, 0)
		defer s.Close()
	}
	for b.Loop() {
		bus.Publish(Event{Kind: RunEvent, RunID: "none"})
	}
}
