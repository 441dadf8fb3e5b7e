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
#     a few minutes, later ones come from the build cache), built with
#     github.com/mattn/go-runewidth v0.0.31 instead of the v0.0.27 its go.mod
#     names: v0.0.27 fills a 2 MB table in its package init, about 20 ms of CPU
#     in every go-task process before main (mattn/go-runewidth#104, fixed by
#     #105 in v0.0.28); a metadata list starts 40 of them at once, so that is
#     0.8 CPU-seconds of 2 cores per list. go-task's own code is v3.54.0's,
#     built with the flags of go-task's releases (CGO_ENABLED=0, -trimpath,
#     -s -w).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${AGENTINFRA_GO_TOOLS:-$repo_root/.tools/go/bin}"
mkdir -p "$bin"

task_version=v3.54.0
runewidth_version=v0.0.31

# installed NAME WANT: whether NAME's pinned version WANT is there.
installed() {
  [[ -x "$bin/$1" && -f "$bin/.$1.version" && "$(cat "$bin/.$1.version")" == "$2" ]]
}

if ! installed staticcheck v0.8.2; then
  echo "go install honnef.co/go/tools/cmd/staticcheck@v0.8.2"
  GOBIN="$bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
  echo v0.8.2 > "$bin/.staticcheck.version"
fi

# `go install pkg@version` cannot change a dependency's version, so go-task is
# installed from a throwaway module that requires both pins (minimal version
# selection then picks v0.0.31; every other dependency stays go-task's).
task_stamp="$task_version go-runewidth@$runewidth_version static"
if ! installed task "$task_stamp"; then
  echo "go install github.com/go-task/task/v3/cmd/task@$task_version with go-runewidth@$runewidth_version"
  mod="$(mktemp -d)"
  trap 'rm -rf "$mod"' EXIT
  (
    cd "$mod"
    go mod init agentinfra.local/gotools >/dev/null 2>&1
    # go get lists every module it adds: shown only when it fails.
    if ! go get "github.com/go-task/task/v3/cmd/task@$task_version" "github.com/mattn/go-runewidth@$runewidth_version" >get.log 2>&1; then
      cat get.log >&2
      exit 1
    fi
    # As go-task's own releases are built (its .goreleaser.yml): static, no
    # symbol tables; ~1 ms less CPU per process than a cgo build (perf stat).
    CGO_ENABLED=0 GOBIN="$bin" go install -trimpath -ldflags="-s -w" github.com/go-task/task/v3/cmd/task
  )
  got="$(go version -m "$bin/task" | awk '$1 == "dep" && $2 == "github.com/mattn/go-runewidth" {print $3}')"
  if [[ "$got" != "$runewidth_version" ]]; then
    echo "install-go-tools: go-task was built with go-runewidth ${got:-(none)}, not $runewidth_version" >&2
    exit 1
  fi
  echo "$task_stamp" > "$bin/.task.version"
fi
