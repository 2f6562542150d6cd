// What the global setup (test-support/postgres.ts) hands to every test file through vitest's inject().
export {};

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the shared test cluster (database `postgres`); each test file makes its own database. */
    pgAdminUrl: string;
    /** A database of that cluster with every migration applied, to copy (CREATE DATABASE … TEMPLATE). */
    pgMigratedTemplate: string;
  }
}
