package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

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

// onSlashCommand answers /agentinfra off the socket's loop (the envelope
// was acked at once), to the caller only.
func (s *Service) onSlashCommand(ctx context.Context, cmd slack.SlashCommand) {
	reply := s.onSlash(ctx, cmd)
	if reply == "" {
		return // a refusal over the member's limit: no answer
	}
	if err := s.respond(ctx, cmd, reply); err != nil {
		s.log.Warn("slack: answer a slash command", "slack_user", cmd.UserID, "err", err)
	}
}

// onSlash is the answer to /agentinfra.
func (s *Service) onSlash(ctx context.Context, cmd slack.SlashCommand) string {
	text := s.conf.plainText(cmd.Text)
	verb, rest := nextWord(text)
	verb = strings.ToLower(verb)
	if verb == "" {
		verb = "help"
	}
	person, known := s.conf.person(cmd.UserID)
	c := click{Action: "slash:" + clip(verb, 40), Value: text, UserID: cmd.UserID, UserName: cmd.UserName, Person: person, Channel: cmd.ChannelID}
	if !known && verb != "help" {
		return s.refuseSlash(ctx, c, 0, ":no_entry: Not allowed: "+s.notMapped(c.UserID))
	}
	switch verb {
	case "help":
		return slashHelp
	case "sessions":
		return s.slashSessions(ctx, c.actor())
	case "pending":
		return s.slashPending(ctx, c.actor())
	case "pause", "resume", "stop", "run", "steer", "checkpoint":
		idArg, rest := nextWord(rest)
		if idArg == "" {
			return fmt.Sprintf("`/agentinfra %s` needs a session ID (`/agentinfra sessions` lists them)", verb)
		}
		ses, err := s.slashSession(ctx, idArg)
		if err != nil {
			return err.Error()
		}
		// Asked first, so that a refusal is audited with what was tried.
		if err := s.sup.May(ctx, c.actor(), ses, fmt.Sprintf("%s session %d", slashWhat[verb], ses.ID)); err != nil {
			return s.refuseSlash(ctx, c, ses.ID, ":no_entry: Not allowed: "+inert(err.Error(), oneLine, 500))
		}
		switch verb {
		case "steer":
			if rest == "" {
				return "`/agentinfra steer ID TEXT` needs the message"
			}
			m, err := s.sup.Steer(ctx, c.actor(), ses.ID, rest)
			if err != nil {
				return fmt.Sprintf("Session %d: %s", ses.ID, inert(err.Error(), oneLine, 500))
			}
			return fmt.Sprintf("Queued for the agent of session %d (steering m%d): it gets it as its next message.", ses.ID, m.ID)
		case "checkpoint":
			cp, err := s.sup.CreateCheckpoint(ctx, c.actor(), ses.ID, rest)
			if err != nil {
				return fmt.Sprintf("Session %d: %s", ses.ID, inert(err.Error(), oneLine, 500))
			}
			return fmt.Sprintf("Checkpoint %d of session %d: %s (restore from a terminal: `agentinfra checkpoint restore %d`)", cp.ID, ses.ID, inert(cp.Commit[:min(12, len(cp.Commit))], oneLine, 20), cp.ID)
		case "run":
			name, _ := nextWord(rest)
			if name == "" {
				return "`/agentinfra run ID NAME` needs the name of a registered command"
			}
			return s.slashRun(ctx, ses, person, name)
		}
		to := map[string]string{"pause": supervision.SessionPaused, "resume": supervision.SessionActive, "stop": supervision.SessionTerminated}[verb]
		reason := "stopped from Slack by " + supervision.Handle(person)
		if verb == "stop" && rest != "" {
			reason = rest
		}
		if _, err := s.sup.MoveSession(ctx, c.actor(), ses.ID, to, reason); err != nil {
			return fmt.Sprintf("Session %d: %s", ses.ID, inert(err.Error(), oneLine, 500))
		}
		return fmt.Sprintf("Session %d: %s.", ses.ID, map[string]string{"pause": "paused", "resume": "resumed", "stop": "stopped"}[verb])
	}
	return fmt.Sprintf("Unknown command %s.\n%s", inert(verb, codeSpan, 100), slashHelp)
}

// nextWord splits the first word off text: the word, and the rest after
// the spaces that follow it, every other character kept.
func nextWord(text string) (word, rest string) {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	i := strings.IndexFunc(text, unicode.IsSpace)
	if i < 0 {
		return text, ""
	}
	return text[:i], strings.TrimLeftFunc(text[i:], unicode.IsSpace)
}

// slashWhat is what a slash command's verb does to a session, as a refusal
// says it.
var slashWhat = map[string]string{"pause": "change", "resume": "change", "stop": "change", "run": "run a command in", "steer": "steer", "checkpoint": "checkpoint"}

