import { defineConfig } from 'vite';

/**
 * The console is served by the portal under /console/ (and its session view at /collect/),
 * so asset URLs are absolute under /console/. Everything is bundled: no asset is loaded from
 * anywhere but the portal, and no inline script or style (the portal's CSP allows only self).
 */
export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
