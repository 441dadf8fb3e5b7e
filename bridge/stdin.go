package bridge

import (
	"encoding/json"
	"io"
	"sync"
)

// Stdin is a CLI's standard input as a bridge writes it: one JSON value a
// line (claude's stream-json, codex's JSON-RPC), from any goroutine, until
// Close (the conversation's end: the CLI finishes and exits).
type Stdin struct {
	mu sync.Mutex
	w  io.WriteCloser // nil once closed
}

// NewStdin writes to w.
func NewStdin(w io.WriteCloser) *Stdin { return &Stdin{w: w} }

// Write writes v as one JSON line; ErrClosed after Close.
func (s *Stdin) Write(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return ErrClosed
	}
	_, err = s.w.Write(append(line, '\n'))
	return err
}

// Close closes the CLI's standard input, once.
func (s *Stdin) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}
