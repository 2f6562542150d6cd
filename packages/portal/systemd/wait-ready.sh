#!/bin/sh
# Readiness check of svc-portal.service (its ExecStartPost): polls the portal's GET /readyz until
# it answers 200, for at most SVC_READY_TIMEOUT_SECONDS (default 240), with HOST and PORT read
# from the unit's environment as the portal reads them. Exit 0 ready, 1 not ready in time.
set -u
host=${HOST:-127.0.0.1}
case $host in
  '' | 0.0.0.0) host=127.0.0.1 ;;
  :: | '[::]') host='[::1]' ;;
  \[*) ;;
  *:*) host="[$host]" ;;
esac
url="http://$host:${PORT:-8080}/readyz"
timeout=${SVC_READY_TIMEOUT_SECONDS:-240}
deadline=$(($(date +%s) + timeout))
while :; do
  if curl --silent --fail --noproxy '*' --max-time 5 --output /dev/null "$url"; then
    exit 0
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "svc-portal: $url did not answer 200 within $timeout s" >&2
    exit 1
  fi
  sleep 1
done
