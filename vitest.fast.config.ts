import { defineConfig } from 'vitest/config';
import full from './vitest.config.ts';

/**
 * The fast tier (`npm run test:fast`): unit tests and the quicker in-process route tests, under a
 * minute on this machine. Every test file of the packages is in it unless named below, so a new
 * unit test is never left out (a new test file over ~5 s belongs in the list); e2e/
 * (client tools against a portal) and bench/ stay in the full suite only.
 */
export const SLOW_FILES = [
  // Spawned portal processes, each with its own embedded PostgreSQL.
  'packages/portal/tests/command-exactly-once.test.ts',
  'packages/portal/tests/config.test.ts',
  'packages/portal/tests/database-outage.test.ts',
  'packages/portal/tests/embedded-restart.test.ts',
  'packages/portal/tests/identity-hardening.test.ts',
  'packages/portal/tests/lifecycle.test.ts',
  'packages/portal/tests/upload-crash.test.ts',
  // Embedded PostgreSQL servers started by the test itself.
  'packages/portal/tests/embedded-socket.test.ts',
  // Headless Chromium.
  'packages/portal/tests/browser-hostile-report.test.ts',
  'packages/portal/tests/browser-share.test.ts',
  'packages/web/tests/sign-in.test.ts',
  'packages/web/tests/sessions.test.ts',
  'packages/web/tests/triage-browser.test.ts',
  'packages/web/tests/findings-browser.test.ts',
  'packages/web/tests/findings-scale-browser.test.ts',
  'packages/web/tests/sandbox.test.ts',
  'packages/web/tests/fleet-browser.test.ts',
  'packages/web/tests/admin-browser.test.ts',
  'packages/web/tests/session-panels-browser.test.ts',
  'packages/web/tests/tabs-browser.test.ts',
  'packages/web/tests/nav-fleet-browser.test.ts',
  'packages/web/tests/overview-list-browser.test.ts',
  // Terminals through tmux.
  'packages/client/tests/dependency-check.test.ts',
  'packages/client/tests/pi-validate.test.ts',
  // Over ~5 s each on this machine: in-process portals with many cases, CLI processes, chromium.
  'packages/client/tests/alerts-cli.test.ts',
  'packages/client/tests/config.test.ts',
  'packages/client/tests/report-browser.test.ts',
  'packages/client/tests/session-dir-atomic.test.ts',
  'packages/client/tests/svc-cli.test.ts',
  'packages/client/tests/terminal-escapes.test.ts',
  'packages/client/tests/insecure-http.test.ts',
  'packages/client/tests/svc-compile-cache.test.ts',
  'packages/client/tests/synthetic-seeded-output.test.ts',
  'packages/portal/src/webhooks/http-client.test.ts',
  'packages/portal/tests/agent-commands.test.ts',
  'packages/portal/tests/agent-groups.test.ts',
  'packages/portal/tests/agents-admin.test.ts',
  'packages/portal/tests/audit.test.ts',
  'packages/portal/tests/benchmark.test.ts',
  'packages/portal/tests/connection-limits.test.ts',
  'packages/portal/tests/db-health.test.ts',
  'packages/portal/tests/download.test.ts',
  'packages/portal/tests/heartbeat.test.ts',
  'packages/portal/tests/identity-external.test.ts',
  'packages/portal/tests/identity.test.ts',
  'packages/portal/tests/input-rules.test.ts',
  'packages/portal/tests/legacy-key-agents.test.ts',
  'packages/portal/tests/licenses.test.ts',
  'packages/portal/tests/migrations.test.ts',
  'packages/portal/tests/openapi-fuzz.test.ts',
  'packages/portal/tests/openapi-lint.test.ts',
  'packages/portal/tests/path-safety.test.ts',
  'packages/portal/tests/permissions.test.ts',
  'packages/portal/tests/refresh.test.ts',
  'packages/portal/tests/remediation.test.ts',
  'packages/portal/tests/response-headers.test.ts',
  'packages/portal/tests/session-ids-per-client.test.ts',
  'packages/portal/tests/sessions-domain.test.ts',
  'packages/portal/tests/sessions.test.ts',
  'packages/portal/tests/share-rotation.test.ts',
  'packages/portal/tests/tenant-isolation.test.ts',
  'packages/portal/tests/upload-refusal-shutdown.test.ts',
  'packages/portal/tests/upload-pace.test.ts',
  'packages/portal/tests/upload.test.ts',
  'packages/portal/tests/webhook-bulkhead.test.ts',
  'packages/portal/tests/webhook-events.test.ts',
  'packages/portal/tests/webhook-ssrf.test.ts',
  'packages/portal/tests/webhooks.test.ts',
  'packages/portal/tests/login-throttle.test.ts',
  'packages/portal/tests/login-concurrency.test.ts',
  // A real nginx in front of in-process portals.
  'packages/portal/tests/client-address-nginx.test.ts',
  'packages/portal/tests/secrets-in-logs.test.ts',
  'packages/portal/tests/share.test.ts',
  'packages/portal/tests/jwt-header.test.ts',
  'packages/portal/tests/api-keys.test.ts',
  'packages/portal/tests/license-validation.test.ts',
  'packages/portal/tests/upload-abort-log.test.ts',
  'packages/portal/tests/console-serving.test.ts',
  // Real daemons in network namespaces and real nmap scans (needs root).
  'packages/client/tests/scanner-netlab.test.ts',
  'packages/client/tests/scan-netlab.test.ts',
  // testssl.sh audits in the test network: minutes; svc scan processes with whatweb on loopback.
  'packages/client/tests/scan-tools-netlab.test.ts',
  'packages/client/tests/scan-tools-cli.test.ts',
  'packages/client/tests/scan-cli.test.ts',
  'e2e/scan-chain-netlab.test.ts',
  'packages/client/tests/scan-tools2-netlab.test.ts',
];

// Spread, not mergeConfig: merging would append to the full suite's include list.
export default defineConfig({
  ...full,
  test: {
    ...full.test,
    include: ['packages/*/src/**/*.test.ts', 'packages/*/tests/**/*.test.ts', 'scripts/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...SLOW_FILES],
  },
});
