package host_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

// The figures of issue 34 (docs/performance.md): a decision made on the
// person's machine until the remote CLI has it, and the inbox of fifty
// workspaces, each through the fake Coder's app proxy on loopback.

// BenchmarkDecidedLocallyUntilTheRemoteCLIHasIt: the person's service
// decides a request of the workspace's (through the proxy: the host's
// compare-and-set); what waits for it is another process's handle of the
// workspace's store, as the run's bridge is, with the store's own polling.
// Reports p50 and p95 in ms.
func BenchmarkDecidedLocallyUntilTheRemoteCLIHasIt(b *testing.B) {
	srv := codertest.New(b)
	papi := newMachine(b, supervision.Options{})
	papi.serve(b, srv, "papi")
	bridge, err := store.OpenWorkspace(context.Background(), papi.ws, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bridge.Close() })
	me := local(b, srv, supervision.Options{}, "papi")
	ses := papi.live(b, "papi", store.ModeLocal)
	ana := supervision.Person("ana", supervision.SurfaceTerminal)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		r := papi.ask(b, ses, fmt.Sprintf("go test ./pkg%d/...", i))
		answered := make(chan error, 1)
		go func() {
			got, err := bridge.WaitDecision(context.Background(), r.ID)
			if err == nil && got.Status != store.StatusApproved {
				err = fmt.Errorf("request %d is %s", r.ID, got.Status)
			}
			answered <- err
		}()
		b.StartTimer()
		t0 := time.Now()
		if _, err := me.svc.Decide(context.Background(), ana, supervision.Decision{Request: supervision.HostIDBase + r.ID, Approve: true}); err != nil {
			b.Fatal(err)
		}
		if err := <-answered; err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*95)/100]), "p95-ms")
}

// BenchmarkInboxOfFiftyWorkspaces: `inbox` of a person with fifty
// supervised workspaces, one request waiting in each, all asked through
// the proxy at once.
func BenchmarkInboxOfFiftyWorkspaces(b *testing.B) {
	srv := codertest.New(b)
	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("ws-%02d", i)
		m := newMachine(b, supervision.Options{})
		m.serve(b, srv, names[i])
		m.ask(b, m.live(b, names[i], store.ModeLocal), "go test ./...")
	}
	me := local(b, srv, supervision.Options{}, names...)
	b.ResetTimer()
	for range b.N {
		in, err := me.svc.Inbox(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if len(in.Requests) != len(names) {
			b.Fatalf("the inbox lists %d requests of %d workspaces", len(in.Requests), len(names))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
