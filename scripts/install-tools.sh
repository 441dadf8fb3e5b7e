#!/usr/bin/env bash
# Installs the pinned npm tools that agentinfra's end-to-end tests (and users'
# dispatches) run: the gemini, claude and codex agent CLIs and the MCP inspector.
# They land in $AGENTINFRA_TOOLS (default: <repo>/.tools/npm); binaries are in
# $AGENTINFRA_TOOLS/node_modules/.bin. Idempotent: exits early when every pinned
# version is already installed and runs.
#
# Pins (checked with Node v20):
#   @google/gemini-cli 0.61.0        node >=20
#   @anthropic-ai/claude-code 2.1.330  the package declares node >=22, but its
#       `claude` is a native binary (copied from the platform optional dependency
#       by its postinstall), so it does not run on Node; npm only warns EBADENGINE.
#   @openai/codex 0.169.0            Node launcher + native binary from @openai/codex-linux-x64
#   @modelcontextprotocol/inspector 0.15.0  (newer majors need node >=22.19)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${AGENTINFRA_TOOLS:-$repo_root/.tools/npm}"

pins=(
  "@google/gemini-cli@0.61.0"
  "@anthropic-ai/claude-code@2.1.330"
  "@openai/codex@0.169.0"
  "@modelcontextprotocol/inspector@0.15.0"
)

installed_version() { # $1 = package name; prints the installed version or nothing
  local pj="$prefix/node_modules/$1/package.json"
  [[ -f "$pj" ]] || return 0
  node -e 'process.stdout.write(String(require(process.argv[1]).version||""))' "$pj" 2>/dev/null || true
}

all_present() {
  local spec name want
  for spec in "${pins[@]}"; do
    name="${spec%@*}"
    want="${spec##*@}"
    [[ "$(installed_version "$name")" == "$want" ]] || return 1
  done
  return 0
}

# The claude package's postinstall copies the native binary over a placeholder;
# npm versions that gate install scripts may skip it. Run it ourselves then.
fix_claude() {
  local dir="$prefix/node_modules/@anthropic-ai/claude-code"
  if ! "$prefix/node_modules/.bin/claude" --version >/dev/null 2>&1; then
    (cd "$dir" && node install.cjs)
  fi
}

check_runs() {
  local bin="$prefix/node_modules/.bin" c out
  for c in gemini claude codex; do
    if ! out="$(timeout 120 "$bin/$c" --version 2>&1)"; then
      echo "install-tools: $c --version failed:" >&2
      echo "$out" >&2
      return 1
    fi
    echo "install-tools: $c $out"
  done
}

command -v node >/dev/null || { echo "install-tools: node is not on PATH (need Node >= 20)" >&2; exit 1; }
command -v npm >/dev/null || { echo "install-tools: npm is not on PATH" >&2; exit 1; }

if all_present; then
  echo "install-tools: pinned versions already in $prefix"
else
  mkdir -p "$prefix"
  echo "install-tools: installing ${pins[*]} into $prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --save-exact "${pins[@]}"
fi
fix_claude
check_runs
