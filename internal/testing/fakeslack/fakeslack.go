// Package fakeslack is a Slack for tests, on 127.0.0.1, that speaks the
// real wire protocol to the real slack-go client (slack-go's own test
// server has no Socket Mode framing):
//
//   - the Web API methods agentinfra uses, at URL+"/api/METHOD", form or
//     JSON bodies, answering with Slack's response shapes: auth.test,
//     apps.connections.open (with the app-level token; it hands out the
//     WebSocket URL), chat.postMessage, chat.update, chat.postEphemeral,
//     files.getUploadURLExternal, the upload itself, and
//     files.completeUploadExternal;
//   - a Socket Mode WebSocket endpoint that says hello, pings, sends
//     envelopes (interactive block_actions, slash_commands, events_api
//     app_mention) with an envelope_id, records the acks, and can drop the
//     connection;
//   - rate limits: the next N calls of a method get HTTP 429 with a
//     Retry-After header, as Slack answers; errors (the next N calls of a
//     method answer ok:false with an error code); a slow Slack (Hold keeps
//     a method's calls waiting until released);
//   - Slack's limits: a section's or a context element's text over 3,000
//     characters is refused (invalid_blocks), a message's text over 40,000
//     (msg_too_long), both counted in UTF-16 code units;
//   - redeliveries (the same envelope again, or its payload in a new
//     envelope, as Slack retries), and when each envelope was sent and
//     acked;
//   - a slash command's response_url, where the answer is recorded.
//
// Every call and every version of every message is kept for assertions.
package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/gorilla/websocket"
)

// Identities of the fake workspace.
const (
	AppToken  = "xapp-1-A0FAKE-1-fake"
	BotToken  = "xoxb-fake-bot-token"
	BotUserID = "UAGENTINFRA"
	AppID     = "A0FAKE"
	TeamID    = "T0FAKE"
)

// Call is one Web API call as the server received it.
type Call struct {
	Method string
	Token  string
	Params map[string]string // form values, or the JSON body's top-level fields as JSON text
	At     time.Time
	Status int    // the HTTP status answered
	Error  string // the error answered with ok:false ("" when ok or 429)
}

// Message is a message in a channel, with every version chat.update gave it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	// Versions[0] is as posted; each chat.update appends one.
	Versions []Version
}

// Version is one text and Block Kit of a message.
type Version struct {
	Text   string
	Blocks json.RawMessage
}

// Last is the message as it reads now.
func (m Message) Last() Version { return m.Versions[len(m.Versions)-1] }

// Ephemeral is a message only one user sees.
type Ephemeral struct {
	Channel, User, Text, ThreadTS string
}

// Upload is a file uploaded through getUploadURLExternal + the upload +
// completeUploadExternal.
type Upload struct {
	ID, Name, Title, Channel, ThreadTS, Comment string
	Content                                     []byte
	Completed                                   bool
}

// Server is the fake Slack.
type Server struct {
	URL string // http://127.0.0.1:PORT

	t   testing.TB
	srv *httptest.Server
	// PingEvery is how often the socket pings the client (slack-go
	// reconnects when it gets no ping for 30 s).
	PingEvery time.Duration

	mu         sync.Mutex
	changed    chan struct{}
	calls      []Call
	messages   []*Message
	ephemerals []Ephemeral
	uploads    map[string]*Upload
	acks       map[string]json.RawMessage
	limits     map[string][]int    // method → Retry-After seconds of the next 429s
	failures   map[string][]string // method → the error codes of its next calls
	outside    map[string]bool     // channels the bot is not in
	holds      map[string]chan struct{}
	held       map[string]int // calls of a method that waited in a hold
	envelopes  map[string]*Envelope
	order      []string                     // envelope IDs, as sent
	responses  map[string][]json.RawMessage // envelope ID → what its response_url got
	replyTo    map[string]string            // response_url path → envelope ID
	conn       *websocket.Conn
	connWrite  sync.Mutex
	opens      int
	hellos     int
	seq        int
}

