#!/usr/bin/env bash
# api_debug.sh: call one portal endpoint and show the exchange (optionally as curl)
# Runs `svc api-debug` (packages/client/src/cli/commands/api-debug.ts) with the same options (docs/cli.md).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../packages/client/bin/svc" api-debug "$@"
