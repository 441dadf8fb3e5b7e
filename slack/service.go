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
	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/review"
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
	// Queue bounds the calls of one Web API method waiting for Slack (0 =
	// DefaultQueue).
	Queue int
	// PingInterval is how long without a ping from Slack means a dead
	// connection (0 = slack-go's 30 s).
	PingInterval time.Duration
	// Backoff is the first wait before trying again what failed in a way
	// that is not a rate limit: a connection slack-go gave up on, a
	// message Slack refused (0 = 1 s; doubles up to a minute for the
	// connection, five for a message).
	Backoff time.Duration
	// Lease is how long this process keeps the right to post for the
	// workspace unless it renews it (0 = DefaultLease).
	Lease time.Duration
	// Review is the workspace's review service: the end of a session on a
	// task whose change waits in review says its size and checks (nil:
	// it does not).
	Review *review.Service
	// Console is where people open the console (config's console.url): a
	// change waiting for review is posted with a Review button to its page
	// there (no URL: the message names the command and the page).
	Console config.Console
}

// Service is a running Slack surface.
type Service struct {
	sup      *supervision.Service
	conf     Config
	opts     Options
	api      *slack.Client
	sm       *socketmode.Client
	calls    *calls
	log      *slog.Logger
	botID    string
	kinds    []kind
	inputs   *inputs
	locks    keyedMutex
	seen     *seen
	refusals *refusalLimiter
	holder   string
	wake     chan struct{} // the outbox has something new
	ready    chan struct{} // closed once the bot's identity is known
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
	// hold a lane (or a shutdown) for ever.
	apiOpts = append(apiOpts, slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	api := slack.New(opts.Tokens.Bot, apiOpts...)
	var smOpts []socketmode.Option
	if opts.PingInterval > 0 {
		smOpts = append(smOpts, socketmode.OptionPingInterval(opts.PingInterval))
	}
	s := &Service{sup: opts.Supervision, conf: opts.Config.withDefaults(), opts: opts, api: api, sm: socketmode.New(api, smOpts...),
		calls: newCalls(opts.Queue), log: log, inputs: newInputs(), seen: newSeen(), refusals: newRefusalLimiter(),
		holder: newHolder(), wake: make(chan struct{}, 1), ready: make(chan struct{})}
	s.kinds = []kind{sessionKind{}, approvalKind{}, promptKind{}, alertKind{}}
	return s, nil
}

// shutdownGrace is how long, once Run's context ends, the message being
// posted may take to finish and be recorded (so that a restart does not
// post it again).
const shutdownGrace = 10 * time.Second

// Run serves until ctx ends: once this process holds the workspace's lease
// (another `agentinfra slack` may have it: Run says so and waits), it
// connects, posts and answers. It returns early only for what retrying
// cannot fix: a token Slack refuses, a broken store.
func (s *Service) Run(ctx context.Context) error {
	auth, err := s.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack auth.test with the bot token: %w (check %s / the keyring's %q; docs/slack.md)", err, EnvBotToken, KeyringBotAccount)
	}
	s.botID = auth.UserID
	close(s.ready)
	s.log.Info("slack: authenticated", "team", auth.Team, "bot", auth.User, "bot_id", auth.UserID)
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
	s.calls.start(work)
	for {
		if err := s.awaitLease(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		err := s.lead(ctx, work)
		if errors.Is(err, errLeaseLost) {
			s.log.Warn("slack: stopped posting", "err", err)
			continue
		}
		s.releaseLease()
		return err
	}
}

// lead connects, posts and answers while this process holds the lease:
// until ctx ends (nil), the lease is lost (errLeaseLost) or something
// retrying cannot fix.
func (s *Service) lead(ctx, work context.Context) error {
	term, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, 2)
	tailed, delivered := make(chan error, 1), make(chan error, 1)
	go func() { errs <- s.connect(term) }()
	go func() { tailed <- s.tail(term, work) }()
	go func() { errs <- s.keepLease(term) }()
	go func() { delivered <- s.deliver(term, work) }()
	go s.tailHosts(term, work)
	go s.dispatch(term, work)
	s.wakeDeliver() // what a previous run left in the outbox
	var err error
	select {
	case err = <-errs:
	case err = <-tailed:
		tailed <- err
	case err = <-delivered:
		delivered <- err
	case <-term.Done():
	}
	stop()
	// Let a first start's catch-up record its cursor, and the outbox finish
	// the item in hand.
	for _, ended := range []chan error{tailed, delivered} {
		if e := <-ended; err == nil || errors.Is(err, context.Canceled) {
			err = e
		}
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
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

// dispatch takes what arrives over the socket: each envelope is acked at
// once (Slack wants the ack within 3 s, and resends what it did not see
// acked), then handled in its own goroutine, a redelivery not at all. The
// loop itself never waits for Slack or the store.
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
		case socketmode.EventTypeInteractive, socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand:
			s.ack(evt.Request)
			if !s.seen.first(deliveryKeys(evt.Request)...) {
				s.log.Info("slack: a redelivery, handled already", "envelope", evt.Request.EnvelopeID, "retry", evt.Request.RetryAttempt)
				continue
			}
			go s.handle(work, evt)
		}
	}
}

