// Builds the dashboard into dist/dashboard, which svc serves at /dashboard (src/http/dashboard.ts).
// Hashed file names under assets/ (served with a long cache); no inline scripts, so the page runs
// under a strict Content-Security-Policy (script-src 'self').
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // Chart.js is the largest part; one chunk keeps the first load to two requests.
    chunkSizeWarningLimit: 600,
  },
});