// New starts a fake Slack; it stops with the test.
func New(t testing.TB) *Server {
	s := &Server{t: t, PingEvery: time.Second, changed: make(chan struct{}), uploads: map[string]*Upload{}, acks: map[string]json.RawMessage{}, limits: map[string][]int{},
		failures: map[string][]string{}, outside: map[string]bool{}, holds: map[string]chan struct{}{}, held: map[string]int{}, envelopes: map[string]*Envelope{},
		responses: map[string][]json.RawMessage{}, replyTo: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/socket", s.socket)
	mux.HandleFunc("/upload/", s.upload)
	mux.HandleFunc("/response/", s.response)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(func() {
		s.Drop()
		s.srv.Close()
	})
	return s
}

// APIURL is what slack.OptionAPIURL takes.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// notify wakes every Wait (call with mu held).
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond holds (checked after every change) or ctx ends.
func (s *Server) Wait(ctx context.Context, what string, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("fakeslack: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// RateLimit makes the next len(retryAfter) calls of method answer 429
// with those Retry-After values (seconds).
func (s *Server) RateLimit(method string, retryAfter ...int) {
	s.mu.Lock()
	s.limits[method] = append(s.limits[method], retryAfter...)
	s.mu.Unlock()
}

// Fail makes the next len(codes) calls of method answer ok:false with
// those error codes (channel_not_found, internal_error…).
func (s *Server) Fail(method string, codes ...string) {
	s.mu.Lock()
	s.failures[method] = append(s.failures[method], codes...)
	s.mu.Unlock()
}

// Outside makes channel one the bot is not in (posting there answers
// not_in_channel), or is again (in: an /invite).
func (s *Server) Outside(channel string, out bool) {
	s.mu.Lock()
	s.outside[channel] = out
	s.mu.Unlock()
}

// Hold keeps every call of method waiting (a slow Slack) until release is
// called; the calls are then answered in order.
func (s *Server) Hold(method string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.holds[method] = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.holds[method] == ch {
				delete(s.holds, method)
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Holding waits until n calls of method have waited in a hold.
func (s *Server) Holding(ctx context.Context, method string, n int) error {
	return s.Wait(ctx, fmt.Sprintf("%d held calls of %s", n, method), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.held[method] >= n
	})
}

func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("1700000000.%06d", s.seq)
}

func params(r *http.Request) map[string]string {
	out := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]json.RawMessage
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &m)
		for k, v := range m {
			var str string
			if json.Unmarshal(v, &str) == nil {
				out[k] = str
			} else {
				out[k] = string(v)
			}
		}
		return out
	}
	r.ParseForm()
	for k, v := range r.Form {
		out[k] = v[0]
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

type obj = map[string]any

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	p := params(r)
	token := p["token"]
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}
	s.mu.Lock()
	if hold := s.holds[method]; hold != nil {
		s.held[method]++
		s.notify()
		s.mu.Unlock()
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	defer s.notify()
	call := Call{Method: method, Token: token, Params: p, At: time.Now(), Status: http.StatusOK}
	if l := s.limits[method]; len(l) > 0 {
		s.limits[method] = l[1:]
		call.Status = http.StatusTooManyRequests
		s.calls = append(s.calls, call)
		w.Header().Set("Retry-After", strconv.Itoa(l[0]))
		w.WriteHeader(http.StatusTooManyRequests)
		writeJSON(w, obj{"ok": false, "error": "ratelimited"})
		return
	}
	if f := s.failures[method]; len(f) > 0 {
		s.failures[method] = f[1:]
		call.Error = f[0]
		s.calls = append(s.calls, call)
		writeJSON(w, obj{"ok": false, "error": f[0]})
		return
	}
	if (method == "chat.postMessage" || method == "chat.update") && s.outside[p["channel"]] {
		call.Error = "not_in_channel"
		s.calls = append(s.calls, call)
		writeJSON(w, obj{"ok": false, "error": "not_in_channel"})
		return
	}
	if code := tooLong(method, p); code != "" {
		call.Error = code
		s.calls = append(s.calls, call)
		writeJSON(w, obj{"ok": false, "error": code})
		return
	}
	s.calls = append(s.calls, call)
	want := BotToken
	if method == "apps.connections.open" {
		want = AppToken
	}
	if token != want {
		writeJSON(w, obj{"ok": false, "error": "invalid_auth"})
		return
	}
	switch method {
	case "auth.test":
		writeJSON(w, obj{"ok": true, "url": "https://fake.slack.com/", "team": "Fake", "user": "agentinfra", "team_id": TeamID, "user_id": BotUserID, "bot_id": "B0FAKE"})
	case "apps.connections.open":
		s.opens++
		ws := "ws" + strings.TrimPrefix(s.URL, "http") + "/socket?ticket=" + strconv.Itoa(s.opens)
		writeJSON(w, obj{"ok": true, "url": ws})
	case "chat.postMessage":
		if p["channel"] == "" {
			writeJSON(w, obj{"ok": false, "error": "channel_not_found"})
			return
		}
		m := &Message{Channel: p["channel"], TS: s.nextTS(), ThreadTS: p["thread_ts"], Versions: []Version{{Text: p["text"], Blocks: blocksOf(p)}}}
		s.messages = append(s.messages, m)
		writeJSON(w, obj{"ok": true, "channel": m.Channel, "ts": m.TS, "message": obj{"type": "message", "text": p["text"], "user": BotUserID, "ts": m.TS, "bot_id": "B0FAKE"}})
	case "chat.update":
		m := s.find(p["channel"], p["ts"])
		if m == nil {
			writeJSON(w, obj{"ok": false, "error": "message_not_found"})
			return
		}
		m.Versions = append(m.Versions, Version{Text: p["text"], Blocks: blocksOf(p)})
		writeJSON(w, obj{"ok": true, "channel": m.Channel, "ts": m.TS, "text": p["text"]})
	case "chat.postEphemeral":
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: p["channel"], User: p["user"], Text: p["text"], ThreadTS: p["thread_ts"]})
		writeJSON(w, obj{"ok": true, "message_ts": s.nextTS()})
	case "files.getUploadURLExternal":
		id := fmt.Sprintf("F%04d", len(s.uploads)+1)
		s.uploads[id] = &Upload{ID: id, Name: p["filename"]}
		writeJSON(w, obj{"ok": true, "upload_url": s.URL + "/upload/" + id, "file_id": id})
	case "files.completeUploadExternal":
		var files []struct{ ID, Title string }
		json.Unmarshal([]byte(p["files"]), &files)
		var out []obj
		for _, f := range files {
			u := s.uploads[f.ID]
			if u == nil || u.Content == nil {
				writeJSON(w, obj{"ok": false, "error": "file_not_found"})
				return
			}
			u.Title, u.Channel, u.ThreadTS, u.Comment, u.Completed = f.Title, p["channel_id"], p["thread_ts"], p["initial_comment"], true
			out = append(out, obj{"id": u.ID, "title": u.Title})
		}
		writeJSON(w, obj{"ok": true, "files": out})
	default:
		writeJSON(w, obj{"ok": false, "error": "unknown_method"})
	}
}

