#!/usr/bin/env bash
# dependency_check.sh: required (nmap), core and optional tools of the scanner
# Runs `svc dependency-check` (packages/client/src/cli/commands/dependency-check.ts) with the same options (docs/cli.md).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../packages/client/bin/svc" dependency-check "$@"
