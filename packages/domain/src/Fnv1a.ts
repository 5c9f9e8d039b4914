/**
 * 32-bit FNV-1a of a string's UTF-16 code units: a stable, well-spread seed from an id, for the deterministic
 * generators (the simulated carrier's calls, the synthetic contacts) that must give the same output for the same
 * input on every run and machine.
 */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}
