/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/cluster starts production-shaped clusters of its own: only in `npm run test:cluster`.
  testPathIgnorePatterns: process.env.AGENTS_KIT_TEST_CLUSTER
    ? ['/node_modules/']
    : ['/node_modules/', '/test/cluster/'],
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60_000,
  // Workflow tests share one dev server; two jest workers keep both cores busy without starving it.
  maxWorkers: 2,
};
