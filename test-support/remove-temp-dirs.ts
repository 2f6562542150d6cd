import { afterAll } from 'vitest';
import { removeTestTempDirs } from './temp-dirs.ts';

// Registered before the file's own hooks, so it runs after them: its portals are closed by then.
afterAll(removeTestTempDirs);
