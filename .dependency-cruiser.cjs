/**
 * Import rules, checked by `npm run lint` (`npm run lint:imports`); scripts/import-rules.test.ts
 * plants violations in a copy of this file to prove each rule fires. Keep one `forbidden` entry
 * per rule. No `no-orphans` rule: knip already fails on files no entry point reaches, and the
 * only orphans are entry points (scripts run by node, the vite config).
 */
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
