/// <reference types="node" />
// The hosted form: a Vite + Preact single-page app served by the BFF at /checkout/ (hashed assets
// under /checkout/assets/). The build prints the gzipped size of its JS and CSS and fails above the
// budget, so the page stays small on a shopper's phone.
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

/** Gzipped JS + CSS the page may weigh (issue 6: under 80 KB). */
const BUDGET_BYTES = 80 * 1024;

function gzipBudget(limit: number): Plugin {
  return {
    name: 'byrd-gzip-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      const rows: { file: string; gzip: number }[] = [];
      for (const output of Object.values(bundle)) {
        if (!/\.(js|css)$/.test(output.fileName)) continue;
        const source = output.type === 'chunk' ? output.code : output.source;
        rows.push({ file: output.fileName, gzip: gzipSync(source, { level: 9 }).length });
      }
      const total = rows.reduce((sum, row) => sum + row.gzip, 0);
      const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
      for (const row of rows) this.info(`${row.file}: ${kb(row.gzip)} gzipped`);
      const summary = `hosted form JS + CSS: ${kb(total)} gzipped (budget ${kb(limit)})`;
      if (total > limit) this.error(`${summary}: over budget`);
      // Printed, not only logged through Vite, so CI logs always show it.
      console.log(`\n${summary}\n`);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/checkout/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    // Inside the package's dist/, which the image copies (docker/Dockerfile) and turbo caches.
    outDir: '../dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    // Every asset is a file under assets/ (no data: URLs, which the page's CSP does not allow).
    assetsInlineLimit: 0,
    // Chromium, Firefox and Safari all support modulepreload: no polyfill in the bundle.
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  // `npm run dev:web`: the page with hot reload, its API calls sent to a running stack (`npm start`).
  server: {
    proxy: { '/checkout/api': process.env.CHECKOUT_API_URL ?? 'http://127.0.0.1:8080' },
  },
  plugins: [gzipBudget(BUDGET_BYTES)],
});
