/**
 * Import rules, checked by `npm run lint` (`npm run lint:imports`); scripts/import-rules.test.ts
 * plants violations in a copy of this file to prove each rule fires. Keep one `forbidden` entry
 * per rule. No `no-orphans` rule: knip already fails on files no entry point reaches, and the
 * only orphans are entry points (scripts run by node, the vite config).
 */
/** The portal's areas: what it does, each with its own queries (packages/portal/src/<area>/). */
const PORTAL_AREAS =
  'agents|audit|auth|blobs|events|identity|licenses|metrics|operations|overview|records|sessions|vuln-feeds|webhooks';

/** The client's engine: every folder of packages/client/src but the kit and the CLI (the engine's doors, engine/, included). */
const CLIENT_NOT_KIT_OR_CLI = '^packages/client/src/(?!kit/|cli/)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included: move what both sides need into a leaf module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves to a file or an installed package.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-reach-in',
      comment:
        'A package is used through its name (@svc/<name> and the subpaths its package.json exports), never by a path into its folder: ' +
        'files in packages/<name> import another package only by name, and so do e2e/, bench/, scripts/ and test-support/.',
      severity: 'error',
      from: { path: '^(packages/[^/]+|e2e|bench|scripts|test-support)/' },
      to: {
        path: '^packages/[^/]+/',
        // Test helpers shared beyond one package live in test-support/, not in a package's tests.
        pathNot: ['^$1/'],
        dependencyTypesNot: ['aliased-workspace'],
      },
    },
    {
      name: 'portal-foundations-below-areas',
      comment:
        "The portal's foundations (config/, db/, domain/, http/) serve every area and import none: " +
        'a rule an area and a foundation both need lives in the foundation or in @svc/protocol.',
      severity: 'error',
      from: { path: '^packages/portal/src/(config|db|domain|http)/' },
      to: { path: `^packages/portal/src/(${PORTAL_AREAS})/` },
    },
    {
      name: 'portal-areas-below-edge',
      comment:
        'An area never imports the HTTP edge (api/, web/ pages, app.ts): routes call areas, not the other way round.',
      severity: 'error',
      from: { path: `^packages/portal/src/(${PORTAL_AREAS})/` },
      to: { path: '^packages/portal/src/(api/|app\\.ts$)' },
    },
    {
      name: 'client-kit-at-the-bottom',
      comment:
        "The client's kit (packages/client/src/kit/, the door @svc/client/kit) imports nothing of the client outside it: " +
        'svcd bundles the kit, and none of the scanner, the pipeline or the CLI may come along.',
      severity: 'error',
      from: { path: '^packages/client/src/kit/' },
      to: { path: '^packages/client/src/', pathNot: '^packages/client/src/kit/' },
    },
    {
      name: 'client-engine-below-cli',
      comment:
        "The client's engine (every folder but kit/ and cli/) never imports the CLI: what a command and a test both need lives below it.",
      severity: 'error',
      from: { path: CLIENT_NOT_KIT_OR_CLI },
      to: { path: '^packages/client/src/cli/' },
    },
    {
      name: 'client-pipeline-below-scanner-and-cli',
      comment:
        'The pipeline (pure stages) imports neither the scanner nor the CLI: what both need (CVE matching, say) lives in a folder of its own below them.',
      severity: 'error',
      from: { path: '^packages/client/src/pipeline/' },
      to: { path: '^packages/client/src/(scanner|cli)/' },
    },
    {
      name: 'agent-uses-the-kit',
      comment:
        'The agent imports the client through its kit alone (@svc/client/kit): svcd is one bundle, and the engine would bring the scanner along.',
      severity: 'error',
      from: { path: '^packages/agent/src/' },
      to: { path: '^packages/client/', pathNot: '^packages/client/src/kit/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|test-output)/' },
    // Keep `import type` in the graph: a cycle through types alone is still a cycle.
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    skipAnalysisNotInRules: true,
  },
};
