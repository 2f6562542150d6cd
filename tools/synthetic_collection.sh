#!/usr/bin/env bash
# synthetic_collection.sh: generate synthetic scan sessions for demos and tests
# Runs `svc synthetic-collection` (packages/client/src/cli/commands/synthetic-collection.ts) with the same options (docs/cli.md).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../packages/client/bin/svc" synthetic-collection "$@"
