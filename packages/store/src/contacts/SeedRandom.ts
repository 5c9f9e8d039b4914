/**
 * The deterministic randomness of the contact seed (ContactSeed.ts): a bijective 32-bit mix to derive one seed per
 * org and contact, and a small fast generator for the fields of one contact. Contact `i` of an org depends only on
 * these seeds, so the same arguments give the same contacts whatever the chunk size.
 */

/** The murmur3 finalizer: a bijective 32-bit mix. */
export const mix32 = (value: number): number => {
  let h = value >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A small fast generator (mulberry32) for the fields of one contact. */
export class Rng {
  private state: number
  constructor(seed: number) {
    this.state = seed >>> 0
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  int(bound: number): number {
    return Math.floor(this.next() * bound)
  }
  pick<A>(items: ReadonlyArray<A>): A {
    return items[this.int(items.length)]!
  }
  /** Head-heavy: low indexes are much more likely, as with real name frequencies. */
  pickSkewed<A>(items: ReadonlyArray<A>): A {
    const u = this.next()
    return items[Math.floor(items.length * u * u * u)]!
  }
}
