import { expect } from 'vitest';

/** Calls fn and returns what it threw (fails the test when it returns). */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
    return e as Error;
  }
  throw new Error('expected a throw, but the call returned');
}
