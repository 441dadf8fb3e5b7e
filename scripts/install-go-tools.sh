#!/usr/bin/env bash
# Installs the pinned Go tools that CI and some tests use into
# $AGENTINFRA_GO_TOOLS (default: <repo>/.tools/go/bin) with `go install`, which
# builds them from the Go module proxy. Idempotent: a tool whose pinned version
# is already there is not rebuilt (go's build cache makes a rebuild cheap too).
#
# Pins:
#   honnef.co/go/tools/cmd/staticcheck v0.8.2   (CI lint)
#   github.com/go-task/task/v3/cmd/task v3.54.0 (fleet/metadata tests: the
#     real go-task runs each workspace metadata field; the first build takes
#     a few minutes, later ones come from the build cache)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${AGENTINFRA_GO_TOOLS:-$repo_root/.tools/go/bin}"
mkdir -p "$bin"

pins=(
  "honnef.co/go/tools/cmd/staticcheck@v0.8.2"
  "github.com/go-task/task/v3/cmd/task@v3.54.0"
)

for spec in "${pins[@]}"; do
  pkg="${spec%@*}"
  want="${spec##*@}"
  name="$(basename "$pkg")"
  stamp="$bin/.$name.version"
  if [[ -x "$bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    continue
  fi
  echo "go install $spec"
  GOBIN="$bin" go install "$spec"
  echo "$want" > "$stamp"
done
