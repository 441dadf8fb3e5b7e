package coder

import (
	"encoding/json"
	"time"
)

// The AgentAPI (github.com/coder/agentapi) answers these inside the
// workspace; Coder's app proxy passes them through unchanged.

// AgentAPI statuses: running while the agent works on a message.
const (
	AgentAPIStable  = "stable"
	AgentAPIRunning = "running"
)

// AgentAPI message types: a user message is typed in and submitted; a raw
// one is written to the terminal as is (an ESC interrupts the agent).
const (
	MessageUser = "user"
	MessageRaw  = "raw"
)

// Interrupt is the raw message that interrupts the agent's current work.
const Interrupt = "\u001b"

// AgentStatus is the answer of GET status.
type AgentStatus struct {
	Status    string `json:"status"`
	AgentType string `json:"agent_type,omitempty"`
}

// AgentMessage is the body of POST message.
type AgentMessage struct {
	Content string `json:"content"`
	Type    string `json:"type"`
}

// AgentMessageResponse is the answer of POST message.
type AgentMessageResponse struct {
	OK bool `json:"ok"`
}

// AgentConversationMessage is one message of GET messages.
type AgentConversationMessage struct {
	ID      int       `json:"id"`
	Content string    `json:"content"`
	Role    string    `json:"role"` // "user" or "agent"
	Time    time.Time `json:"time"`
}

// AgentMessages is the answer of GET messages.
type AgentMessages struct {
	Messages []AgentConversationMessage `json:"messages"`
}

// AgentAPI event types on GET events (server-sent events): on connect the
// app sends its current state (a message_update per message, then a
// status_change), then every change. While the agent works, the last
// message is sent again each time it grows: a message_update replaces the
// message with its ID.
const (
	EventMessageUpdate = "message_update"
	EventStatusChange  = "status_change"
)

// AgentMessageUpdate is the data of a message_update event.
type AgentMessageUpdate struct {
	ID      int       `json:"id"` // also the message's place in the conversation
	Role    string    `json:"role"`
	Message string    `json:"message"`
	Time    time.Time `json:"time"`
}

// AgentStatusChange is the data of a status_change event (older AgentAPIs
// send the status alone, without agent_type).
type AgentStatusChange struct {
	Status    string `json:"status"`
	AgentType string `json:"agent_type,omitempty"`
}

// AgentEvent is one event of the AgentAPI stream. Exactly one of
// MessageUpdate and StatusChange is set for the two known types; other
// types (newer AgentAPIs add some) carry only Type and Data.
type AgentEvent struct {
	Type          string
	Data          json.RawMessage
	MessageUpdate *AgentMessageUpdate
	StatusChange  *AgentStatusChange
}
