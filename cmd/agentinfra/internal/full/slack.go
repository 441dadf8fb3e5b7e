package full

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/slack"
)

// envSlackAPIURL points the Slack client at another Web API base URL (a
// fake Slack in tests, a proxy).
const envSlackAPIURL = "AGENTINFRA_SLACK_API_URL"

// SlackOptions is what `slack` runs with.
type SlackOptions struct {
	IO     *cli.IOStreams
	Env    func(context.Context) (*supervisionEnv, error)
	Getenv func(string) string

	Channel string
	Verbose bool
}

func NewCmdSlack(f *Factory, runF func(context.Context, *SlackOptions) error) *cobra.Command {
	o := &SlackOptions{IO: f.IO, Env: f.supervision, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "slack",
		Short: "Serve the Slack surface: a thread per remote session, approvals by button",
		Long: `Connects to Slack over Socket Mode (no public URL needed) and keeps running:
each supervised session whose mode is remote or hybrid gets a thread in the
channel (slack.channel in .agent/config.yaml, or the session's own): its start,
each approval request with approve / reject buttons (the diff inline up to
slack.inline_diff_lines lines, else attached as a file), the end of the run.
A reject reason is asked as a threaded reply mentioning the app. Local sessions
post nothing.

Who may act: the operators (supervision.operators) and, for its own requests, a
session's owner; Slack members are linked to agentinfra users under slack.users.
Anyone else gets an ephemeral "not allowed", and the audit log records it.

Tokens: $SLACK_APP_TOKEN (xapp-…, connections:write) and $SLACK_BOT_TOKEN
(xoxb-…), else the OS keyring (agentinfra slack login). Setting up the Slack
app (its manifest and scopes): docs/slack.md.

It reconnects by itself when the connection drops, honours Slack's rate limits,
keeps in the store what Slack did not take yet, and after a restart posts what
happened while it was down, never twice. One process posts for a workspace: a
second 'agentinfra slack' says so and waits until the first stops.

What an agent writes (a command, a title, a diff) is shown as text: it cannot
mention anyone, link anywhere or close the message's code blocks (docs/slack.md,
"Threat model").`,
		Example: `  SLACK_APP_TOKEN=xapp-… SLACK_BOT_TOKEN=xoxb-… agentinfra slack
  agentinfra slack --channel C0123456789
  agentinfra slack login
  agentinfra slack channel 12 C0987654321`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return slackRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Channel, "channel", "", "the channel of sessions that name none (default: slack.channel of .agent/config.yaml)")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "log every message sent")
	cmd.AddCommand(newCmdSlackLogin(f), newCmdSlackChannel(f))
	return cmd
}

func slackRun(ctx context.Context, o *SlackOptions) error {
	tokens, err := slack.TokenSource{Getenv: o.Getenv}.Load(ctx)
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	conf, err := slack.LoadConfig(env.ws)
	if err != nil {
		return err
	}
	if o.Channel != "" {
		conf.Channel = o.Channel
	}
	wc, err := env.ws.Config()
	if err != nil {
		return err
	}
	console, err := wc.Console()
	if err != nil {
		return err
	}
	if conf.Channel == "" {
		fmt.Fprintln(o.IO.ErrOut, "warning: no slack.channel in .agent/config.yaml and no --channel: only sessions that name their own channel will post")
	}
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: level}))
	svc, err := slack.New(slack.Options{Supervision: env.svc, Config: conf, Tokens: tokens, APIURL: o.Getenv(envSlackAPIURL), Getenv: o.Getenv, Log: log,
		Review: review.New(env.ws, nil), Console: console})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "agentinfra slack: serving %s (tokens from the %s / %s); Ctrl-C stops\n", env.ws.Root, tokens.AppFrom, tokens.BotFrom)
	return svc.Run(ctx)
}

func newCmdSlackLogin(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "login",
		Short: "Store the Slack tokens in the OS keyring",
		Long: `Reads the app-level token (xapp-…) and the bot token (xoxb-…), one a line, from
standard input (from a terminal, without showing them) and stores them in the OS keyring (service "agentinfra-slack"),
where 'agentinfra slack' finds them when $SLACK_APP_TOKEN / $SLACK_BOT_TOKEN are
not set. Without a desktop session the keyring may not answer: the call gives
up after a few seconds; use the environment variables there.`,
		Example: `  agentinfra slack login
  printf '%s\n%s\n' "$APP" "$BOT" | agentinfra slack login`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			toks, err := readTokens(f.IO)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(toks[0], "xapp-") || !strings.HasPrefix(toks[1], "xoxb-") {
				return cli.UsageErrorf("the first token must start with xapp- (app-level, connections:write) and the second with xoxb- (the bot's)")
			}
			for i, account := range []string{slack.KeyringAppAccount, slack.KeyringBotAccount} {
				if err := slack.KeyringSet(cmd.Context(), account, toks[i], 0); err != nil {
					return fmt.Errorf("store the %s in the OS keyring: %w", account, err)
				}
			}
			fmt.Fprintln(f.IO.Out, "Stored both tokens in the OS keyring (service agentinfra-slack).")
			return nil
		},
	}
}

// readTokens reads the app-level token and the bot token, one a line: from
// a terminal without echo (a token on the screen is in the scrollback and
// in a screen share), else from the pipe.
func readTokens(io *cli.IOStreams) ([2]string, error) {
	var toks [2]string
	what := [2]string{"app-level token (xapp-…)", "bot token (xoxb-…)"}
	if file, ok := io.In.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		for i := range toks {
			fmt.Fprintf(io.ErrOut, "%s (not shown): ", what[i])
			b, err := term.ReadPassword(int(file.Fd()))
			fmt.Fprintln(io.ErrOut)
			if err != nil {
				return toks, fmt.Errorf("read the %s from the terminal: %w", what[i], err)
			}
			toks[i] = strings.TrimSpace(string(b))
		}
		return toks, nil
	}
	in := bufio.NewScanner(io.In)
	for i := range toks {
		fmt.Fprintf(io.ErrOut, "%s: ", what[i])
		if !in.Scan() {
			return toks, cli.UsageErrorf("no %s on standard input", what[i])
		}
		toks[i] = strings.TrimSpace(in.Text())
	}
	return toks, nil
}

func newCmdSlackChannel(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "channel SESSION CHANNEL",
		Short: "Post a session in another channel than the config's",
		Long: `Sets the Slack channel of one session (a channel ID such as C0123456789; "" goes
back to slack.channel). It takes effect for the session's thread when it starts;
a thread already started stays where it is. Only the session's owner or an
operator (supervision.operators) may.`,
		Example: `  agentinfra slack channel 12 C0987654321`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("session", args[0])
			if err != nil {
				return err
			}
			env, err := f.supervision(cmd.Context())
			if err != nil {
				return err
			}
			defer env.Close()
			if err := env.svc.SetChannel(cmd.Context(), env.user, id, args[1]); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "Session %d posts in %s.\n", id, args[1])
			return nil
		},
	}
}
