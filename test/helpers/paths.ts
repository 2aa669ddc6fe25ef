import { join, resolve } from 'node:path';

/** The repository's root folder. */
export const projectRoot = resolve(__dirname, '..', '..');

/** Where tests keep dev-server databases and scratch files (git-ignored). */
export const dataDir = join(projectRoot, '.agents-kit');
