package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/supervision"
)

// sessionKind is the thread itself: its first message when the session
// starts, and the end of the run with its outcome.
type sessionKind struct{}

// actionSessionMode is the audit action of a session's mode changing: a
// session switched to local says so in its thread (its buttons then do
// nothing but say why).
const actionSessionMode = "session_mode"

// actionSessionResume is the Resume button of an interrupted session's
// first message: its run restarted on the CLI's own session (issue 33).
const actionSessionResume = "session_resume"

func (sessionKind) item() string { return supervision.ItemSession }

func (sessionKind) handles(action string) bool {
	switch action {
	case "session_active", "session_paused", "session_terminated", "session_interrupted", actionSessionMode:
		return true
	}
	return false
}

func (sessionKind) buttons() []string { return []string{actionSessionResume} }

// onClick resumes the session through the service (who may: its owner or
// an operator, as from the terminal), and says so in the thread; a resume
// that cannot start says why to the clicker, the session left interrupted.
func (sessionKind) onClick(ctx context.Context, s *Service, c click) error {
	ses, err := s.sup.Session(ctx, c.ID)
	if err != nil {
		return err
	}
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("resume session %d", ses.ID)); !ok {
		return err
	}
	r, err := s.sup.Resume(ctx, c.actor(), ses.ID)
	if err != nil {
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, fmt.Sprintf("Session %d was not resumed: %s", ses.ID, inert(err.Error(), oneLine, 500)))
		return nil
	}
	text, blocks := startBlocks(r.Session, s.conf)
	if err := s.update(ctx, c.Channel, c.TS, text, blocks); err != nil {
		return err
	}
	_, err = s.post(ctx, c.Channel, c.TS, fmt.Sprintf(":arrow_forward: Resumed by %s: the run goes on under a new supervisor.", s.conf.mention(c.Person)), nil)
	return err
}

func (sessionKind) onText(context.Context, *Service, input, string) error { return nil }

func (sessionKind) onAudit(ctx context.Context, s *Service, d *delivery, ev supervision.AuditEvent, ses supervision.Session) error {
	if ev.Action == actionSessionMode {
		return modeChanged(ctx, s, d, ev, ses)
	}
	ts, err := s.thread(ctx, ses)
	if err != nil {
		return err
	}
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
	if err != nil {
		return err
	}
	by := fmt.Sprintf("%s via %s", s.conf.mention(ev.Actor), inert(ev.Surface, oneLine, 40))
	switch ev.Action {
	case "session_paused":
		return d.once(ctx, "paused", func() error {
			_, err := s.post(ctx, p.Channel, ts, fmt.Sprintf(":double_vertical_bar: Paused by %s.", by), nil)
			return err
		})
	case "session_active":
		if strings.Contains(string(ev.Detail), `"from":"paused"`) {
			return d.once(ctx, "resumed", func() error {
				_, err := s.post(ctx, p.Channel, ts, fmt.Sprintf(":arrow_forward: Resumed by %s.", by), nil)
				return err
			})
		}
	case "session_terminated", "session_interrupted":
		if err := d.once(ctx, "end", func() error {
			text, blocks := endBlocks(ses)
			if line, link := s.changeLine(ctx, ses); line != "" {
				text, blocks = text+"\n"+line, append(blocks, reviewBlocks(line, link)...)
				if link != "" {
					text += " " + link
				}
			}
			_, err := s.post(ctx, p.Channel, ts, text, blocks)
			return err
		}); err != nil {
			return err
		}
		// The thread's first message says how it ended too.
		rootText, rootBlocks := startBlocks(ses, s.conf)
		return s.update(ctx, p.Channel, p.TS, rootText, rootBlocks)
	}
	return nil
}

// modeChanged says in a session's thread (when it has one) that its mode
// changed: switched to local, Slack can no longer decide or steer it;
// switched to remote or hybrid, what waits in it and was not posted while
// it was local is posted now.
func modeChanged(ctx context.Context, s *Service, d *delivery, ev supervision.AuditEvent, ses supervision.Session) error {
	var detail struct{ To string }
	json.Unmarshal(ev.Detail, &detail)
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
	switch {
	case errors.Is(err, supervision.ErrNotFound) && !posts(ses):
		return nil // never on Slack
	case err != nil && !errors.Is(err, supervision.ErrNotFound):
		return err
	case err == nil:
		by := fmt.Sprintf("%s via %s", s.conf.mention(ev.Actor), inert(ev.Surface, oneLine, 40))
		line := fmt.Sprintf(":satellite_antenna: Session %d is in %s mode now (set by %s).", ses.ID, inert(detail.To, oneLine, 20), by)
		if detail.To == supervision.ModeLocal {
			line = fmt.Sprintf(":house: Session %d is in local mode now (set by %s): its requests and questions are answered from the terminal or the web page, and the buttons above do nothing.", ses.ID, by)
		}
		if err := d.once(ctx, "mode", func() error {
			_, err := s.post(ctx, p.Channel, p.TS, line, nil)
			return err
		}); err != nil {
			return err
		}
	}
	if !posts(ses) || ses.Ended() {
		return nil
	}
	in, err := s.sup.Inbox(ctx)
	if err != nil {
		return err
	}
	return s.catchUpSession(ctx, ses, in)
}

