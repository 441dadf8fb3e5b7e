package fleet

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/events"
)

// Watcher is a backend whose changes can be watched (the local one).
type Watcher interface {
	Watch(ctx context.Context, bus *events.Bus, tick time.Duration) error
}
