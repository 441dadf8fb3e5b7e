# Recipes for agentinfra. Install just with: npm install -g rust-just

# Run the tests (the README's command).
test:
    go test ./...

# Run the tests the way CI does: real agent CLIs, MCP Inspector, stress.
ci:
    bash .ci/run

# Whole-process figures on a 10,000-row matrix (needs hyperfine).
bench-cli:
    bash scripts/bench-task-cli.sh

# Benchmarks behind the README's figures.
bench:
    go test ./matrix ./task ./mcpserver ./prompt -run '^$' -bench . -benchmem

# Fuzz the matrix parser and writer (default 2 minutes).
fuzz time="2m":
    go test ./matrix -run '^$' -fuzz '^FuzzParseWrite$' -fuzztime {{time}}

# Fuzz: the matrix reader finds the task rows GitHub shows (default 30 s).
fuzz-strict time="30s":
    go test ./matrix -run '^$' -fuzz '^FuzzTolerantAgreesWithStrict$' -fuzztime {{time}}

# Fuzz: validate --fix never loses a non-space character (default 1 minute).
fuzz-fix time="1m":
    go test ./cmd/agentinfra/internal/full -run '^$' -fuzz '^FuzzFixKeepsEveryCharacter$' -fuzztime {{time}}

# Refresh the real-world corpus goldens (review the diff before committing).
golden-realworld:
    go test ./cmd/agentinfra/internal/full -run 'TestRealworldGoldens' -update

# gofmt and go vet.
lint:
    test -z "$(gofmt -l $(git ls-files '*.go'))"
    go vet ./...

# Install the pinned npm tools (agent CLIs, MCP Inspector) into .tools/npm.
tools:
    bash scripts/install-tools.sh

# Install the pinned Go tools (staticcheck, go-task) into .tools/go/bin.
go-tools:
    bash scripts/install-go-tools.sh

# Workspace metadata figures: 10 agents × 4 one-second fields, a hanging field (needs go-tools).
bench-metadata:
    go test ./fleet -run '^$' -bench 'Metadata' -benchtime 5x
