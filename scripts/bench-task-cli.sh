#!/usr/bin/env bash
# Whole-process figures of the CLI on a generated 10,000-row matrix, against grep
# over the same file (the issue's targets):
#   validate                 within 5x of  grep -c '| TODO |' FILE
#   task list --status TODO  within 5x of  grep '| TODO |' FILE
#   task create, task update < 50 ms each;  prompt ID with 10 skills < 20 ms
# Every command's output goes to a pipe (hyperfine --output=pipe; perf stat ...
# | cat): GNU grep stops at the first match when its output is /dev/null.
#
# Per command: hyperfine min and mean wall time, and (when perf is there) page
# faults; instructions from perf, or from valgrind's callgrind when the CPU
# counters are not available (VMs). Wall times are only meaningful on an idle
# machine; faults and instructions hold under load. The read commands are
# timed in rounds, each command once per round, so that a command and its
# grep reference see the same load: min is the fastest run of all rounds,
# mean the mean of all runs.
#
# Usage: scripts/bench-task-cli.sh [rows]
#   needs go and hyperfine >= 1.15; perf and valgrind are optional.
#   BENCH_RUNS=N    hyperfine runs per read command (default 200)
#   BENCH_ROUNDS=N  rounds the runs are spread over (default 4)
#   BENCH_TAGS=T    build tags (default netgo,osusergo, the README's static build)
set -euo pipefail
rows="${1:-10000}"
runs="${BENCH_RUNS:-200}"
rounds="${BENCH_ROUNDS:-4}"
per_round=$(( (runs + rounds - 1) / rounds ))
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="$work/agentinfra"
ws="$work/ws"

command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
# The build the README recommends (static: no C library to load at start-up);
# BENCH_TAGS= measures a plain go build.
tags="${BENCH_TAGS-netgo,osusergo}"
(cd "$repo" && go build -tags "$tags" -o "$bin" ./cmd/agentinfra)
# A Go hello world: the floor for any Go binary's start-up.
mkdir -p "$work/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' > "$work/hello/main.go"
(cd "$work/hello" && printf 'module hello\n' > go.mod && go build -o "$work/hello-world" .)
(cd "$repo" && AGENTINFRA_BENCH_WS="$ws" AGENTINFRA_BENCH_ROWS="$rows" go test ./cmd/agentinfra/internal/cli -run TestWriteBenchWorkspace -count=1 >/dev/null)
id="$(printf '%06x' $(( (rows / 2 * 7919 + 1) % 0xffffff )))" # testmatrix.ID(rows/2)
cd "$ws"
matrix=.agent/DEVELOPMENT_MATRIX.md

have_perf=no
if command -v perf >/dev/null && perf stat -e page-faults true >/dev/null 2>&1; then have_perf=yes; fi
perf_instr=no
if [ "$have_perf" = yes ] && perf stat -x, -e instructions:u true 2>&1 >/dev/null | grep -q '^[0-9]'; then perf_instr=yes; fi
have_callgrind=no
if [ "$perf_instr" = no ] && command -v valgrind >/dev/null; then have_callgrind=yes; fi

echo "== $rows rows, $(wc -c < "$matrix") bytes; $(go version | cut -d' ' -f3), -tags '$tags'; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)"
echo "   instructions from: $([ "$perf_instr" = yes ] && echo perf || { [ "$have_callgrind" = yes ] && echo 'callgrind (no CPU counters)' || echo n/a; })"
echo
echo "| Command | min ms | mean ms | x ref (min) | x ref (mean) | page faults | instructions |"
echo "|---|---|---|---|---|---|---|"

# timeround KEY CMD...: one round of CMD; appends its fastest and its mean
# run (ms) to $work/KEY.times.
timeround() {
  local key="$1"; shift
  hyperfine -N --output=pipe --warmup 3 --runs "$per_round" --export-csv "$work/hf.csv" "$(printf '%q ' "$@")" >/dev/null 2>&1
  awk -F, 'NR==2{print $7*1000, $2*1000}' "$work/hf.csv" >> "$work/$key.times"
}

