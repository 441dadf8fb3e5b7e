package runner

import (
	"sync"
	"time"
)

// parsing feeds one run's stdout lines to its parser and the parser's
// events to onEvent, one call at a time. A Flusher's held text is flushed
// FlushAfter after the last line (from a timer) and at the end of the
// output.
type parsing struct {
	mu      sync.Mutex
	parser  Parser
	flusher Flusher
	onEvent func(Event)
	quiet   *time.Timer
	ended   bool
	// panicked is what a Flush from the timer panicked with: end raises
	// it on the reader's goroutine, whose recover records it.
	panicked any
}

func newParsing(parser Parser, onEvent func(Event)) *parsing {
	p := &parsing{parser: parser, onEvent: onEvent}
	if f, ok := parser.(Flusher); ok {
		p.flusher = f
		p.quiet = time.AfterFunc(time.Hour, p.flushQuiet)
		p.quiet.Stop()
	}
	return p
}

func (p *parsing) emit(evs []Event) {
	if p.onEvent == nil {
		return
	}
	for _, ev := range evs {
		ev.Text = clip(ev.Text, MaxEventText)
		p.onEvent(ev)
	}
}

func (p *parsing) line(line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.emit(p.parser.Line(line))
	if p.quiet != nil {
		p.quiet.Reset(FlushAfter)
	}
}

func (p *parsing) flushQuiet() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			p.panicked = r
		}
	}()
	p.emit(p.flusher.Flush())
}

// end flushes what the parser holds: the output is over (the CLI exited
// or was stopped), and no event comes after.
func (p *parsing) end() {
	if p.quiet != nil {
		p.quiet.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	if p.panicked != nil {
		panic(p.panicked)
	}
	if p.flusher != nil {
		p.emit(p.flusher.Flush())
	}
}
