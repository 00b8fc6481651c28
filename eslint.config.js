// One lint config for the whole repository: typescript-eslint for types-aware style,
// import-x for the "no cycles, one-way dependencies" rule of STYLE.md.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

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
  { files: ['src/**/*.ts'], rules: { 'no-console': 'error' } },
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