// thread returns the ts of a session's thread, starting it when needed.
func (s *Service) thread(ctx context.Context, ses supervision.Session) (string, error) {
	defer s.locks.lock(fmt.Sprintf("session/%d", ses.ID))()
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
	if err == nil {
		return p.TS, nil
	}
	if !errors.Is(err, supervision.ErrNotFound) {
		return "", err
	}
	channel, err := s.channelOf(ses)
	if err != nil {
		return "", err
	}
	text, blocks := startBlocks(ses, s.conf)
	ts, err := s.post(ctx, channel, "", text, blocks)
	if err != nil {
		return "", fmt.Errorf("start the thread of session %d in %s: %w", ses.ID, channel, err)
	}
	// Recorded even when the service is stopping (see postItem).
	return ts, s.sup.PutPost(context.WithoutCancel(ctx), supervision.Post{Surface: supervision.SurfaceSlack, ItemKind: supervision.ItemSession, ItemID: ses.ID, SessionID: ses.ID, Channel: channel, TS: ts})
}

// sessionLine is what a session is, for a message's context line: its CLI
// (an MCP client's name), agent, task and owner are the agent's to choose.
func sessionLine(conf Config, ses supervision.Session) string {
	parts := []string{inert(ses.CLI, oneLine, 100)}
	if ses.Agent != "" {
		parts = append(parts, "agent "+inert(ses.Agent, oneLine, 100))
	}
	if ses.TaskID != "" {
		parts = append(parts, "task "+inert(ses.TaskID, oneLine, 100))
	}
	parts = append(parts, "owner "+conf.handle(ses.Owner), "mode "+inert(ses.Mode, oneLine, 20))
	return strings.Join(parts, " · ")
}

// startBlocks is the thread's first message.
func startBlocks(ses supervision.Session, conf Config) (string, []slack.Block) {
	title := inert(ses.Title, oneLine, 1000)
	if ses.Title == "" {
		title = "supervised run"
	}
	state, word := ":large_green_circle: started", "started"
	if ses.Ended() {
		state, word = ":checkered_flag: "+inert(ses.Status, oneLine, 20), inert(ses.Status, oneLine, 20)
	}
	text := fmt.Sprintf("Session %d %s: %s", ses.ID, word, title)
	blocks := []slack.Block{
		section(fmt.Sprintf("*Session %d* %s — %s", ses.ID, state, title)),
		slack.NewContextBlock("", md(sessionLine(conf, ses)+" · approvals and questions come in this thread; reply with `@agentinfra` to talk to it")),
	}
	if supervision.Resumable(ses) {
		blocks = append(blocks, buttons(fmt.Sprintf("session-%d", ses.ID), ses.ID, [3]string{actionSessionResume, "Resume", "primary"}))
	}
	return text, blocks
}

// endBlocks is the thread's last message: the outcome of the run.
func endBlocks(ses supervision.Session) (string, []slack.Block) {
	icon := ":checkered_flag:"
	if ses.Status == supervision.SessionInterrupted {
		icon = ":warning:"
	}
	reason := inert(ses.EndReason, oneLine, 2500)
	if ses.EndReason == "" {
		reason = "no reason recorded"
	}
	status := inert(ses.Status, oneLine, 20)
	text := fmt.Sprintf("Session %d %s: %s", ses.ID, status, reason)
	return text, []slack.Block{section(fmt.Sprintf("%s *Session %d %s*: %s", icon, ses.ID, status, reason))}
}

func md(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, fitText(text, maxSectionText), false, false)
}

// section is a section block of mrkdwn text (ours, with agent text inert).
func section(text string) slack.Block { return slack.NewSectionBlock(md(text), nil, nil) }

func plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
}

// changeLine says what the session's run left for review: its task's
// change when it waits in REVIEW, with its size and checks, and the
// command that shows it ("" when there is none, or no review service);
// link is its page on the console ("" without console.url). The link is
// made of the config's URL and the task ID the matrix holds, never of
// what the agent said.
func (s *Service) changeLine(ctx context.Context, ses supervision.Session) (line, link string) {
	if s.opts.Review == nil || ses.TaskID == "" {
		return "", ""
	}
	d, err := s.opts.Review.Show(ctx, ses.TaskID)
	if err != nil || d.Change == nil || d.Change.State != review.StateReview {
		return "", ""
	}
	id := inert(d.Task.ID, oneLine, 40)
	line = fmt.Sprintf(":mag: *Task %s's change waits for review*: %d %s, +%d −%d, checks %s. Review it: `agentinfra review show %s`, or the console's Review page.",
		id, d.Files, mdtext.Plural(d.Files, "file", "files"), d.Added, d.Deleted, d.Checks, id)
	return line, s.opts.Console.Link("review", d.Task.ID)
}

// actionOpenReview is the Review button: a link to the console, which
// Slack opens; its click, which Slack reports too, does nothing here.
const actionOpenReview = "open_review"

// reviewBlocks is the change's line with its Review button to link.
func reviewBlocks(line, link string) []slack.Block {
	if link == "" {
		return []slack.Block{section(line)}
	}
	b := slack.NewButtonBlockElement(actionOpenReview, "", plain("Review"))
	b.URL, b.Style = link, slack.StylePrimary
	return []slack.Block{section(line), slack.NewActionBlock("review", b)}
}