ref_min="" ref_mean=""
# report NAME KEY ROLE CMD...: the row of CMD, timed under KEY. ROLE is "ref"
# (sets the reference), "vs" (ratio to it) or "-".
report() {
  local name="$1" key="$2" role="$3"; shift 3
  local min mean faults=n/a instr=n/a
  # Every round has the same number of runs: the mean of the means is the mean.
  min="$(awk 'NR==1||$1<m{m=$1} END{printf "%.2f", m}' "$work/$key.times")"
  mean="$(awk '{s+=$2} END{printf "%.2f", s/NR}' "$work/$key.times")"
  if [ "$have_perf" = yes ]; then
    local events=page-faults
    [ "$perf_instr" = yes ] && events=page-faults,instructions:u
    perf stat -x, -e "$events" -r 20 -o "$work/perf.txt" "$@" 2>/dev/null | cat >/dev/null
    faults="$(awk -F, '$3=="page-faults"{printf "%d", $1}' "$work/perf.txt")"
    [ "$perf_instr" = yes ] && instr="$(awk -F, '$3 ~ /^instructions/{printf "%d", $1}' "$work/perf.txt")"
  fi
  if [ "$have_callgrind" = yes ]; then
    # Go's preemption signals trip callgrind up; they do not change the count.
    GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      --log-file="$work/vg.txt" "$@" 2>/dev/null | cat >/dev/null || true
    instr="$(awk '/Collected/{print $4}' "$work/vg.txt")"
  fi
  local rmin="" rmean=""
  case "$role" in
    ref) ref_min="$min" ref_mean="$mean" ;;
    vs)
      rmin="$(awk -v a="$min" -v b="$ref_min" 'BEGIN{printf "%.1fx", a/b}')"
      rmean="$(awk -v a="$mean" -v b="$ref_mean" 'BEGIN{printf "%.1fx", a/b}')"
      ;;
  esac
  echo "| \`$name\` | $min | $mean | $rmin | $rmean | $faults | $instr |"
}

for _ in $(seq "$rounds"); do
  timeround hello "$work/hello-world"
  timeround help "$bin" --help
  timeround grep-c grep -c '| TODO |' "$matrix"
  timeround validate "$bin" validate
  timeround grep grep '| TODO |' "$matrix"
  timeround list "$bin" task list --status TODO
done
report "hello world (Go)" hello - "$work/hello-world"
report "agentinfra --help" help - "$bin" --help
report "grep -c '\\| TODO \\|'" grep-c ref grep -c '| TODO |' "$matrix"
report "agentinfra validate" validate vs "$bin" validate
report "grep '\\| TODO \\|'" grep ref grep '| TODO |' "$matrix"
report "agentinfra task list --status TODO" list vs "$bin" task list --status TODO

echo
echo "== writes and prompt (hyperfine only)"
hyperfine -N --output=pipe --warmup 3 --runs 50 \
  --prepare "$bin task update $id --status TODO" \
  "$bin task update $id --status IN_PROGRESS"
hyperfine -N --output=pipe --warmup 3 --runs 50 \
  "$bin task create --description 'Benchmark task' --mode coder"
# prompt: the task's mode (coder) plus 10 skills.
for i in $(seq 1 10); do
  mkdir -p ".agent/skills/bench-skill-$i"
  printf -- '---\nname: Bench skill %s\ndescription: A skill for the prompt benchmark.\n---\n# Skill %s\n\n## Rules\n\nDo the thing well.\n' "$i" "$i" > ".agent/skills/bench-skill-$i/SKILL.md"
done
skills=$(seq -s, -f 'bench-skill-%g' 1 10)
"$bin" task update "$id" --skills "$skills" --status TODO >/dev/null
hyperfine -N --output=pipe --warmup 5 --runs 100 "$bin prompt $id"
