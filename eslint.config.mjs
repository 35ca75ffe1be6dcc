// Type-aware lint for the whole repository (`make lint`, part of `make test`).
// Product code (server/, client/, conformance/ outside tests) may not use `any`; tests may,
// where they build deliberately malformed input. Promises must be awaited or handled, and a
// switch over a union must cover every member (or say `default` on purpose).
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // scripts/package-check/ holds user projects typechecked against the packed tarballs, not the repo.
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.tmp/**',
      'generated/**',
      '**/node_modules/**',
      '**/dist/**',
      'scripts/package-check/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-control-regex': 'off',
    },
  },
  {
    files: ['**/*.test.ts', '**/fixtures/**', 'bench/**', 'scripts/**', 'specs/codegen/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The kit's readers of another implementation's frames: loose JSON from a foreign agent,
    // checked by the sniffer against the specs, walked here with optional chaining. Typing them
    // (unknown plus narrowing helpers) is open work; nothing else in product code may use `any`.
    files: ['conformance/kit/adapters/**', 'conformance/kit/coverage/**', 'conformance/harness/sniffer.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Mutants are deliberately broken agents and servers run by the kit's mutant tests.
    files: ['conformance/mutants/**'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
)
