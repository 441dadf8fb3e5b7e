package full

// What a supervised dispatch without a terminal says at once: a script
// (setsid … </dev/null, a CI job) that runs `agentinfra dispatch
// --approval-mode ask` sees on stderr each request, continuation prompt
// and stall alert of the run's session as it is raised — its ID, what the
// agent asks, the command that answers it — and each outcome, instead of
// a process that seems to hang.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/workspace"
)

// announcer follows one session and writes its items to w, one line each.
type announcer struct {
	w       io.Writer
	svc     *supervision.Service
	session int64
	// told: items announced as waiting, by ref; done: their outcome too.
	told map[string]bool
	done map[string]bool
}

// announceSession writes the items of sup's session to w until ctx is
// done (and what was decided by then).
func announceSession(ctx context.Context, w io.Writer, ws *workspace.Workspace, sup *supervised.Run) {
	svc, err := supervision.New(supervision.Options{Store: sup.Store(), Workspace: ws})
	if err != nil {
		fmt.Fprintf(w, "agentinfra: requests of this run are not shown here (%v): `agentinfra inbox` lists them\n", err)
		return
	}
	changes, err := svc.Changes(ctx)
	if err != nil {
		fmt.Fprintf(w, "agentinfra: requests of this run are not shown here (%v): `agentinfra inbox` lists them\n", err)
		return
	}
	a := &announcer{w: w, svc: svc, session: sup.Session().ID, told: map[string]bool{}, done: map[string]bool{}}
	fmt.Fprintf(w, "agentinfra: supervised run: session %d; what the policy does not allow waits for a person (agentinfra inbox lists it)\n", a.session)
	for {
		a.look(ctx)
		select {
		case <-ctx.Done():
			a.look(context.WithoutCancel(ctx)) // the outcomes the end of the run brought
			return
		case <-changes:
		}
	}
}

// look announces what is new since the last look.
func (a *announcer) look(ctx context.Context) {
	reqs, err := a.svc.Requests(ctx, a.session)
	if err != nil {
		return
	}
	for _, r := range reqs {
		ref := waiting.Ref(waiting.KindRequest, r.ID)
		it := supervision.Waiting{Kind: waiting.KindRequest, ID: r.ID, Ref: ref}
		switch {
		case r.Status == supervision.StatusPending && !a.told[ref]:
			a.told[ref] = true
			fmt.Fprintf(a.w, "agentinfra: request %d waits for a person (risk %s): %s — answer: %s\n", r.ID, r.Risk, termsafe.Line(requestWhat(r)), it.HowToAnswer())
		case r.Status != supervision.StatusPending && a.told[ref] && !a.done[ref]:
			a.done[ref] = true
			fmt.Fprintf(a.w, "agentinfra: request %d %s%s%s\n", r.ID, r.Status, decidedBy(r), reasonOf(r.Reason))
		}
	}
	in, err := a.svc.Inbox(ctx)
	if err != nil {
		return
	}
	open := map[string]bool{}
	for _, p := range in.Prompts {
		if p.SessionID != a.session {
			continue
		}
		ref := waiting.Ref(waiting.KindPrompt, p.ID)
		open[ref] = true
		if !a.told[ref] {
			a.told[ref] = true
			it := supervision.Waiting{Kind: waiting.KindPrompt, ID: p.ID, Ref: ref}
			fmt.Fprintf(a.w, "agentinfra: prompt %s waits for a person (%s): %s — answer: %s\n", ref, p.Kind, termsafe.Line(oneLine(p.Text)), it.HowToAnswer())
		}
	}
	for _, al := range in.Alerts {
		if al.SessionID != a.session {
			continue
		}
		ref := waiting.Ref(waiting.KindAlert, al.ID)
		open[ref] = true
		if !a.told[ref] {
			a.told[ref] = true
			it := supervision.Waiting{Kind: waiting.KindAlert, ID: al.ID, Ref: ref}
			fmt.Fprintf(a.w, "agentinfra: stall alert %s: %s — answer: %s\n", ref, termsafe.Line(al.Reason), it.HowToAnswer())
		}
	}
	for ref := range a.told {
		if open[ref] || a.done[ref] || !(strings.HasPrefix(ref, "p") || strings.HasPrefix(ref, "s")) {
			continue
		}
		a.done[ref] = true
		var id int64
		fmt.Sscan(ref[1:], &id)
		if ref[0] == 'p' {
			if p, err := a.svc.Prompt(ctx, id); err == nil {
				fmt.Fprintf(a.w, "agentinfra: prompt %s %s%s%s\n", ref, p.Status, byWhom(p.Surface, p.DecidedBy), reasonOf(mdtext.Or(p.Instruction, p.Reason)))
			}
			continue
		}
		if al, err := a.svc.Alert(ctx, id); err == nil {
			fmt.Fprintf(a.w, "agentinfra: stall alert %s %s%s%s\n", ref, al.Status, byWhom(al.Surface, al.DecidedBy), reasonOf(al.Reason))
		}
	}
}

// requestWhat is what a request asks, in a line: its title, and the
// command, file or URL when the title does not hold it.
func requestWhat(r supervision.Request) string {
	what := oneLine(r.Title)
	for _, s := range []string{r.Command, r.File, r.URL} {
		if s = oneLine(s); s != "" && !strings.Contains(what, s) {
			what += ": " + s
			break
		}
	}
	return what
}

func byWhom(surface, by string) string {
	if by == "" {
		return ""
	}
	if surface == "" {
		return " by " + termsafe.Line(supervision.Handle(by))
	}
	return fmt.Sprintf(" via %s by %s", surface, termsafe.Line(supervision.Handle(by)))
}

func reasonOf(s string) string {
	if s = oneLine(s); s != "" {
		return ": " + termsafe.Line(s)
	}
	return ""
}
