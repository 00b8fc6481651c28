// One lint config for the whole repository: typescript-eslint for types-aware style,
// import-x for the "no cycles, one-way dependencies" rule of STYLE.md, and the layer
// boundaries (docs/decisions.md, "Wiring"): src/platform at the bottom; capabilities
// (every other directory of src but http) on it, their cores free of Fastify and of the HTTP
// layer, each used from outside only through its index.ts; src/http the edge; the composition
// root (services.ts) and the entry points (commands.ts, server.ts, cli.ts) on top.
// `npm run structure` (madge, type imports included) checks that no import cycle exists.
import { readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const CAPABILITIES = readdirSync(new URL('./src/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'platform' && entry.name !== 'http')
  .map((entry) => entry.name);
const ABOVE_CAPABILITIES = ['./src/http', './src/services.ts', './src/commands.ts', './src/server.ts', './src/cli.ts'];

const boundaries = [
  { target: './src/platform', from: './src', except: ['./platform'], message: 'src/platform is the bottom layer: it imports no capability, no src/http and no composition root.' },
  { target: ['./src/!(http)/**', './src/services.ts', './src/commands.ts'], from: './src/http', message: 'src/http is the edge: only server.ts builds the app.' },
  ...CAPABILITIES.flatMap((capability) => [
    { target: `./src/${capability}`, from: ABOVE_CAPABILITIES, message: 'A capability sits under the HTTP layer and the composition root: it receives what it needs as factory dependencies or plugin options.' },
    { target: [`./src/!(${capability})/**`, './src/*.ts'], from: `./src/${capability}`, except: ['./index.ts'], message: `Use the ${capability} capability through src/${capability}/index.ts.` },
  ]),
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'dashboard/dist/**', 'coverage/**', 'scratch/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': ['error', { maxDepth: 12 }],
    },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } }, 'import-x/ignore': ['node_modules'] },
  },
  { files: ['src/**/*.ts'], rules: { 'no-console': 'error', 'import-x/no-restricted-paths': ['error', { zones: boundaries }] } },
  {
    // A capability's core imports no Fastify: only its routes plugins (routes.ts, *-routes.ts) may,
    // and accounts' finishSignIn, the one place a sign-in's answer to the browser is made.
    files: CAPABILITIES.map((capability) => `src/${capability}/**/*.ts`),
    ignores: ['src/*/routes.ts', 'src/*/*-routes.ts', 'src/accounts/sign-in.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['fastify', 'fastify/*', '@fastify/*', 'fastify-plugin'], message: 'Capability cores import no Fastify: put HTTP concerns in the routes.ts plugin or src/http.' }] },
      ],
    },
  },
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
