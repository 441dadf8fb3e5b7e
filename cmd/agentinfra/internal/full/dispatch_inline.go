package full

// The inline prompt of a supervised dispatch: when the person who runs
// `agentinfra dispatch --approval-mode ask` is at a terminal, each request
// of the run's session is shown on stderr and answered there (y, or n with
// a reason). The same request can be answered from another terminal
// (`agentinfra approve ID`): the store's compare-and-set keeps one answer,
// and the prompt says who answered when it was not this one.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/workspace"
)

// inlinePrompt follows the session of sup until ctx is done, asking on
// ios about every pending request. who decides is the session's owner, at
// this terminal.
func inlinePrompt(ctx context.Context, ios *cli.IOStreams, ws *workspace.Workspace, sup *supervised.Run, lines <-chan string) {
	ses := sup.Session()
	svc, err := supervision.New(supervision.Options{Store: sup.Store(), Workspace: ws})
	if err != nil {
		fmt.Fprintf(ios.ErrOut, "agentinfra: the inline prompt is off (%v)\n", err)
		return
	}
	owner := supervision.Person(ses.Owner, supervision.SurfaceTerminal)
	changes, err := svc.Changes(ctx)
	if err != nil {
		fmt.Fprintf(ios.ErrOut, "agentinfra: the inline prompt is off (%v): answer with `agentinfra approve ID` / `agentinfra reject ID --reason TEXT`\n", err)
		return
	}
	asked := map[int64]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
		}
		reqs, err := svc.Requests(ctx, ses.ID)
		if err != nil {
			continue
		}
		for _, r := range reqs {
			if r.Status != supervision.StatusPending || asked[r.ID] {
				continue
			}
			asked[r.ID] = true
			askInline(ctx, ios, svc, owner, r, lines, changes)
		}
	}
}

// askInline shows one request and waits for an answer typed here, or for
// the request to be decided elsewhere (or withdrawn, or expired).
func askInline(ctx context.Context, ios *cli.IOStreams, svc *supervision.Service, owner supervision.Actor, r supervision.Request, lines <-chan string, changes <-chan struct{}) {
	w := ios.ErrOut
	// The title, command, file, diff and URL are the agent's: shown inert
	// (termsafe), so that they cannot clear the screen and draw another
	// request in place of this one.
	line := termsafe.Line
	fmt.Fprintf(w, "\n? request %d (risk %s): %s\n", r.ID, r.Risk, line(r.Title))
	if r.Command != "" {
		fmt.Fprintf(w, "  command: %s\n", line(r.Command))
	}
	if r.File != "" {
		fmt.Fprintf(w, "  file:    %s\n", line(r.File))
	}
	if r.Diff != "" {
		for _, l := range strings.Split(strings.TrimRight(r.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "  | %s\n", termsafe.Text(l))
		}
		if r.DiffCut() {
			fmt.Fprintf(w, "  %s\n", diffCutNote(r))
		}
	}
	if r.URL != "" {
		fmt.Fprintf(w, "  url:     %s\n", line(r.URL))
	}
	prompt := func() {
		fmt.Fprintf(w, "  approve? y = yes, n REASON = no (or elsewhere: agentinfra approve %d / reject %d --reason TEXT) > ", r.ID, r.ID)
	}
	prompt()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return
		case <-changes:
			cur, err := svc.Request(ctx, r.ID)
			if err == nil && cur.Status != supervision.StatusPending {
				fmt.Fprintf(w, "\n  request %d was %s%s\n", r.ID, cur.Status, decidedBy(cur))
				return
			}
		case line, ok := <-lines:
			if !ok {
				fmt.Fprintf(w, "\n  (no more input: answer with agentinfra approve %d / reject %d)\n", r.ID, r.ID)
				return
			}
			approve, reason, valid := parseAnswer(line)
			if !valid {
				prompt()
				continue
			}
			_, err := svc.Decide(context.WithoutCancel(ctx), owner, supervision.Decision{Request: r.ID, Approve: approve, Reason: reason})
			var de *supervision.DecidedError
			switch {
			case errors.As(err, &de):
				fmt.Fprintf(w, "  %v\n", err) // decided elsewhere first
			case err != nil:
				fmt.Fprintf(w, "  could not decide: %v\n", err)
			case approve:
				fmt.Fprintf(w, "  approved\n")
			default:
				fmt.Fprintf(w, "  rejected\n")
			}
			return
		}
	}
}

func decidedBy(r supervision.Request) string {
	if r.DecidedBy == "" {
		return ""
	}
	return fmt.Sprintf(" via %s by %s", r.Surface, termsafe.Line(supervision.Handle(r.DecidedBy)))
}

// parseAnswer reads "y", "yes", "n", "no", "n because…", "no: because…".
func parseAnswer(line string) (approve bool, reason string, ok bool) {
	s := strings.TrimSpace(line)
	word, rest, _ := strings.Cut(s, " ")
	word = strings.TrimSuffix(strings.ToLower(word), ":")
	switch word {
	case "y", "yes":
		return true, "", rest == ""
	case "n", "no":
		return false, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":")), true
	}
	return false, "", false
}

// lineReader delivers the lines of r; the channel closes at EOF. The
// reading goroutine ends with the input (a terminal's: with the process).
func lineReader(r io.Reader) <-chan string {
	ch := make(chan string)
	var once sync.Once
	go func() {
		defer once.Do(func() { close(ch) })
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}
