// Package sse reads and writes server-sent events (the WHATWG event stream
// format): the AgentAPI's stream behind Coder's app proxy, and the event
// stream of an agentinfra host (supervision/host), one parser for both.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Event is one event of a stream.
type Event struct {
	// ID is the event's id field ("" when it has none): a client that
	// reconnects sends the last one in Last-Event-ID.
	ID string
	// Type is the event field, "message" when the event names none.
	Type string
	// Data is the event's data lines joined by "\n".
	Data []byte
}

// Read parses events from r and calls emit with each, until emit says stop
// (Read returns nil) or fails (its error). A line longer than maxLine is
// bufio.ErrTooLong; a stream that ends is io.ErrUnexpectedEOF. Comments
// (keep-alives) and fields the format does not know are skipped.
func Read(r io.Reader, maxLine int, emit func(Event) (bool, error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var ev Event
	hasData := false
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(line) == 0 { // the event ends
			if hasData {
				if ev.Type == "" {
					ev.Type = "message"
				}
				if more, err := emit(ev); err != nil || !more {
					return err
				}
			}
			ev, hasData = Event{Data: ev.Data[:0]}, false
			continue
		}
		if line[0] == ':' { // a comment (keep-alive)
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Type = string(value)
		case "id":
			ev.ID = string(value)
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data, hasData = append(ev.Data, value...), true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// Write writes one event (id may be ""); data's lines become data fields.
func Write(w io.Writer, id, typ string, data []byte) error {
	var b strings.Builder
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	if typ != "" {
		fmt.Fprintf(&b, "event: %s\n", typ)
	}
	for _, l := range strings.Split(string(data), "\n") {
		fmt.Fprintf(&b, "data: %s\n", l)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
