package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
)

// sessionKind is the thread itself: its first message when the session
// starts, and the end of the run with its outcome.
type sessionKind struct{}

func (sessionKind) handles(action string) bool {
	switch action {
	case "session_active", "session_paused", "session_terminated", "session_interrupted":
		return true
	}
	return false
}

func (sessionKind) buttons() []string { return []string{"session"} }

func (sessionKind) onClick(context.Context, *Service, click) error { return nil }

func (sessionKind) onText(context.Context, *Service, input, string) error { return nil }

func (sessionKind) onAudit(ctx context.Context, s *Service, ev supervision.AuditEvent, ses supervision.Session) error {
	ts, err := s.thread(ctx, ses)
	if err != nil {
		return err
	}
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
	if err != nil {
		return err
	}
	switch ev.Action {
	case "session_paused":
		_, err = s.post(ctx, p.Channel, ts, fmt.Sprintf(":double_vertical_bar: Paused by %s via %s.", s.conf.mention(ev.Actor), ev.Surface), nil)
	case "session_active":
		if strings.Contains(string(ev.Detail), `"from":"paused"`) {
			_, err = s.post(ctx, p.Channel, ts, fmt.Sprintf(":arrow_forward: Resumed by %s via %s.", s.conf.mention(ev.Actor), ev.Surface), nil)
		}
	case "session_terminated", "session_interrupted":
		text, blocks := endBlocks(ses)
		if _, err = s.post(ctx, p.Channel, ts, text, blocks); err != nil {
			return err
		}
		// The thread's first message says how it ended too.
		rootText, rootBlocks := startBlocks(ses, s.conf)
		err = s.update(ctx, p.Channel, p.TS, rootText, rootBlocks)
	}
	return err
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
	return ts, s.sup.PutPost(ctx, supervision.Post{Surface: supervision.SurfaceSlack, ItemKind: supervision.ItemSession, ItemID: ses.ID, SessionID: ses.ID, Channel: channel, TS: ts})
}

func sessionLine(ses supervision.Session) string {
	parts := []string{ses.CLI}
	if ses.Agent != "" {
		parts = append(parts, "agent "+ses.Agent)
	}
	if ses.TaskID != "" {
		parts = append(parts, "task "+ses.TaskID)
	}
	parts = append(parts, "owner "+supervision.Handle(ses.Owner), "mode "+ses.Mode)
	return strings.Join(parts, " · ")
}

// startBlocks is the thread's first message.
func startBlocks(ses supervision.Session, conf Config) (string, []slack.Block) {
	title := ses.Title
	if title == "" {
		title = "supervised run"
	}
	state := ":large_green_circle: started"
	if ses.Ended() {
		state = ":checkered_flag: " + ses.Status
	}
	text := fmt.Sprintf("Session %d %s: %s", ses.ID, strings.TrimPrefix(strings.TrimPrefix(state, ":large_green_circle: "), ":checkered_flag: "), title)
	return text, []slack.Block{
		slack.NewSectionBlock(md(fmt.Sprintf("*Session %d* %s — %s", ses.ID, state, escape(title))), nil, nil),
		slack.NewContextBlock("", md(escape(sessionLine(ses))+" · approvals and questions come in this thread; reply with "+"`@agentinfra` to talk to it")),
	}
}

// endBlocks is the thread's last message: the outcome of the run.
func endBlocks(ses supervision.Session) (string, []slack.Block) {
	icon := ":checkered_flag:"
	if ses.Status == supervision.SessionInterrupted {
		icon = ":warning:"
	}
	reason := ses.EndReason
	if reason == "" {
		reason = "no reason recorded"
	}
	text := fmt.Sprintf("Session %d %s: %s", ses.ID, ses.Status, reason)
	return text, []slack.Block{slack.NewSectionBlock(md(fmt.Sprintf("%s *Session %d %s*: %s", icon, ses.ID, ses.Status, escape(clip(reason, 2500)))), nil, nil)}
}

func md(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, false)
}

func plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
}

// escape keeps a text from being read as Slack markup (<@U…>, <!channel>).
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
