/** The throwaway PostgreSQL server for tests: it lives in bench/lib (compiled for the demo and the bench). */
export * from '../../bench/lib/postgres.js';
