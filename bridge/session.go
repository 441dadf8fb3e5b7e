package bridge

import (
	"context"
	"syscall"

	"github.com/agentinfra/agentinfra/store"
)

// followSession applies what people do to the session from any process
// (`agentinfra session pause|resume|stop`): paused stops the CLI's whole
// process group (SIGSTOP), active resumes it (SIGCONT), an ended session
// stops the run.
func followSession(st *store.Store, id int64, b Started) {
	ctx, cancel := context.WithCancel(context.Background())
	p := b.Process()
	go func() { <-p.Done(); cancel() }()
	changes, err := st.Changes(ctx)
	if err != nil {
		return
	}
	go func() {
		last := store.SessionActive
		for range changes {
			ses, err := st.Session(ctx, id)
			if err != nil || ses.Status == last {
				continue
			}
			switch ses.Status {
			case store.SessionPaused:
				p.Signal(syscall.SIGSTOP)
			case store.SessionActive:
				p.Signal(syscall.SIGCONT)
			case store.SessionTerminated, store.SessionInterrupted:
				p.Signal(syscall.SIGCONT)
				b.Stop()
				return
			}
			last = ses.Status
		}
	}()
}
