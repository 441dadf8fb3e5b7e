#!/usr/bin/env bash
# Whole-process timings of the CLI on a 10,000-row matrix (hyperfine -N):
#   validate                 vs  grep -c '| TODO |' on the same file (target: within 5x)
#   task list --status TODO  vs  grep '| TODO |' on the same file (target: within 5x)
#   task create, task update (target: < 50 ms each)
#   prompt ID with 10 skills (target: < 20 ms)
# Usage: scripts/bench-task-cli.sh [rows]   (needs hyperfine; writes under a temp dir)
set -euo pipefail
rows="${1:-10000}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="$work/agentinfra"
ws="$work/ws"
(cd "$repo" && go build -o "$bin" ./cmd/agentinfra)
(cd "$repo" && AGENTINFRA_BENCH_WS="$ws" AGENTINFRA_BENCH_ROWS="$rows" go test ./cmd/agentinfra -run TestWriteBenchWorkspace -count=1 >/dev/null)
id="$(printf '%06x' $(( (rows / 2 * 7919 + 1) % 0xffffff )))" # testmatrix.ID(rows/2)
cd "$ws"
echo "== $rows rows, $(wc -c < .agent/DEVELOPMENT_MATRIX.md) bytes; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
hyperfine -N --warmup 5 --runs 200 \
  "grep -c '| TODO |' .agent/DEVELOPMENT_MATRIX.md" \
  "$bin validate" \
  "$bin --help"
hyperfine -N --warmup 5 --runs 200 \
  "grep '| TODO |' .agent/DEVELOPMENT_MATRIX.md" \
  "$bin task list --status TODO"
hyperfine -N --warmup 3 --runs 50 \
  --prepare "$bin task update $id --status TODO" \
  "$bin task update $id --status IN_PROGRESS"
hyperfine -N --warmup 3 --runs 50 \
  "$bin task create --description 'Benchmark task' --mode coder"
# prompt: the task's mode (coder) plus 10 skills.
for i in $(seq 1 10); do
  mkdir -p ".agent/skills/bench-skill-$i"
  printf -- '---\nname: Bench skill %s\ndescription: A skill for the prompt benchmark.\n---\n# Skill %s\n\n## Rules\n\nDo the thing well.\n' "$i" "$i" > ".agent/skills/bench-skill-$i/SKILL.md"
done
skills=$(seq -s, -f 'bench-skill-%g' 1 10)
"$bin" task update "$id" --skills "$skills" --status TODO >/dev/null
hyperfine -N --warmup 5 --runs 100 "$bin prompt $id"
