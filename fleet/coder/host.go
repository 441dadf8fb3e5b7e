package coder

// Supervised agents on Coder (issue 34; docs/coder.md): an agent created
// with approval mode ask runs under `agentinfra agent host` inside its
// workspace, a workspace app (slug coder.host_app_slug, default
// DefaultHostAppSlug) that runs the agent CLI through agentinfra's own
// bridges, policy and store and serves the workspace's supervision service
// and its agent's runs (package supervision/host). This machine reaches it
// through Coder's app proxy, with the person's Coder session token for
// Coder and the host's own token for the host, made at create and given to
// the template as a parameter (never in a URL).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/supervision/host"
	"github.com/agentinfra/agentinfra/workspace"
)

// DefaultHostAppSlug is the slug of the workspace app that serves
// `agentinfra agent host`.
const DefaultHostAppSlug = "agentinfra"

// The parameters a template of supervised agents has (docs/coder.md):
// the host's token, and whose the sessions are (the person who created
// the agent: they and the workspace's operators decide its requests). The
// spec goes in the prompt parameter, as for every agent; the CLI in
// HostCLIParameter when the template has one.
const (
	HostTokenParameter = "agentinfra_host_token"
	HostOwnerParameter = "agentinfra_owner"
	HostCLIParameter   = "agentinfra_cli"
)

// hostRecord is what agent.json keeps of a supervised agent.
type hostRecord struct {
	// Number is the host's number on this machine: its items' IDs are
	// Number*supervision.HostIDBase + their IDs on the host. Never reused.
	Number int64 `json:"number"`
	// Owner is whose the agent's sessions are.
	Owner string `json:"owner"`
	// App is where the host app was last seen (nil before the workspace
	// was up), so that reaching it asks Coder nothing.
	App *App `json:"app,omitempty"`
	// Published is the last commit of the agent's last change pushed from
	// its workspace: the next change starts there (backend_review.go).
	Published string `json:"published,omitempty"`
}

// hostToken is the file of a supervised agent's host token (0600), in its
// folder: archived with it when the agent is deleted.
func (f files) hostToken(name string) string { return filepath.Join(f.agentDir(name), "host-token") }

// hostNumbers is the file of the last host number given.
func (f files) hostNumbers() string { return filepath.Join(f.root, "host-numbers") }

// newHostToken is a random 256-bit token.
func newHostToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate the host's token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// nextHostNumber gives the next host number (1, 2, ...), never one given
// before, under the numbers' lock.
func (f files) nextHostNumber(ctx context.Context) (int64, error) {
	var n int64
	err := statefile.WithLock(ctx, filepath.Join(f.root, "locks", "host-numbers.lock"), func() error {
		var last struct {
			Last int64 `json:"last"`
		}
		if _, err := statefile.ReadJSON(f.hostNumbers(), &last); err != nil {
			return err
		}
		n = last.Last + 1
		last.Last = n
		return statefile.WriteJSON(f.hostNumbers(), last)
	})
	return n, err
}

