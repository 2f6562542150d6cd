import { Random } from '@svc/client/engine';

/** The synthetic generator's seeded PRNG (mulberry32) as a function, for inputs that must be the same for the same seed. */
export function seededRandom(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}
