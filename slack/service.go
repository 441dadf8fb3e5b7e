package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// Options make a Service.
type Options struct {
	// Supervision is the workspace's supervision service: every decision,
	// answer and session change from Slack goes through it.
	Supervision *supervision.Service
	Config      Config
	Tokens      Tokens
	// APIURL is the Web API's base URL ("" = Slack's; tests point it at a
	// fake Slack on 127.0.0.1).
	APIURL string
	// Commands returns the command registry of a session's workspace, for
	// the slash command's run (nil: the workspace's .agent/policy.yaml).
	Commands func(workspace string) (policy.Registry, error)
	// Getenv is the command's environment: where the user's allowlist,
	// which bounds the registry, is (nil: no allowlist).
	Getenv func(string) string
	// Log receives what the service does (nil = discarded).
	Log *slog.Logger
	// Queue bounds the calls waiting for Slack (0 = DefaultQueue).
	Queue int
	// PingInterval is how long without a ping from Slack means a dead
	// connection (0 = slack-go's 30 s).
	PingInterval time.Duration
	// Backoff is the first wait before reconnecting after the connection
	// failed in a way slack-go does not retry itself (0 = 1 s; doubles up
	// to a minute).
	Backoff time.Duration
}

// Service is a running Slack surface.
type Service struct {
	sup    *supervision.Service
	conf   Config
	opts   Options
	api    *slack.Client
	sm     *socketmode.Client
	out    *outbox
	log    *slog.Logger
	botID  string
	kinds  []kind
	inputs *inputs
	locks  keyedMutex
	ready  chan struct{} // closed once the bot's identity is known
}

