#!/usr/bin/env bash
# The fleet's figures (issue 12's targets):
#   agent list with 50 agents (no metadata), whole process   < 20 ms
#   start → status busy visible (Go benchmark)                < 200 ms
#   MCP list_agents p50 over 50 agents (Go benchmark)         (reported)
#
# The 50 agents are real: `agentinfra agent create` makes each one's git
# worktree and runs its spec with the stub agent (internal/testing/agentstub) installed
# as gemini, until all 50 are idle. Every figure is measured ROUNDS times
# (default 5) and reported as min and median over the rounds, with the load
# average: on a shared machine the min is the closest to a quiet run.
#
# Usage: scripts/bench-fleet.sh
#   needs go, git, jq and hyperfine >= 1.15
#   ROUNDS=N     rounds per figure (default 5)
#   BENCH_RUNS=N hyperfine runs per round (default 50)
#   BENCH_TAGS=T build tags (default netgo,osusergo, the README's static build)
set -euo pipefail
rounds="${ROUNDS:-5}"
runs="${BENCH_RUNS:-50}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
ws="$work/ws"
cleanup() { rm -rf "$work"; } # the worktrees are in $work too
trap cleanup EXIT
bin="$work/agentinfra"
for t in go git jq hyperfine; do command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 1; }; done

tags="${BENCH_TAGS-netgo,osusergo}"
(cd "$repo" && go build -tags "$tags" -o "$work/" ./cmd/agentinfra ./cmd/agentinfra/agentinfra-full) # agentinfra hands agent commands to agentinfra-full
mkdir -p "$work/tools/node_modules/.bin"
(cd "$repo" && go build -o "$work/tools/node_modules/.bin/gemini" ./internal/testing/agentstub/stub)

mkdir -p "$ws"
cd "$ws"
git init -q -b main
git config user.email bench@example.com
git config user.name bench
"$bin" init >/dev/null
git add -A
git commit -q -m init
export AGENTINFRA_TOOLS="$work/tools" STUB_MODE=ok
for i in $(seq 1 50); do "$bin" agent create "agent-$i" --spec "benchmark agent $i" >/dev/null; done
for _ in $(seq 1 600); do
  idle="$("$bin" agent list --status idle --json | jq .total_count)"
  [ "$idle" = 50 ] && break
  sleep 0.2
done
[ "$idle" = 50 ] || { echo "only $idle of 50 agents became idle" >&2; exit 1; }

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a; }
# stats: min and median of numbers on stdin
stats() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "min %.2f, median %.2f (of %d rounds)", a[1], m, NR}'; }

echo "== fleet figures; $(go version | cut -d' ' -f3), -tags '$tags'; $(nproc) cores; load before: $(load)"
for cmd in "agent list" "agent list --json"; do
  vals=() fastest=()
  for _ in $(seq 1 "$rounds"); do
    hyperfine -N --output=pipe --warmup 5 --runs "$runs" --export-json "$work/h.json" "$bin $cmd" >/dev/null 2>&1
    vals+=("$(jq '.results[0].median * 1000' "$work/h.json")")
    fastest+=("$(jq '.results[0].min * 1000' "$work/h.json")")
  done
  echo "agentinfra $cmd, 50 agents, whole process, median of $runs runs per round, ms: $(printf '%s\n' "${vals[@]}" | stats); fastest run $(printf '%s\n' "${fastest[@]}" | sort -g | head -1 | xargs printf '%.2f')  [load $(load)]"
done

cd "$repo"
vals=()
for _ in $(seq 1 "$rounds"); do
  vals+=("$(go test ./fleet -run '^$' -bench 'StartToBusyVisible' -benchtime 20x -count 1 | awk '/ns\/op/ {print $3/1e6}')")
done
echo "start → busy visible (fleet BenchmarkStartToBusyVisible), ms: $(printf '%s\n' "${vals[@]}" | stats)  [load $(load)]"

for b in MCPListAgents MCPListAgentsStdio; do
  vals=()
  for _ in $(seq 1 "$rounds"); do
    vals+=("$(go test ./mcpserver -run '^$' -bench "^Benchmark$b\$" -benchtime 200x -count 1 | awk '/p50-ms/ {for (i=1;i<=NF;i++) if ($(i+1)=="p50-ms") print $i}')")
  done
  echo "MCP list_agents p50 over 50 agents (mcpserver Benchmark$b), ms: $(printf '%s\n' "${vals[@]}" | stats)  [load $(load)]"
done
