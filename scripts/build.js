#!/usr/bin/env node
/**
 * `npm run build`: compiles src/ to dist/ with tsc (tsconfig.build.json: relative `.ts` imports
 * rewritten to `.js`, source maps on, incremental) and copies every non-TypeScript file the code
 * loads at run time beside its module (classifier weights and seeds, SQL migrations, the price
 * table), so `node dist/cli.js` finds them exactly where `src/` had them.
 *
 * `--if-stale` (used by `prestart` and `presvc`): builds only when a file under src/ or a build
 * input is newer than the last build, so `npm start` never runs code older than the source.
 * Without TypeScript installed (`npm ci --omit=dev`) an existing dist/ is kept as it is.
 *
 * Then the dashboard (dashboard/, React + Vite) is built into dist/dashboard, which svc serves at
 * /dashboard. Vite and React are dev dependencies installed by `npm ci`; the build needs no
 * network. Without Vite (a production install) an existing dist/dashboard is kept.
 *
 * Plain JavaScript on purpose: it runs before anything is compiled and needs no dev tool but tsc.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src');
const dashboard = join(root, 'dashboard');
const output = join(root, 'dist');
const stamp = join(output, '.build-stamp');
const inputs = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'].map((file) => join(root, file));

const ifStale = process.argv.includes('--if-stale');

function* files(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

function newestSourceTime() {
  let newest = 0;
  const dashboardFiles = existsSync(dashboard) ? [...files(dashboard)] : [];
  for (const path of [...files(source), ...dashboardFiles, ...inputs.filter((file) => existsSync(file))]) newest = Math.max(newest, statSync(path).mtimeMs);
  return newest;
}

function isTest(path) {
  return /\.test\.ts$/.test(path);
}

if (ifStale && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSourceTime()) process.exit(0);

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  if (existsSync(join(output, 'cli.js'))) {
    process.stderr.write('svc build: TypeScript is not installed (production install?); keeping the existing dist/\n');
    process.exit(0);
  }
  process.stderr.write('svc build: dist/ is missing and TypeScript is not installed; run `npm install` (with dev dependencies), then `npm run build`\n');
  process.exit(1);
}

const started = Date.now();
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

let assets = 0;
for (const path of files(source)) {
  if (path.endsWith('.ts') || isTest(path)) continue;
  const target = join(output, relative(source, path));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(path, target);
  assets += 1;
}
let dashboardNote = '';
if (existsSync(join(dashboard, 'index.html'))) {
  let vite;
  try {
    vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  } catch {
    vite = null;
  }
  if (vite === null) {
    dashboardNote = existsSync(join(output, 'dashboard', 'index.html')) ? ', dashboard kept (Vite not installed)' : ', dashboard NOT built (Vite not installed)';
  } else {
    const bundled = spawnSync(process.execPath, [vite, 'build', '--config', join(dashboard, 'vite.config.ts'), '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
    if (bundled.status !== 0) process.exit(bundled.status ?? 1);
    dashboardNote = ', dashboard built';
  }
}

writeFileSync(stamp, `${new Date().toISOString()}\n`);
process.stderr.write(`svc build: dist/ ready (${assets} assets copied${dashboardNote}) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
