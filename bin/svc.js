#!/usr/bin/env node
// The `svc` command: runs the compiled CLI in dist/ (built by `npm run build`, or by `prepare`
// on `npm install` / `npm ci`). Source maps map stack traces back to src/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

process.setSourceMapsEnabled(true);
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write('svc: not built yet (dist/cli.js is missing); run `npm run build` in the svc directory\n');
  process.exit(1);
}
await import(pathToFileURL(cli).href);
