package runner

import "context"

// Conversation is a live agent CLI spoken to over its standard input and
// output (a supervised run's bridge, package bridge): messages go in while
// it runs, each turn's result comes out, and it ends when told.
type Conversation interface {
	// Send delivers text as the next user message.
	Send(ctx context.Context, text string) error
	// Interrupt stops the current turn.
	Interrupt(ctx context.Context) error
	// TurnEnded receives the result event of each turn.
	TurnEnded() <-chan Event
	// Close ends the conversation: the CLI finishes and exits.
	Close() error
	// Wait waits for the CLI to exit and returns the run's result.
	Wait() (Result, error)
}
