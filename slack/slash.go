package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// slashHelp is the answer to `/agentinfra help`.
const slashHelp = "`/agentinfra sessions` — the live remote sessions\n" +
	"`/agentinfra pending` — the requests waiting for a person\n" +
	"`/agentinfra pause ID` · `resume ID` · `stop ID [reason]` — a session\n" +
	"`/agentinfra run ID NAME` — a command of the registry (the `commands` of .agent/policy.yaml) in the session's workspace; the output goes to its thread\n" +
	"`/agentinfra steer ID TEXT` — a message for the agent (its next user message)\n" +
	"`/agentinfra checkpoint ID [LABEL]` — a checkpoint of the session's worktree\n" +
	"Decide requests with their buttons; answer questions by replying in the thread and mentioning the app."

// runTimeout bounds a registry command run from Slack.
const runTimeout = 5 * time.Minute

// runOutputLines is how much of a command's output goes to the thread.
const runOutputLines = 30

// onSlash answers /agentinfra; the answer is shown to the caller only.
func (s *Service) onSlash(ctx context.Context, cmd slack.SlashCommand) string {
	args := strings.Fields(cmd.Text)
	verb := "help"
	if len(args) > 0 {
		verb = strings.ToLower(args[0])
	}
	person, known := s.conf.person(cmd.UserID)
	c := click{Action: "slash:" + verb, Value: cmd.Text, UserID: cmd.UserID, UserName: cmd.UserName, Person: person, Channel: cmd.ChannelID}
	if !known && verb != "help" {
		s.refuseSlash(ctx, c, 0, s.notMapped(c))
		return ":no_entry: Not allowed: " + s.notMapped(c)
	}
	switch verb {
	case "help":
		return slashHelp
	case "sessions":
		return s.slashSessions(ctx)
	case "pending":
		return s.slashPending(ctx)
	case "pause", "resume", "stop", "run", "steer", "checkpoint":
		if len(args) < 2 {
			return fmt.Sprintf("`/agentinfra %s` needs a session ID (`/agentinfra sessions` lists them)", verb)
		}
		ses, err := s.slashSession(ctx, args[1])
		if err != nil {
			return err.Error()
		}
		// Asked first, so that a refusal is audited with what was tried.
		if err := s.sup.May(ctx, c.actor(), ses, fmt.Sprintf("%s session %d", slashWhat[verb], ses.ID)); err != nil {
			s.refuseSlash(ctx, c, ses.ID, err.Error())
			return ":no_entry: Not allowed: " + err.Error()
		}
		switch verb {
		case "steer":
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd.Text[len(args[0]):]), args[1]))
			if text == "" {
				return "`/agentinfra steer ID TEXT` needs the message"
			}
			m, err := s.sup.Steer(ctx, c.actor(), ses.ID, text)
			if err != nil {
				return fmt.Sprintf("Session %d: %v", ses.ID, err)
			}
			return fmt.Sprintf("Queued for the agent of session %d (steering m%d): it gets it as its next message.", ses.ID, m.ID)
		case "checkpoint":
			label := strings.Join(args[2:], " ")
			cp, err := s.sup.CreateCheckpoint(ctx, c.actor(), ses.ID, label)
			if err != nil {
				return fmt.Sprintf("Session %d: %v", ses.ID, err)
			}
			return fmt.Sprintf("Checkpoint %d of session %d: %s (restore from a terminal: `agentinfra checkpoint restore %d`)", cp.ID, ses.ID, cp.Commit[:12], cp.ID)
		}
		if verb == "run" {
			if len(args) < 3 {
				return "`/agentinfra run ID NAME` needs the name of a registered command"
			}
			return s.slashRun(ctx, ses, person, args[2])
		}
		to := map[string]string{"pause": supervision.SessionPaused, "resume": supervision.SessionActive, "stop": supervision.SessionTerminated}[verb]
		reason := "stopped from Slack by " + supervision.Handle(person)
		if verb == "stop" && len(args) > 2 {
			reason = strings.Join(args[2:], " ")
		}
		if _, err := s.sup.MoveSession(ctx, c.actor(), ses.ID, to, reason); err != nil {
			return fmt.Sprintf("Session %d: %v", ses.ID, err)
		}
		return fmt.Sprintf("Session %d: %s.", ses.ID, map[string]string{"pause": "paused", "resume": "resumed", "stop": "stopped"}[verb])
	}
	return fmt.Sprintf("Unknown command %q.\n%s", verb, slashHelp)
}

// slashWhat is what a slash command's verb does to a session, as a refusal
// says it.
var slashWhat = map[string]string{"pause": "change", "resume": "change", "stop": "change", "run": "run a command in", "steer": "steer", "checkpoint": "checkpoint"}

