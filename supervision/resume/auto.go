package resume

import (
	"context"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
)

// Report says what Auto did: each session resumed, each that could not be.
type Report struct {
	Resumed func(supervision.Resumed)
	Failed  func(error)
}

func (rep Report) tell(done []supervision.Resumed, errs []error) {
	for _, d := range done {
		if rep.Resumed != nil {
			rep.Resumed(d)
		}
	}
	for _, err := range errs {
		if rep.Failed != nil {
			rep.Failed(err)
		}
	}
}

// Reaper is the reap a supervision command runs once the store is open
// (supervision.Options.Reap: the sessions of dead supervisors interrupted,
// each to reaped), then Auto (each resume to rep).
func (r *Resumer) Reaper(reaped func(supervised.Reaped), rep Report) func(context.Context, *store.Store) error {
	reap := supervised.Reaper(r.WS, reaped)
	return func(ctx context.Context, st *store.Store) error {
		if err := reap(ctx, st); err != nil {
			return err
		}
		rep.tell(r.Auto(ctx, st))
		return nil
	}
}

// ReapAndAuto is what a command that does not open the store for
// supervision (the fleet's) does first with supervision.resume: auto: open
// it, reap the dead supervisors' sessions and resume their runs — so that
// one `agentinfra agent list` after a reboot brings the fleet back.
// Without auto nothing is opened.
func (r *Resumer) ReapAndAuto(ctx context.Context, rep Report) {
	conf, err := supervision.LoadConfig(r.WS)
	if err != nil || conf.Resume != config.ResumeAuto {
		return
	}
	st, err := store.OpenWorkspace(ctx, r.WS, supervision.StoreOptions(conf))
	if err != nil {
		if rep.Failed != nil {
			rep.Failed(err)
		}
		return
	}
	defer st.Close()
	if _, err := supervised.Reap(ctx, r.WS, st); err != nil {
		if rep.Failed != nil {
			rep.Failed(err)
		}
		return
	}
	rep.tell(r.Auto(ctx, st))
}