// Slack's limits on a message, in UTF-16 code units.
const (
	MaxSectionText = 3000
	MaxMessageText = 40000
)

// Width is a text's length as the limits count it.
func Width(s string) int { return len(utf16.Encode([]rune(s))) }

// tooLong is the error Slack answers a message over its limits with ("":
// within them).
func tooLong(method string, p map[string]string) string {
	switch method {
	case "chat.postMessage", "chat.update", "chat.postEphemeral":
	default:
		return ""
	}
	if Width(p["text"]) > MaxMessageText {
		return "msg_too_long"
	}
	for _, t := range BlockTexts(blocksOf(p)) {
		if Width(t) > MaxSectionText {
			return "invalid_blocks"
		}
	}
	return ""
}

// BlockTexts lists the texts of a message's sections and context elements.
func BlockTexts(blocks json.RawMessage) []string {
	var bs []struct {
		Type     string `json:"type"`
		Text     *struct{ Text string }
		Elements []struct {
			Type string `json:"type"`
			Text json.RawMessage
		}
	}
	json.Unmarshal(blocks, &bs)
	var out []string
	for _, b := range bs {
		if b.Text != nil {
			out = append(out, b.Text.Text)
		}
		if b.Type != "context" {
			continue
		}
		for _, e := range b.Elements {
			var t string
			if json.Unmarshal(e.Text, &t) == nil {
				out = append(out, t)
			}
		}
	}
	return out
}

