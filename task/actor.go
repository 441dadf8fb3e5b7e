package task

import (
	"context"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
)

// Actor is who makes a change to a task, as the task README's status log
// and the change's event record it: an agent ("@papi", an @mention), a
// person (their user name, "alice"), or agentinfra acting by a rule
// (ActorPolicy, ActorWatchdog, ActorAgentinfra). "" is unknown (a change
// whose author nothing names): the log line then names nobody.
type Actor string

// The actors that are agentinfra itself.
const (
	// ActorPolicy decided by the workspace's policy (an auto-approval).
	ActorPolicy Actor = "policy"
	// ActorWatchdog acted on a stalled run.
	ActorWatchdog Actor = "watchdog"
	// ActorAgentinfra is agentinfra's own bookkeeping: a run whose
	// supervisor died, recorded by the next command that found it.
	ActorAgentinfra Actor = "agentinfra"
)

// AgentActor is the actor of an agent name ("papi" or "@papi" → "@papi");
// a name that is no @mention is kept as written.
func AgentActor(name string) Actor {
	if m, err := matrix.NormalizeMention(name); err == nil {
		return Actor(m)
	}
	return Actor(strings.TrimSpace(name))
}

// Handle is the actor as agentinfra writes every actor, a person as an
// agent: @name (a person's "ana" is "@ana", as the supervision surfaces
// write people); agentinfra's own actors (policy, watchdog, agentinfra)
// as they are; "" stays "".
func (a Actor) Handle() string {
	s := strings.TrimSpace(string(a))
	if s == "" || strings.HasPrefix(s, "@") || a.Kind() == "system" || strings.ContainsAny(s, ": ") {
		return s
	}
	return "@" + s
}

// IsAgent reports whether a names an agent (an @mention).
func (a Actor) IsAgent() bool { return strings.HasPrefix(string(a), "@") }

// Kind says what a is: "agent", "system" (policy, watchdog, agentinfra),
// "person", or "" when unknown.
func (a Actor) Kind() string {
	switch {
	case a == "":
		return ""
	case a.IsAgent():
		return "agent"
	case a == ActorPolicy || a == ActorWatchdog || a == ActorAgentinfra:
		return "system"
	}
	return "person"
}

// ActorFromEnv is the actor of a command run by a process with this
// environment: the agent a fleet run names in AGENTINFRA_AGENT (the
// commands an agent runs), else $AGENTINFRA_ACTOR, else the person's user
// name ($USER, $LOGNAME); "" when none is set.
func ActorFromEnv(getenv func(string) string) Actor {
	if getenv == nil {
		return ""
	}
	if a := strings.TrimSpace(getenv(EnvAgent)); a != "" {
		return AgentActor(a)
	}
	for _, k := range []string{"AGENTINFRA_ACTOR", "USER", "LOGNAME"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return Actor(v)
		}
	}
	return ""
}

// EnvAgent names the agent in the environment of its runs (fleet runs set
// it), so that an agentinfra command the agent runs knows who asks.
const EnvAgent = "AGENTINFRA_AGENT"

type actorKey struct{}

// WithActor returns ctx carrying who makes the changes done with it: the
// adapters set it once per command or request, and the task writes that
// take no actor of their own (create, update, scaffold, archive) record it.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor WithActor put in ctx ("" when none).
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}

// or returns a, else the actor of ctx.
func (a Actor) or(ctx context.Context) Actor {
	if a != "" {
		return a
	}
	return ActorFrom(ctx)
}
