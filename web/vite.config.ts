/** Vite build of the browser UI (web/) into dist/web, served by the daemon (src/server/web.ts). */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  plugins: [preact({ devtoolsInProd: false, prefreshEnabled: false })],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // One script and one stylesheet; no inline script (the page's CSP forbids it).
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
  },
  logLevel: 'warn',
});
