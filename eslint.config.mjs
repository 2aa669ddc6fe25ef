// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Node built-ins and non-workflow SDK packages cannot run in Temporal's deterministic workflow sandbox. */
const sandboxBanned = [
  {
    group: ['node:*'],
    message: 'Node built-ins are not deterministic: workflow and domain code cannot import them.',
  },
  {
    group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'],
    message: 'Only @temporalio/workflow and @temporalio/common may be imported by sandboxed code.',
  },
];
const nodeBuiltins = [
  'assert',
  'async_hooks',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.dist-next/**',
      '.agents-kit/**',
      '.data/**',
      'test/fixtures/**',
      'test-output/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        // The probe files are linted from stdin by the sandbox test, so they never exist on disk.
        projectService: {
          allowDefaultProject: ['workflows/lint-probe.ts', 'domain/lint-probe.ts', 'workers/lint-probe.ts'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts', 'domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: nodeBuiltins, patterns: sandboxBanned }],
      // Workflow modules are shared between workflows and frozen (workflows/shared-modules.ts).
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='regex']",
          message:
            "use matching() from domain/ids: zod's .regex() writes to its pattern, which is frozen once shared",
        },
      ],
    },
  },
  {
    files: ['*.config.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        module: 'writable',
        require: 'readonly',
        __dirname: 'readonly',
        __filename: 'readonly',
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
      },
    },
  },
);
