#!/usr/bin/env bash
# pi_validate.sh: host readiness checks (platform, bash, dependencies, hashing, cron, disk, network); --fix installs what is missing
# Runs `svc pi-validate` (packages/client/src/cli/commands/pi-validate.ts) with the same options (docs/cli.md).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../packages/client/bin/svc" pi-validate "$@"
