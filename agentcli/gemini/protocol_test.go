package gemini

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// peerEnv makes the test binary an ACP agent that answers initialize with
// the protocol version it holds (see acpPeer).
const peerEnv = "GEMINI_TEST_ACP_PEER"

func TestMain(m *testing.M) {
	if v := os.Getenv(peerEnv); v != "" {
		acpPeer(v)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// acpPeer is a scripted ACP agent on stdin/stdout, as gemini --acp is one:
// it answers initialize with protocol version v (and gemini-cli 0.70.0 as
// its name), a new session, and a prompt with the turn's end, until its
// input ends.
func acpPeer(v string) {
	version, _ := strconv.Atoi(v)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		var result string
		switch msg.Method {
		case "initialize":
			result = fmt.Sprintf(`{"protocolVersion":%d,"agentCapabilities":{},"agentInfo":{"name":"gemini-cli","version":"0.70.0"},"authMethods":[]}`, version)
		case "session/new":
			result = `{"sessionId":"peer-1"}`
		case "session/prompt":
			result = `{"stopReason":"end_turn"}`
		default:
			result = `{}`
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", msg.ID, result)
	}
}

// startPeer starts a supervised gemini run whose CLI is the scripted ACP
// agent answering protocol version v, with a session in a real store.
func startPeer(t *testing.T, v int) (bridge.Bridge, error) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dir := t.TempDir()
	ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: runner.CLIGemini})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	req := bridge.Request{CLI: runner.CLIGemini, Binary: exe, Model: "gemini-test", Prompt: "hello", Dir: dir,
		Env: []string{peerEnv + "=" + strconv.Itoa(v)}}
	return bridge.Start(ctx, StartBridge, req, bridge.Options{Store: st, Session: ses})
}

// Issue 33: ACP published a v2 draft. The bridge sends the version it
// speaks (1); an agent that answers another one is refused, by name and
// version, with what to do — not run in a protocol the bridge misreads.
// The same scripted agent answering 1 runs its turn to the end.
func TestTheACPBridgeRefusesAProtocolVersionItDoesNotSpeak(t *testing.T) {
	b, err := startPeer(t, 2)
	if err == nil {
		b.Close()
		b.Wait()
		t.Fatal("an agent speaking ACP v2 was run")
	}
	if !errors.Is(err, bridge.ErrProtocol) || agenterr.KindOf(err) != agenterr.Unavailable {
		t.Errorf("the refusal is not a protocol error of the kind unavailable: %v (kind %v)", err, agenterr.KindOf(err))
	}
	for _, want := range []string{"gemini 0.70.0 speaks ACP protocol version 2", "speaks ACP version 1 only", "agentinfra doctor", `"protocolVersion":2`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}

	b, err = startPeer(t, int(ProtocolVersion))
	if err != nil {
		t.Fatalf("the same agent speaking ACP v%d: %v", ProtocolVersion, err)
	}
	<-b.TurnEnded()
	b.Close()
	if res, err := b.Wait(); err != nil || res.SessionID != "peer-1" {
		t.Fatalf("the v%d run: %+v %v", ProtocolVersion, res, err)
	}
}
