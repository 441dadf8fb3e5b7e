package fleettest

import (
	"context"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
)

// StopRunsAtCleanup stops, when the test ends, every run still going on
// b's agents and waits until each has ended. A local run is a detached
// process that writes into the test's folders: left alone, it races the
// removal of t.TempDir ("directory not empty"). Call it after the
// temporary folders are made, so that it runs before they are removed.
func StopRunsAtCleanup(t testing.TB, b fleet.Backend) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := fleet.StopEveryRun(ctx, b); err != nil {
			t.Errorf("at the end of the test: %v", err)
		}
	})
}
