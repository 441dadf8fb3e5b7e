package mcpserver

import (
	"bufio"
	"bytes"
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
func stdioTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	go filterMessages(in, pw, w)
	return &mcp.IOTransport{Reader: &pipeReader{PipeReader: pr, in: in}, Writer: w}
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