// blocksOf is a call's Block Kit (null when it has none).
func blocksOf(p map[string]string) json.RawMessage {
	if p["blocks"] == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(p["blocks"])
}

func (s *Server) find(channel, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

// upload receives a file's bytes (multipart, field "file") at the URL
// files.getUploadURLExternal handed out.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	f, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notify()
	u := s.uploads[id]
	if u == nil {
		http.Error(w, "no such upload", http.StatusNotFound)
		return
	}
	u.Content = b
	fmt.Fprintf(w, "OK - %d", len(b))
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socket is the Socket Mode endpoint: hello, then pings, envelopes out and
// acks in, until the connection ends.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.conn != nil {
		s.conn.Close()
	}
	s.conn = c
	s.mu.Unlock()
	hello := obj{"type": "hello", "num_connections": 1, "connection_info": obj{"app_id": AppID},
		"debug_info": obj{"host": "fakeslack", "build_number": 1, "approximate_connection_time": 18060}}
	if s.write(c, hello) != nil {
		return
	}
	s.mu.Lock()
	s.hellos++
	s.notify()
	s.mu.Unlock()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(s.PingEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.connWrite.Lock()
				err := c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
				s.connWrite.Unlock()
				if err != nil {
					return
				}
			}
		}
	}()
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) == nil && ack.EnvelopeID != "" {
			s.mu.Lock()
			if ack.Payload == nil {
				ack.Payload = json.RawMessage("null")
			}
			s.acks[ack.EnvelopeID] = ack.Payload
			if e := s.envelopes[ack.EnvelopeID]; e != nil && e.AckedAt.IsZero() {
				e.AckedAt = time.Now()
			}
			s.notify()
			s.mu.Unlock()
		}
	}
}

func (s *Server) write(c *websocket.Conn, v any) error {
	s.connWrite.Lock()
	defer s.connWrite.Unlock()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.WriteJSON(v)
}

// Connected waits for the client's n-th hello (1 = the first connection).
func (s *Server) Connected(ctx context.Context, n int) error {
	return s.Wait(ctx, fmt.Sprintf("connection %d", n), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.hellos >= n && s.conn != nil
	})
}

// Drop ends the current Socket Mode connection abruptly (no close frame),
// as a network failure does.
func (s *Server) Drop() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.NetConn().Close()
	}
}

// Hellos counts the Socket Mode connections that got their hello.
func (s *Server) Hellos() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hellos
}

// Opens counts the apps.connections.open calls that were answered.
func (s *Server) Opens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

// Envelope is one envelope sent over the socket, and its ack.
type Envelope struct {
	ID, Kind string
	Payload  any
	Retry    int // retry_attempt
	SentAt   time.Time
	// AckedAt is when its ack arrived (zero: not yet).
	AckedAt time.Time
}

// AckDelay is how long the client took to ack (false: not acked yet).
func (e Envelope) AckDelay() (time.Duration, bool) {
	if e.AckedAt.IsZero() {
		return 0, false
	}
	return e.AckedAt.Sub(e.SentAt), true
}