// refuseSlash records a refused slash command and returns the answer ("":
// the member is over their limit, no answer).
func (s *Service) refuseSlash(ctx context.Context, c click, sessionID int64, answer string) string {
	if !s.record(ctx, c.refusal(sessionID, 0), answer) {
		return ""
	}
	return answer
}

// slashSession is a remote session by ID (local ones are not reachable
// from Slack).
func (s *Service) slashSession(ctx context.Context, arg string) (supervision.Session, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		return supervision.Session{}, fmt.Errorf("%s is not a session ID (`/agentinfra sessions` lists them)", inert(arg, codeSpan, 100))
	}
	ses, err := s.sup.Session(ctx, id)
	if err != nil || !posts(ses) {
		return supervision.Session{}, fmt.Errorf("no remote session %d (`/agentinfra sessions` lists them)", id)
	}
	return ses, nil
}

// mayList reports whether a's listing shows session ses: an operator's
// shows every session, anyone else's the sessions they own (titles and
// pending requests are the owner's business).
func (s *Service) mayList(ctx context.Context, a supervision.Actor, ses supervision.Session) bool {
	return s.sup.May(ctx, a, ses, "list") == nil
}

func (s *Service) slashSessions(ctx context.Context, a supervision.Actor) string {
	live, err := s.sup.Sessions(ctx, supervision.SessionFilter{Statuses: supervision.LiveStatuses})
	if err != nil {
		return inert(err.Error(), oneLine, 500)
	}
	var b strings.Builder
	for _, ses := range live {
		if !posts(ses) || !s.mayList(ctx, a, ses) {
			continue
		}
		fmt.Fprintf(&b, "• *%d* %s — %s", ses.ID, inert(ses.Status, oneLine, 20), sessionLine(s.conf, ses))
		if ses.LastTool != "" {
			fmt.Fprintf(&b, " · last tool %s", inert(ses.LastTool, codeSpan, 100))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "No live remote session of yours (an operator sees every session's)."
	}
	return b.String()
}

func (s *Service) slashPending(ctx context.Context, a supervision.Actor) string {
	pending, err := s.sup.Pending(ctx)
	if err != nil {
		return inert(err.Error(), oneLine, 500)
	}
	var b strings.Builder
	for _, p := range pending {
		if p.Mode != supervision.ModeRemote && p.Mode != supervision.ModeHybrid {
			continue
		}
		if !s.mayList(ctx, a, supervision.Session{ID: p.SessionID, Owner: p.Owner}) {
			continue
		}
		fmt.Fprintf(&b, "• request *%d* (session %d, risk %s): %s\n", p.ID, p.SessionID, inert(p.Risk, oneLine, 20), inert(p.Title, oneLine, 200))
	}
	if b.Len() == 0 {
		return "No request of your sessions waits for a person (an operator sees every session's)."
	}
	return b.String()
}

// slashRun runs a registered command in the session's workspace and posts
// its output (the last lines) in the session's thread.
func (s *Service) slashRun(ctx context.Context, ses supervision.Session, person, name string) string {
	reg, err := s.registry(ses.Workspace)
	if err != nil {
		return inert(err.Error(), oneLine, 500)
	}
	if _, ok := reg[name]; !ok {
		return fmt.Sprintf("%s is not in the command registry of session %d's workspace (the commands section of .agent/%s); registered: %s",
			inert(name, codeSpan, 100), ses.ID, policy.FileName, inert(strings.Join(reg.Names(), ", "), oneLine, 1000))
	}
	threadTS, err := s.thread(ctx, ses)
	if err != nil {
		return inert(err.Error(), oneLine, 500)
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
			status = ":x: " + inert(err.Error(), oneLine, 300)
		}
		head := fmt.Sprintf("%s (%s), run by %s: %s\n", inert(name, codeSpan, 100), inert(strings.Join(reg[name], " "), oneLine, 500), s.conf.mention(person), status)
		text := head + inert(tail(string(out), runOutputLines), codeBlock, maxSectionText-width(head))
		if _, err := s.post(ctx, channel, threadTS, text, nil); err != nil {
			s.log.Warn("slack: post a command's output", "session", ses.ID, "err", err)
		}
	}()
	return fmt.Sprintf("Running %s in session %d's workspace; the output goes to its thread.", inert(name, codeSpan, 100), ses.ID)
}

func (s *Service) registry(workspace string) (policy.Registry, error) {
	if s.opts.Commands != nil {
		return s.opts.Commands(workspace)
	}
	return policy.Load(workspace, policy.DefaultPaths(workspace, s.opts.Getenv)).Registry, nil
}

// tail is the last n lines of out, saying how many were cut (inert clips
// what is still too long).
func tail(out string, n int) string {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return "(no output)"
	}
	ls := strings.Split(out, "\n")
	if len(ls) <= n {
		return out
	}
	return fmt.Sprintf("… (%d lines cut)\n", len(ls)-n) + strings.Join(ls[len(ls)-n:], "\n")
}
