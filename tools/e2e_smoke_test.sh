#!/usr/bin/env bash
# e2e_smoke_test.sh: end-to-end smoke test of a portal: ten checks, pass/fail each
# Runs `svc e2e-smoke-test` (packages/client/src/cli/commands/e2e-smoke-test.ts) with the same options (docs/cli.md).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../packages/client/bin/svc" e2e-smoke-test "$@"