// Send sends an envelope of type kind ("interactive", "slash_commands",
// "events_api") carrying payload and returns its envelope_id.
func (s *Server) Send(kind string, payload any) (string, error) {
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("env-%d-%d", time.Now().UnixNano(), s.seq)
	s.mu.Unlock()
	return id, s.send(&Envelope{ID: id, Kind: kind, Payload: payload})
}

func (s *Server) send(e *Envelope) error {
	s.mu.Lock()
	c := s.conn
	e.SentAt, e.AckedAt = time.Now(), time.Time{}
	if _, ok := s.envelopes[e.ID]; !ok {
		s.order = append(s.order, e.ID)
	}
	s.envelopes[e.ID] = e
	delete(s.acks, e.ID)
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("fakeslack: no Socket Mode connection")
	}
	reason := ""
	if e.Retry > 0 {
		reason = "timeout"
	}
	return s.write(c, obj{"envelope_id": e.ID, "type": e.Kind, "payload": e.Payload, "accepts_response_payload": e.Kind != "events_api", "retry_attempt": e.Retry, "retry_reason": reason})
}

// Redeliver sends envelope id's payload again, as Slack does when it did
// not see an ack: in the same envelope (sameEnvelope), or in a new one
// (an Events API retry keeps the event_id, a click its trigger_id). It
// returns the envelope_id sent.
func (s *Server) Redeliver(id string, sameEnvelope bool) (string, error) {
	s.mu.Lock()
	e, ok := s.envelopes[id]
	var again Envelope
	if ok {
		again = Envelope{ID: e.ID, Kind: e.Kind, Payload: e.Payload, Retry: e.Retry + 1}
		if !sameEnvelope {
			s.seq++
			again.ID = fmt.Sprintf("env-%d-%d", time.Now().UnixNano(), s.seq)
		}
	}
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("fakeslack: no envelope %s", id)
	}
	return again.ID, s.send(&again)
}

// Envelopes lists the envelopes sent, in order (a redelivery in the same
// envelope is its latest sending).
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, *s.envelopes[id])
	}
	return out
}

// EnvelopeOf is envelope id as sent and acked.
func (s *Server) EnvelopeOf(id string) (Envelope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.envelopes[id]
	if !ok {
		return Envelope{}, false
	}
	return *e, true
}

// Acked waits for the ack of an envelope and returns its payload.
func (s *Server) Acked(ctx context.Context, envelopeID string) (json.RawMessage, error) {
	var out json.RawMessage
	err := s.Wait(ctx, "the ack of "+envelopeID, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		p, ok := s.acks[envelopeID]
		out = p
		return ok
	})
	return out, err
}

// User is a person of the fake workspace.
type User struct{ ID, Name string }

// Click sends the block_actions envelope of user clicking the button
// actionID (with value) of the message channel/ts, as Slack sends it.
func (s *Server) Click(u User, channel, ts, actionID, value string) (string, error) {
	s.mu.Lock()
	m := s.find(channel, ts)
	var msg obj
	var threadTS string
	if m != nil {
		threadTS = m.ThreadTS
		msg = obj{"type": "message", "user": BotUserID, "ts": m.TS, "text": m.Last().Text, "blocks": m.Last().Blocks}
		if m.ThreadTS != "" {
			msg["thread_ts"] = m.ThreadTS
		}
	}
	blockID := ""
	if m != nil {
		blockID = blockOf(m.Last().Blocks, actionID)
	}
	s.seq++
	actionTS := s.nextTS()
	s.mu.Unlock()
	container := obj{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false}
	if threadTS != "" {
		container["thread_ts"] = threadTS
	}
	return s.Send("interactive", obj{
		"type": "block_actions", "user": obj{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": TeamID},
		"api_app_id": AppID, "token": "verification-token", "container": container, "trigger_id": "trigger-" + actionTS,
		"team": obj{"id": TeamID, "domain": "fake"}, "channel": obj{"id": channel, "name": "agents"},
		"message": msg, "response_url": s.URL + "/response/" + actionTS,
		"actions": []obj{{"action_id": actionID, "block_id": blockID, "text": obj{"type": "plain_text", "text": actionID}, "value": value, "type": "button", "action_ts": actionTS}},
	})
}

// blockOf is the block_id of the block that holds the button actionID.
func blockOf(blocks json.RawMessage, actionID string) string {
	var bs []struct {
		BlockID  string `json:"block_id"`
		Elements []struct {
			ActionID string `json:"action_id"`
		}
	}
	json.Unmarshal(blocks, &bs)
	for _, b := range bs {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return b.BlockID
			}
		}
	}
	return ""
}