func (s *Service) refuseSlash(ctx context.Context, c click, sessionID int64, why string) {
	who := c.Person
	if who == "" {
		who = "slack:" + c.UserID
	}
	detail, _ := json.Marshal(map[string]any{"action": c.Action, "text": c.Value, "slack_user": c.UserID, "slack_name": c.UserName, "why": why})
	if err := s.sup.Record(ctx, supervision.AuditEvent{SessionID: sessionID, Actor: who, Surface: supervision.SurfaceSlack, Action: "slack_refused", Detail: detail}); err != nil {
		s.log.Warn("slack: audit a refusal", "err", err)
	}
}

// slashSession is a remote session by ID (local ones are not reachable
// from Slack).
func (s *Service) slashSession(ctx context.Context, arg string) (supervision.Session, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		return supervision.Session{}, fmt.Errorf("%q is not a session ID (`/agentinfra sessions` lists them)", arg)
	}
	ses, err := s.sup.Session(ctx, id)
	if err != nil || !posts(ses) {
		return supervision.Session{}, fmt.Errorf("no remote session %d (`/agentinfra sessions` lists them)", id)
	}
	return ses, nil
}

func (s *Service) slashSessions(ctx context.Context) string {
	live, err := s.sup.Sessions(ctx, supervision.SessionFilter{Statuses: supervision.LiveStatuses})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, ses := range live {
		if !posts(ses) {
			continue
		}
		fmt.Fprintf(&b, "• *%d* %s — %s", ses.ID, ses.Status, escape(sessionLine(ses)))
		if ses.LastTool != "" {
			fmt.Fprintf(&b, " · last tool `%s`", escape(ses.LastTool))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "No live remote session."
	}
	return b.String()
}

func (s *Service) slashPending(ctx context.Context) string {
	pending, err := s.sup.Pending(ctx)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pending {
		if p.Mode != supervision.ModeRemote && p.Mode != supervision.ModeHybrid {
			continue
		}
		fmt.Fprintf(&b, "• request *%d* (session %d, risk %s): %s\n", p.ID, p.SessionID, p.Risk, escape(clip(p.Title, 200)))
	}
	if b.Len() == 0 {
		return "No request waits for a person."
	}
	return b.String()
}

// slashRun runs a registered command in the session's workspace and posts
// its output (the last lines) in the session's thread.
func (s *Service) slashRun(ctx context.Context, ses supervision.Session, person, name string) string {
	if ses.Host != "" {
		// Its workspace is on another machine: nothing of it runs here.
		return fmt.Sprintf("Session %d runs on host %s: its registered commands run there, not from here.", ses.ID, escape(ses.Host))
	}
	reg, err := s.registry(ses.Workspace)
	if err != nil {
		return err.Error()
	}
	if _, ok := reg[name]; !ok {
		return fmt.Sprintf("%q is not in the command registry of session %d's workspace (the commands section of .agent/%s); registered: %s",
			name, ses.ID, policy.FileName, strings.Join(append([]string{}, reg.Names()...), ", "))
	}
	threadTS, err := s.thread(ctx, ses)
	if err != nil {
		return err.Error()
	}
	channel, _ := s.channelOf(ses)
	if p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID); err == nil {
		channel = p.Channel
	}
	detail, _ := json.Marshal(map[string]any{"command": name, "argv": reg[name]})
	s.sup.Record(ctx, supervision.AuditEvent{SessionID: ses.ID, Actor: person, Surface: supervision.SurfaceSlack, Action: "command_run", Detail: detail})
	go func() {
		rctx, cancel := context.WithTimeout(ctx, runTimeout)
		defer cancel()
		out, err := reg.Run(rctx, name, ses.Workspace)
		status := ":white_check_mark: exit 0"
		if err != nil {
			status = ":x: " + err.Error()
		}
		text := fmt.Sprintf("`%s` (%s), run by %s: %s\n```%s```", name, strings.Join(reg[name], " "), s.conf.mention(person), status, tail(string(out), runOutputLines, 2500))
		if _, err := s.post(ctx, channel, threadTS, text, nil); err != nil {
			s.log.Warn("slack: post a command's output", "session", ses.ID, "err", err)
		}
	}()
	return fmt.Sprintf("Running `%s` in session %d's workspace; the output goes to its thread.", name, ses.ID)
}

func (s *Service) registry(workspace string) (policy.Registry, error) {
	if s.opts.Commands != nil {
		return s.opts.Commands(workspace)
	}
	return policy.Load(workspace, policy.DefaultPaths(workspace, s.opts.Getenv)).Registry, nil
}

// tail is the last n lines of out, at most max bytes, saying what was cut.
func tail(out string, n, max int) string {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return "(no output)"
	}
	ls := strings.Split(out, "\n")
	cut := 0
	if len(ls) > n {
		cut = len(ls) - n
		ls = ls[cut:]
	}
	text := strings.Join(ls, "\n")
	for len(text) > max {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			text = text[len(text)-max:]
			break
		}
		text = text[i+1:]
		cut++
	}
	if cut > 0 {
		text = fmt.Sprintf("… (%d lines cut)\n", cut) + text
	}
	return strings.ReplaceAll(text, "```", "'''")
}
