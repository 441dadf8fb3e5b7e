#!/usr/bin/env bash
# The Coder fleet's figure (issue 13): `agentinfra agent list --backend coder`
# of 50 Coder agents, whole process, against the fake Coder server
# (fleet/coder/codertest/fakecoder) on loopback: one list call to Coder, not one per agent.
# Measured with and without --json, output to a pipe, with --no-metadata
# (the list itself) and with the workspaces' Coder agent metadata (one
# watch-metadata stream per agent, in parallel).
#
# Each figure is measured ROUNDS times (default 3) and reported as min and
# mean over the rounds, with the load average: on a shared machine the min
# is the closest to a quiet run.
#
# Usage: scripts/bench-coder-fleet.sh
#   needs go, curl, jq and hyperfine >= 1.15
#   ROUNDS=N      rounds per figure (default 3)
#   BENCH_RUNS=N  hyperfine runs per round (default 30)
#   BENCH_TAGS=T  build tags (default netgo,osusergo, the README's static build)
#   AGENTS=N      Coder workspaces of the user (default 50)
set -euo pipefail
rounds="${ROUNDS:-3}"
runs="${BENCH_RUNS:-30}"
agents="${AGENTS:-50}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
fake_pid=""
cleanup() {
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
for t in go curl jq hyperfine; do command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 1; }; done

tags="${BENCH_TAGS-netgo,osusergo}"
bin="$work/agentinfra"
(cd "$repo" && go build -tags "$tags" -o "$work/" ./cmd/agentinfra ./cmd/agentinfra/agentinfra-full && go build -o "$work/fakecoder" ./fleet/coder/codertest/fakecoder)

# The fake Coder: $agents ready workspaces of the token's user (plus two of
# someone else's, which owner:me must leave out), with agent metadata.
"$work/fakecoder" --addr 127.0.0.1:0 --token bench-token --templates 2 --workspaces "$agents" --agent-metadata \
  >"$work/fake.env" 2>"$work/fake.log" &
fake_pid=$!
for _ in $(seq 1 100); do
  grep -q '^CODER_SESSION_TOKEN=' "$work/fake.env" 2>/dev/null && break
  kill -0 "$fake_pid" 2>/dev/null || { cat "$work/fake.log" >&2; exit 1; }
  sleep 0.1
done
set -a
# shellcheck disable=SC1091
. "$work/fake.env"
set +a
[ -n "${CODER_URL:-}" ] || { echo "fakecoder printed no CODER_URL" >&2; cat "$work/fake.log" >&2; exit 1; }

mine="$(curl -fsS -H "Coder-Session-Token: $CODER_SESSION_TOKEN" "$CODER_URL/api/v2/workspaces?q=owner:me" | jq .count)"
[ "$mine" = "$agents" ] || { echo "the fake lists $mine workspaces for owner:me, want $agents" >&2; exit 1; }

mkdir -p "$work/ws"
cd "$work/ws"
"$bin" init >/dev/null
listed="$("$bin" agent list --backend coder --no-metadata --json | jq .total_count)"
[ "$listed" = "$agents" ] || { echo "agent list --backend coder lists $listed agents, want $agents" >&2; exit 1; }

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a; }
# stats: min and mean of numbers on stdin
stats() { sort -g | awk '{s+=$1; a[NR]=$1} END {printf "min %.2f, mean %.2f (of %d rounds)", a[1], s/NR, NR}'; }

echo "== Coder fleet figure; $(go version | cut -d' ' -f3), -tags '$tags'; $(nproc) cores; load before: $(load)"
for cmd in "agent list --backend coder --no-metadata" "agent list --backend coder --no-metadata --json" \
  "agent list --backend coder" "agent list --backend coder --json"; do
  means=() fastest=()
  for _ in $(seq 1 "$rounds"); do
    hyperfine -N --output=pipe --warmup 3 --runs "$runs" --export-json "$work/h.json" "$bin $cmd" >/dev/null 2>&1
    means+=("$(jq '.results[0].mean * 1000' "$work/h.json")")
    fastest+=("$(jq '.results[0].min * 1000' "$work/h.json")")
  done
  echo "agentinfra $cmd, $agents Coder agents (fake Coder on loopback), whole process, mean of $runs runs per round, ms: $(printf '%s\n' "${means[@]}" | stats); fastest run $(printf '%s\n' "${fastest[@]}" | sort -g | head -1 | xargs printf '%.2f')  [load $(load)]"
done
