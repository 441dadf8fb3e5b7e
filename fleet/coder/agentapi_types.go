package coder

import "time"

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
