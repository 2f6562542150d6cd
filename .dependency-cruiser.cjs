/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-reach-in',
      comment:
        'A package is used through its name (@svc/<name> and the subpaths its package.json exports), never by a path into its folder: ' +
        'files in packages/<name> import another package only by name, and so do e2e/, bench/, scripts/ and test-support/.',
      severity: 'error',
      from: { path: '^(packages/[^/]+|e2e|bench|scripts|test-support)/' },
      to: {
        path: '^packages/[^/]+/',
        // Listed exception: the test helpers under packages/<name>/tests/ (the portal, CLI and
        // netlab fixtures, the fake license portal) are still shared with e2e/ and the other
        // packages' tests by path, until they move into the test kit (test-support/).
        pathNot: ['^$1/', '^packages/[^/]+/tests/'],
        dependencyTypesNot: ['aliased-workspace'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'],
    },
  },
};