// writeHostToken keeps a host's token, readable by its owner only.
func (f files) writeHostToken(name, token string) error {
	p := f.hostToken(name)
	if err := os.WriteFile(p+".tmp", []byte(token+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

func (f files) readHostToken(name string) (string, error) {
	b, err := os.ReadFile(f.hostToken(name))
	if err != nil {
		return "", fmt.Errorf("agent %s's host token: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// records lists the agents' records, sorted by name.
func (f files) records() ([]agentRecord, error) {
	entries, err := os.ReadDir(filepath.Join(f.root, "agents"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []agentRecord
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if r, err := f.loadRecord(e.Name(), ""); err == nil && r != nil {
			out = append(out, *r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// HostAddress is how this machine reaches a supervised agent's host:
// through Coder's app proxy, with the person's session token (Header) and
// the host's token. A host whose workspace's app is not up yet has no URL
// but Locate, which finds it once it is.
type HostAddress struct {
	Number     int64
	Name       string
	URL        string
	Token      string
	Header     http.Header
	HTTPClient *http.Client
	Locate     func(context.Context) (host.Location, error)
}

// Hosts lists where the supervised agents' hosts are, from agentinfra's
// records: Coder is asked nothing when each record knows its host app (it
// does once the agent was seen up), else once for the list of workspaces.
// An agent whose workspace has no app yet (not up, or a template without
// it) is listed with Locate: it counts as unreachable, and is reached once
// the app is up; one whose token is gone is a warning.
func (b *Backend) Hosts(ctx context.Context) ([]HostAddress, []string, error) {
	recs, err := b.files.records()
	if err != nil {
		return nil, nil, err
	}
	var out []HostAddress
	var warnings []string
	var listed map[string]Workspace // by lower-case name, once asked
	for _, r := range recs {
		if r.Host == nil {
			continue
		}
		app := r.Host.App
		if app == nil {
			if listed == nil {
				resp, err := b.client.ListWorkspaces(ctx, "")
				if err != nil {
					return out, warnings, fleetError(err)
				}
				listed = map[string]Workspace{}
				for _, ws := range resp.Workspaces {
					listed[strings.ToLower(ws.Name)] = ws
				}
			}
			ws, ok := listed[strings.ToLower(r.Name)]
			found, _, hasApp := FindApp(ws, b.cfg.HostAppSlug)
			if !ok || !hasApp {
				token, err := b.files.readHostToken(r.Name)
				if err != nil {
					warnings = append(warnings, err.Error())
					continue
				}
				out = append(out, HostAddress{Number: r.Host.Number, Name: r.Name, Token: token, Locate: b.locateHost(r.Name)})
				continue
			}
			app = &found
		}
		a, err := b.hostAddress(ctx, r.Name, r.Host.Number, *app)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		out = append(out, a)
	}
	return out, warnings, nil
}

// locateHost finds the app of agent name's host, once its workspace is up
// with it.
func (b *Backend) locateHost(name string) func(context.Context) (host.Location, error) {
	return func(ctx context.Context) (host.Location, error) {
		ws, err := b.client.WorkspaceByOwnerAndName(ctx, name)
		if err != nil {
			return host.Location{}, fleetError(err)
		}
		app, _, ok := FindApp(ws, b.cfg.HostAppSlug)
		if !ok {
			return host.Location{}, fmt.Errorf("workspace %s has no app %q yet (not up, or its template lacks it: docs/coder.md)", name, b.cfg.HostAppSlug)
		}
		root, hdr, hc, err := b.client.AppRoot(ctx, app)
		if err != nil {
			return host.Location{}, fleetError(err)
		}
		return host.Location{URL: root, Header: hdr, HTTPClient: hc}, nil
	}
}

func (b *Backend) hostAddress(ctx context.Context, name string, number int64, app App) (HostAddress, error) {
	token, err := b.files.readHostToken(name)
	if err != nil {
		return HostAddress{}, err
	}
	root, hdr, hc, err := b.client.AppRoot(ctx, app)
	if err != nil {
		return HostAddress{}, fleetError(err)
	}
	return HostAddress{Number: number, Name: name, URL: root, Token: token, Header: hdr, HTTPClient: hc}, nil
}

// hostClient is the client of a supervised agent's host in workspace ws
// (up), for the agent API.
func (b *Backend) hostClient(ctx context.Context, rec *agentRecord, ws Workspace) (*host.Client, error) {
	return b.hostClientFor(ctx, rec, ws, appStatusTimeout)
}

// hostClientFor is hostClient whose calls are bounded by timeout.
func (b *Backend) hostClientFor(ctx context.Context, rec *agentRecord, ws Workspace, timeout time.Duration) (*host.Client, error) {
	app, _, ok := FindApp(ws, b.cfg.HostAppSlug)
	if !ok {
		return nil, &agenterr.Error{Kind: agenterr.Unavailable, Reason: fmt.Sprintf(
			"agent %s is supervised but workspace %s has no app %q for agentinfra's host: the template needs it (docs/coder.md), or set coder.host_app_slug in .agent/config.yaml", rec.Name, ws.Name, b.cfg.HostAppSlug)}
	}
	a, err := b.hostAddress(ctx, rec.Name, rec.Host.Number, app)
	if err != nil {
		return nil, err
	}
	return host.New(host.Options{Name: a.Name, URL: a.URL, Token: a.Token, Header: a.Header, HTTPClient: a.HTTPClient, Timeout: timeout})
}

// HasSupervised reports whether the workspace has a supervised agent on
// Coder (a record of one: reading it asks Coder nothing), so that who
// merges their hosts' items opens the backend only then.
func HasSupervised(ws *workspace.Workspace) bool {
	recs, _ := files{root: filepath.Join(ws.AgentDir(), "fleet", "coder")}.records()
	for _, r := range recs {
		if r.Host != nil {
			return true
		}
	}
	return false
}