// Mention sends the events_api envelope of user writing text (which
// should hold <@BotUserID>) in the thread channel/threadTS.
func (s *Server) Mention(u User, channel, threadTS, text string) (string, error) {
	s.mu.Lock()
	ts := s.nextTS()
	s.mu.Unlock()
	ev := obj{"type": "app_mention", "user": u.ID, "text": text, "ts": ts, "channel": channel, "event_ts": ts}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return s.Send("events_api", obj{"token": "verification-token", "team_id": TeamID, "api_app_id": AppID, "event": ev,
		"type": "event_callback", "event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
		"authorizations": []obj{{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}}})
}

// Slash sends the slash_commands envelope of user typing /command text.
// The answer goes to its response_url: Responded returns it.
func (s *Server) Slash(u User, channel, command, text string) (string, error) {
	s.mu.Lock()
	ts := s.nextTS()
	s.seq++
	id := fmt.Sprintf("env-%d-%d", time.Now().UnixNano(), s.seq)
	s.replyTo["/response/"+ts] = id
	s.mu.Unlock()
	return id, s.send(&Envelope{ID: id, Kind: "slash_commands", Payload: obj{"token": "verification-token", "team_id": TeamID, "team_domain": "fake", "channel_id": channel,
		"channel_name": "agents", "user_id": u.ID, "user_name": u.Name, "command": command, "text": text, "api_app_id": AppID,
		"response_url": s.URL + "/response/" + ts, "trigger_id": "trigger-" + ts}})
}

// response receives what is posted to a response_url.
func (s *Server) response(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notify()
	id, ok := s.replyTo[r.URL.Path]
	if !ok {
		http.Error(w, "no such response_url", http.StatusNotFound)
		return
	}
	s.responses[id] = append(s.responses[id], json.RawMessage(body))
	w.Write([]byte("ok"))
}

// Responded waits for the first answer to the slash command of envelope id
// and returns it (response_type, text…).
func (s *Server) Responded(ctx context.Context, id string) (json.RawMessage, error) {
	var out json.RawMessage
	err := s.Wait(ctx, "the response to "+id, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if rs := s.responses[id]; len(rs) > 0 {
			out = rs[0]
			return true
		}
		return false
	})
	return out, err
}

// Responses lists the answers posted to the response_url of envelope id.
func (s *Server) Responses(id string) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.responses[id]...)
}

// Calls lists the calls of method ("" = all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages lists the messages posted (copies), oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = *m
		out[i].Versions = append([]Version(nil), m.Versions...)
	}
	return out
}

// Ephemerals lists the ephemeral messages posted.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// Uploads lists the files uploaded.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Upload
	for i := 1; i <= len(s.uploads); i++ {
		if u := s.uploads[fmt.Sprintf("F%04d", i)]; u != nil {
			out = append(out, *u)
		}
	}
	return out
}

// Form is url.Values of a call's params, for golden files.
func (c Call) Form() url.Values {
	v := url.Values{}
	for k, x := range c.Params {
		v.Set(k, x)
	}
	return v
}
