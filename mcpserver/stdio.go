package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioMessageBytes bounds one message (one line) on stdio, as the HTTP
// transport bounds a request body: a longer line is answered with an error
// and skipped.
const MaxStdioMessageBytes = 4 << 20

// JSON-RPC 2.0 error codes for messages the server cannot take.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// stdioTransport serves newline-delimited JSON-RPC on in and out, like the
// SDK's IOTransport, behind a filter: the SDK ends the session on the first
// line it cannot decode (`{bad json`, `42`, `null`, `[]`, a message without
// "jsonrpc", an object as id), so the filter answers such a line itself with
// the JSON-RPC error (id null, or the message's id when it has a usable
// one), drops it, and the session goes on. Lines over MaxStdioMessageBytes
// are answered and dropped the same way. Writes of the filter and of the
// SDK go through one lock, a whole line at a time.
//
// The end of input reaches the SDK only once every request read before it
// has been answered (answerAll): `printf '<initialize>' | agentinfra serve`
// gets its answer.
func stdioTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	go filterMessages(in, pw, w)
	return answerAllTransport{&mcp.IOTransport{Reader: &pipeReader{PipeReader: pr, in: in}, Writer: w}}
}

// answerAllTransport connects answerAll connections.
type answerAllTransport struct{ mcp.Transport }

func (t answerAllTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answerAll{Connection: c, open: map[jsonrpc.ID]bool{}, asked: map[jsonrpc.ID]bool{}, wake: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// answerAll holds the end of the client's input back from the SDK until
// the requests read before it are answered. The SDK ends a connection as
// soon as its reader ends, and from then on writes nothing, not even the
// answer a handler was about to give: a client that sends its requests and
// closes stdin (a pipe, a script, a CLI at exit) lost the answers of the
// handlers still at work. It stops waiting when the server sent the client a
// request of its own (the client, gone, can never answer it, and the
// handler that waits for it would never finish), when the context of the
// read ends (the server is stopped) or when the connection is closed.
type answerAll struct {
	mcp.Connection
	mu    sync.Mutex
	open  map[jsonrpc.ID]bool // the client's requests not answered yet
	asked map[jsonrpc.ID]bool // the server's requests the client has not answered
	wake  chan struct{}       // a change of open or asked

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *answerAll) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		if errors.Is(err, io.EOF) {
			c.drain(ctx)
		}
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			c.open[m.ID] = true
		} else if m.Method == "notifications/cancelled" {
			// A cancelled request may go unanswered (MCP says it should).
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					delete(c.open, id)
				}
			}
		}
	case *jsonrpc.Response:
		delete(c.asked, m.ID)
	}
	c.notify()
	return msg, nil
}

func (c *answerAll) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		delete(c.open, m.ID) // written or not: it will not be written again
	case *jsonrpc.Request:
		if m.IsCall() && err == nil {
			c.asked[m.ID] = true
		}
	}
	c.notify()
	return err
}

func (c *answerAll) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// notify wakes drain; called with mu held.
func (c *answerAll) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// drain waits until every request read has been answered, or nothing more
// can be (see answerAll).
func (c *answerAll) drain(ctx context.Context) {
	for {
		c.mu.Lock()
		done := len(c.open) == 0 || len(c.asked) > 0
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

// filterMessages copies the well-formed lines of in to pw and answers the
// others on w, until in ends (then the SDK reads EOF) or the SDK stops
// reading.
func filterMessages(in io.Reader, pw *io.PipeWriter, w *lineWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	var f filter
	for {
		line, tooLong, err := readLine(r, MaxStdioMessageBytes)
		if tooLong {
			w.writeError(nil, codeInvalidRequest, fmt.Sprintf("message over %d bytes; nothing was done", MaxStdioMessageBytes))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if id, code, why := f.check(msg); why != "" {
				w.writeError(id, code, why)
			} else if _, werr := pw.Write(append(msg, '\n')); werr != nil {
				return // the SDK closed the session
			}
		}
		if err != nil {
			pw.CloseWithError(err) // io.EOF: the client hung up
			return
		}
	}
}

// readLine reads up to and including '\n'. A line longer than max is read
// to its end and dropped (tooLong), so that the next line starts clean.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// filter remembers the protocol version the client asked for: the SDK ends
// the session on a batch from 2025-06-18 on (batches were dropped from MCP).
type filter struct{ version string }

// batchesFrom is the first protocol version without JSON-RPC batches.
const batchesFrom = "2025-06-18"

// check decides whether the SDK can take msg. When it cannot, why says so,
// code is the JSON-RPC error code and id the message's id if it has a
// usable one.
func (f *filter) check(msg []byte) (id any, code int, why string) {
	if !json.Valid(msg) {
		return nil, codeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line"
	}
	if msg[0] == '[' {
		if f.version == "" || f.version >= batchesFrom {
			return nil, codeInvalidRequest, "invalid request: JSON-RPC batches are not part of MCP from " + batchesFrom + " on; send one message per line"
		}
		var batch []json.RawMessage
		if json.Unmarshal(msg, &batch) != nil || len(batch) == 0 {
			return nil, codeInvalidRequest, "invalid request: an empty batch"
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return nil, codeInvalidRequest, "invalid request in a batch: " + err.Error()
			}
		}
		return nil, 0, ""
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(msg, &probe) == nil {
			switch probe.ID.(type) {
			case string, float64:
				id = probe.ID
			}
		}
		return id, codeInvalidRequest, "invalid request: " + err.Error() + ` (a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0", a "method" and, for a request, a string or number "id")`
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			f.version = p.ProtocolVersion
		}
	}
	return nil, 0, ""
}

// lineWriter serializes whole-line writes to the client.
type lineWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) Close() error { return l.w.Close() }

func (l *lineWriter) writeError(id any, code int, msg string) {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err == nil {
		_, _ = l.Write(append(b, '\n'))
	}
}

// pipeReader closes the client's stream too when the SDK closes the session.
type pipeReader struct {
	*io.PipeReader
	in io.Closer
}

func (p *pipeReader) Close() error {
	_ = p.in.Close()
	return p.PipeReader.Close()
}