// handle is one envelope's work, off the socket's loop.
func (s *Service) handle(ctx context.Context, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeInteractive:
		if cb, ok := evt.Data.(slack.InteractionCallback); ok {
			s.onInteractive(ctx, cb)
		}
	case socketmode.EventTypeEventsAPI:
		s.onEventsAPI(ctx, evt)
	case socketmode.EventTypeSlashCommand:
		if cmd, ok := evt.Data.(slack.SlashCommand); ok {
			s.onSlashCommand(ctx, cmd)
		}
	}
}

func (s *Service) ack(req *socketmode.Request) {
	if req == nil {
		return
	}
	if err := s.sm.Ack(*req); err != nil {
		s.log.Warn("slack: ack failed", "envelope", req.EnvelopeID, "err", err)
	}
}

// tailHosts follows the audit logs of the workspace's hosts (the
// supervised agents' on Coder: supervision's FollowHosts) and routes their
// events as deliver routes the workspace's, so that a host's remote and
// hybrid sessions are posted and decided here as this machine's are. The
// host's log is its outbox: an event a host could not be asked about (it
// went away meanwhile) is not taken and comes again once it is back; one
// Slack refused is logged and passed.
func (s *Service) tailHosts(ctx, work context.Context) {
	_ = s.sup.FollowHosts(ctx, supervision.SurfaceSlack, s.catchUp, func(_ context.Context, ev supervision.AuditEvent) error {
		err := s.route(work, nil, ev)
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

// kindOf is the kind that posts about an audit action (nil: none).
func (s *Service) kindOf(action string) kind {
	for _, k := range s.kinds {
		if k.handles(action) {
			return k
		}
	}
	return nil
}

// route hands an outbox item's audit event to the kind that posts it, for
// sessions that post at all (remote or hybrid; a switch to local is said
// in the session's thread).
func (s *Service) route(ctx context.Context, d *delivery, ev supervision.AuditEvent) error {
	k := s.kindOf(ev.Action)
	if k == nil || ev.SessionID == 0 {
		return nil
	}
	ses, err := s.sup.Session(ctx, ev.SessionID)
	if errors.Is(err, supervision.ErrNotFound) {
		return nil // purged
	}
	if err != nil {
		return err
	}
	if !posts(ses) && ev.Action != actionSessionMode {
		return nil
	}
	return k.onAudit(ctx, s, d, ev, ses)
}

// posts reports whether a session appears on Slack: only remote and
// hybrid sessions do; local ones stay on the terminal and the web page.
func posts(ses supervision.Session) bool {
	return ses.Mode == supervision.ModeRemote || ses.Mode == supervision.ModeHybrid
}

// catchUp gives each live remote session (and each interrupted one that
// can be resumed) its thread and posts what waits in it (requests,
// prompts, stall alerts), when the service was not running as they came:
// on its first start.
func (s *Service) catchUp(ctx context.Context) error {
	live, err := s.sup.Sessions(ctx, supervision.SessionFilter{Statuses: []string{supervision.SessionActive, supervision.SessionPaused, supervision.SessionInterrupted}})
	if err != nil {
		return err
	}
	in, err := s.sup.Inbox(ctx)
	if err != nil {
		return err
	}
	for _, ses := range live {
		// An interrupted run waits for a person's Resume (its thread's
		// button); one that cannot be resumed is history.
		if ses.Status == supervision.SessionInterrupted && !supervision.Resumable(ses) {
			continue
		}
		if posts(ses) {
			if err := s.catchUpSession(ctx, ses, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// catchUpSession gives a session its thread and posts what of in waits in
// it and is not posted yet.
func (s *Service) catchUpSession(ctx context.Context, ses supervision.Session, in supervision.Inbox) error {
	if _, err := s.thread(ctx, ses); err != nil {
		return err
	}
	for _, p := range in.Requests {
		if p.SessionID == ses.ID {
			if err := (approvalKind{}).post(ctx, s, nil, ses, p.Request); err != nil {
				return err
			}
		}
	}
	// A first start cut short (a crash) posted requests that may have been
	// decided since: their messages get the outcome (settle leaves alone
	// what was never posted or is final already).
	reqs, err := s.sup.Requests(ctx, ses.ID)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		if r.Status != supervision.StatusPending {
			if err := (approvalKind{}).settle(ctx, s, ses, r); err != nil {
				return err
			}
		}
	}
	for _, p := range in.Prompts {
		if p.SessionID == ses.ID {
			text, blocks := promptRender(s.conf, ses, p.Prompt)("")
			if _, _, err := s.postItem(ctx, ses, supervision.ItemPrompt, p.ID, text, blocks); err != nil {
				return err
			}
		}
	}
	for _, a := range in.Alerts {
		if a.SessionID == ses.ID {
			text, blocks := alertRender(s.conf, ses, a.Alert)("")
			if _, _, err := s.postItem(ctx, ses, supervision.ItemAlert, a.ID, text, blocks); err != nil {
				return err
			}
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

// Web API calls, each through its method's lane. Every text is ours, with
// any agent text in it made inert; fitText keeps it within Slack's limit.

func (s *Service) post(ctx context.Context, channel, threadTS, text string, blocks []slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(fitText(text, maxMessageText), false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	var ts string
	err := s.calls.do(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

func (s *Service) update(ctx context.Context, channel, ts, text string, blocks []slack.Block) error {
	return s.calls.do(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(fitText(text, maxMessageText), false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

func (s *Service) ephemeral(ctx context.Context, channel, threadTS, user, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(fitText(text, maxMessageText), false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	return s.calls.do(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := s.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// respond answers a slash command, to its caller only: through the
// command's response_url (valid 30 minutes, wherever it was typed), else
// an ephemeral in its channel.
func (s *Service) respond(ctx context.Context, cmd slack.SlashCommand, text string) error {
	text = fitText(text, maxMessageText)
	if cmd.ResponseURL == "" {
		return s.ephemeral(ctx, cmd.ChannelID, "", cmd.UserID, text)
	}
	return s.calls.do(ctx, "response_url", func(ctx context.Context) error {
		return slack.PostWebhookCustomHTTPContext(ctx, cmd.ResponseURL, s.httpClient(), &slack.WebhookMessage{ResponseType: "ephemeral", Text: text})
	})
}

func (s *Service) httpClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// upload sends a file into a thread: files.getUploadURLExternal, the
// upload, files.completeUploadExternal.
func (s *Service) upload(ctx context.Context, channel, threadTS, name, title, comment string, content []byte) error {
	return s.calls.do(ctx, "files.uploadV2", func(ctx context.Context) error {
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
func (s *Service) Limited() int64 { return s.calls.limited.Load() }