// New prepares a Service (nothing is sent before Run).
func New(opts Options) (*Service, error) {
	if opts.Supervision == nil {
		return nil, errors.New("the Slack service needs the supervision service")
	}
	if opts.Tokens.App == "" || opts.Tokens.Bot == "" {
		return nil, fmt.Errorf("%w: the Slack service needs both tokens", ErrNoTokens)
	}
	contain.Conceal(opts.Tokens.App, opts.Tokens.Bot) // from the keyring too: never in a registry command's environment
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	apiOpts := []slack.Option{slack.OptionAppLevelToken(opts.Tokens.App)}
	if opts.APIURL != "" {
		apiOpts = append(apiOpts, slack.OptionAPIURL(opts.APIURL))
	}
	// Every call has a deadline: a Slack that does not answer must not
	// hold the queue (or a shutdown) for ever.
	apiOpts = append(apiOpts, slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	api := slack.New(opts.Tokens.Bot, apiOpts...)
	var smOpts []socketmode.Option
	if opts.PingInterval > 0 {
		smOpts = append(smOpts, socketmode.OptionPingInterval(opts.PingInterval))
	}
	s := &Service{sup: opts.Supervision, conf: opts.Config.withDefaults(), opts: opts, api: api, sm: socketmode.New(api, smOpts...),
		out: newOutbox(opts.Queue), log: log, inputs: newInputs(), ready: make(chan struct{})}
	s.kinds = []kind{sessionKind{}, approvalKind{}, promptKind{}, alertKind{}}
	return s, nil
}

// shutdownGrace is how long, once Run's context ends, the message being
// posted may take to finish and be recorded (so that a restart does not
// post it again).
const shutdownGrace = 10 * time.Second

// Run connects and serves until ctx ends. It returns early only for what
// retrying cannot fix: a token Slack refuses.
func (s *Service) Run(ctx context.Context) error {
	// work outlives ctx by up to shutdownGrace: a message sent to Slack is
	// recorded in the store before the service stops.
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	go func() {
		select {
		case <-ctx.Done():
			sleepCtx(work, shutdownGrace)
			stopWork()
		case <-work.Done():
		}
	}()
	auth, err := s.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack auth.test with the bot token: %w (check %s / the keyring's %q; docs/slack.md)", err, EnvBotToken, KeyringBotAccount)
	}
	s.botID = auth.UserID
	close(s.ready)
	s.log.Info("slack: authenticated", "team", auth.Team, "bot", auth.User, "bot_id", auth.UserID)

	go s.out.run(work)
	connErr := make(chan error, 1)
	tailErr := make(chan error, 1)
	go func() { connErr <- s.connect(ctx) }()
	go func() { tailErr <- s.tail(ctx, work) }()
	go s.tailHosts(ctx, work)
	go s.dispatch(ctx, work)
	select {
	case err = <-connErr:
	case err = <-tailErr:
		tailErr <- err
	case <-ctx.Done():
	}
	if ctx.Err() == nil {
		// A refused token or a broken store: stop the rest.
		return err
	}
	// Let the tail finish the event in hand.
	if err := <-tailErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// connect keeps the Socket Mode connection up: slack-go reconnects by
// itself on a dropped connection or Slack's disconnect message; what it
// gives up on (anything but a refused token) is retried here with a
// backoff.
func (s *Service) connect(ctx context.Context) error {
	wait := s.opts.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	for {
		err := s.sm.RunContext(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// RunContext returns only when slack-go gave up on the connection.
		if isAuthError(err) {
			return fmt.Errorf("slack refused the app-level token (apps.connections.open: %w): check %s / the keyring's %q; docs/slack.md", err, EnvAppToken, KeyringAppAccount)
		}
		s.log.Warn("slack: connection failed; reconnecting", "err", err, "in", wait)
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
		wait = min(wait*2, time.Minute)
	}
}

func isAuthError(err error) bool {
	switch err.Error() {
	case "invalid_auth", "account_inactive", "not_authed", "token_revoked", "not_allowed_token_type":
		return true
	}
	var sc slack.StatusCodeError
	return errors.As(err, &sc) && sc.Code == 404
}

// dispatch handles what arrives over the socket, each envelope acked at
// once (Slack wants the ack within 3 s) and handled in its own goroutine.
func (s *Service) dispatch(ctx, work context.Context) {
	for {
		var evt socketmode.Event
		select {
		case <-ctx.Done():
			return
		case evt = <-s.sm.Events:
		}
		switch evt.Type {
		case socketmode.EventTypeConnected:
			s.log.Info("slack: connected")
		case socketmode.EventTypeConnectionError:
			s.log.Warn("slack: connection error", "err", fmt.Sprint(evt.Data))
		case socketmode.EventTypeInteractive:
			cb, _ := evt.Data.(slack.InteractionCallback)
			s.ack(evt.Request, nil)
			go s.onInteractive(work, cb)
		case socketmode.EventTypeEventsAPI:
			s.ack(evt.Request, nil)
			go s.onEventsAPI(work, evt)
		case socketmode.EventTypeSlashCommand:
			cmd, _ := evt.Data.(slack.SlashCommand)
			// The answer is the ack's payload: Slack shows it to the caller.
			reply := s.onSlash(work, cmd)
			s.ack(evt.Request, map[string]any{"response_type": "ephemeral", "text": reply})
		}
	}
}

func (s *Service) ack(req *socketmode.Request, payload any) {
	if req == nil {
		return
	}
	if err := s.sm.Ack(*req, payload); err != nil {
		s.log.Warn("slack: ack failed", "envelope", req.EnvelopeID, "err", err)
	}
}

// tail follows the audit log from the service's cursor and routes each
// event to its message kind. It stops between two events once ctx ends;
// work (which outlives ctx a little) carries the calls of the event in
// hand. An event whose handling was cut short is handled again after a
// restart; one Slack refused (a wrong channel) is logged and passed.
func (s *Service) tail(ctx, work context.Context) error {
	cursor, ok, err := s.sup.Cursor(work, supervision.SurfaceSlack)
	if err != nil {
		return err
	}
	if !ok {
		// First start: history is not replayed; live sessions and their
		// pending requests are caught up below.
		if cursor, err = s.sup.LastAuditSeq(work); err != nil {
			return err
		}
	}
	changes, err := s.sup.Changes(ctx)
	if err != nil {
		return err
	}
	if err := s.catchUp(work); err != nil {
		s.log.Warn("slack: catching up live sessions", "err", err)
	}
	for {
		evs, err := s.sup.AuditAfter(work, cursor, 200)
		if err != nil {
			return err
		}
		done := cursor
		for _, ev := range evs {
			if ctx.Err() != nil {
				break
			}
			if err := s.route(work, ev); err != nil {
				if work.Err() != nil {
					break
				}
				s.log.Warn("slack: posting", "action", ev.Action, "session", ev.SessionID, "err", err)
			}
			done = ev.Seq
		}
		if done != cursor {
			cursor = done
			if err := s.sup.SetCursor(work, supervision.SurfaceSlack, cursor); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(evs) == 200 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changes:
		}
	}
}

// tailHosts follows the audit logs of the workspace's hosts (the
// supervised agents' on Coder: supervision's FollowHosts) and routes their
// events as tail routes the workspace's, so that a host's remote and
// hybrid sessions are posted and decided here as this machine's are. An
// event a host could not be asked about (it went away meanwhile) comes
// again once it is back; one Slack refused is logged and passed.
func (s *Service) tailHosts(ctx, work context.Context) {
	_ = s.sup.FollowHosts(ctx, supervision.SurfaceSlack, s.catchUp, func(_ context.Context, ev supervision.AuditEvent) error {
		err := s.route(work, ev)
		switch {
		case err == nil:
		case agenterr.KindOf(err) == agenterr.Unavailable:
			return err
		default:
			s.log.Warn("slack: posting a host's event", "action", ev.Action, "session", ev.SessionID, "err", err)
		}
		return nil
	})
}

// route hands an audit event to the kind that posts it, for sessions that
// post at all (remote or hybrid).
func (s *Service) route(ctx context.Context, ev supervision.AuditEvent) error {
	if ev.SessionID == 0 {
		return nil
	}
	for _, k := range s.kinds {
		if !k.handles(ev.Action) {
			continue
		}
		ses, err := s.sup.Session(ctx, ev.SessionID)
		if err != nil {
			return err
		}
		if !posts(ses) {
			return nil
		}
		return k.onAudit(ctx, s, ev, ses)
	}
	return nil
}

// posts reports whether a session appears on Slack: only remote and
// hybrid sessions do; local ones stay on the terminal and the web page.
func posts(ses supervision.Session) bool {
	return ses.Mode == supervision.ModeRemote || ses.Mode == supervision.ModeHybrid
}

// catchUp gives each live remote session its thread and posts its pending
// request, when the service was not running as they came.
func (s *Service) catchUp(ctx context.Context) error {
	live, err := s.sup.Sessions(ctx, supervision.SessionFilter{Statuses: []string{supervision.SessionActive, supervision.SessionPaused}})
	if err != nil {
		return err
	}
	pending, err := s.sup.Pending(ctx)
	if err != nil {
		return err
	}
	for _, ses := range live {
		if !posts(ses) {
			continue
		}
		if _, err := s.thread(ctx, ses); err != nil {
			return err
		}
	}
	for _, p := range pending {
		if p.Mode != supervision.ModeRemote && p.Mode != supervision.ModeHybrid {
			continue
		}
		if _, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemRequest, p.ID); err == nil {
			continue
		}
		ses, err := s.sup.Session(ctx, p.SessionID)
		if err != nil {
			return err
		}
		if err := (approvalKind{}).post(ctx, s, ses, p.Request); err != nil {
			return err
		}
	}
	return nil
}

// channelOf is where a session posts.
func (s *Service) channelOf(ses supervision.Session) (string, error) {
	if ses.Channel != "" {
		return ses.Channel, nil
	}
	if s.conf.Channel != "" {
		return s.conf.Channel, nil
	}
	return "", fmt.Errorf("session %d has no Slack channel: set slack.channel in .agent/config.yaml (or the session's own)", ses.ID)
}

// keyedMutex serializes the handling of one item (a double click waits for
// the first click, then finds the request decided).
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*sync.Mutex{}
	}
	l := k.m[key]
	if l == nil {
		l = &sync.Mutex{}
		k.m[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Web API calls, all through the outbox.

func (s *Service) post(ctx context.Context, channel, threadTS, text string, blocks []slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	var ts string
	err := s.out.do(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

func (s *Service) update(ctx context.Context, channel, ts, text string, blocks []slack.Block) error {
	return s.out.do(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

func (s *Service) ephemeral(ctx context.Context, channel, threadTS, user, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	return s.out.do(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := s.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// upload sends a file into a thread: files.getUploadURLExternal, the
// upload, files.completeUploadExternal.
func (s *Service) upload(ctx context.Context, channel, threadTS, name, title, comment string, content []byte) error {
	return s.out.do(ctx, "files.uploadV2", func(ctx context.Context) error {
		_, err := s.api.UploadFileContext(ctx, slack.UploadFileParameters{Filename: name, Title: title, FileSize: len(content),
			Content: string(content), Channel: channel, ThreadTimestamp: threadTS, InitialComment: comment})
		return err
	})
}

// mentionApp is how a reply addresses the app.
func (s *Service) mentionApp() string { return "<@" + s.botID + ">" }

// stripMention removes the app's mention from a message's text.
func (s *Service) stripMention(text string) string {
	return strings.TrimSpace(strings.ReplaceAll(text, s.mentionApp(), ""))
}

// Limited counts the rate limits (429) met so far.
func (s *Service) Limited() int64 { return s.out.limited.Load() }
