/**
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104) in plain TypeScript, so that the pure domain can
 * authenticate pagination keys without `node:crypto` or the asynchronous WebCrypto API.
 *
 * The hash state lives in `Int32Array`s and every addition is truncated with `| 0`, which keeps the
 * arithmetic in V8's 32-bit integer fast path. An {@link HmacSha256Key} holds the two SHA-256 states
 * after the `key XOR ipad` and `key XOR opad` blocks, computed once per secret, so the MAC of a message
 * of up to 55 bytes costs two compressions instead of four.
 *
 * The functions are synchronous and not re-entrant (they share scratch buffers), which is safe in a
 * single JavaScript thread because nothing here calls back into user code.
 *
 * @internal
 */

/** 32-bit words from whitespace-separated hex, as FIPS 180-4 prints its constants. */
const words = (hex: string): Int32Array => Int32Array.from(hex.trim().split(/\s+/), (word) => parseInt(word, 16) | 0)

// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
const INITIAL_STATE = words(`
  6a09e667 bb67ae85 3c6ef372 a54ff53a 510e527f 9b05688c 1f83d9ab 5be0cd19
`)

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = words(`
  428a2f98 71374491 b5c0fbcf e9b5dba5 3956c25b 59f111f1 923f82a4 ab1c5ed5
  d807aa98 12835b01 243185be 550c7dc3 72be5d74 80deb1fe 9bdc06a7 c19bf174
  e49b69c1 efbe4786 0fc19dc6 240ca1cc 2de92c6f 4a7484aa 5cb0a9dc 76f988da
  983e5152 a831c66d b00327c8 bf597fc7 c6e00bf3 d5a79147 06ca6351 14292967
  27b70a85 2e1b2138 4d2c6dfc 53380d13 650a7354 766a0abb 81c2c92e 92722c85
  a2bfe8a1 a81a664b c24b8b70 c76c51a3 d192e819 d6990624 f40e3585 106aa070
  19a4c116 1e376c08 2748774c 34b0bcb5 391c0cb3 4ed8aa4a 5b9cca4f 682e6ff3
  748f82ee 78a5636f 84c87814 8cc70208 90befffa a4506ceb bef9a3f7 c67178f2
`)

const BLOCK_BYTES = 64
const DIGEST_BYTES = 32

// The message schedule, shared by every call (FIPS 180-4 §6.2.2 step 1): w[0, 16) is the block being
// compressed, filled by the caller; compress expands w[16, 64) from it.
const schedule = new Int32Array(64)

// FIPS 180-4 §4.1.2, functions (4.4) to (4.7), with rotations spelled as shift pairs.
const bigSigma0 = (x: number): number => ((x >>> 2) | (x << 30)) ^ ((x >>> 13) | (x << 19)) ^ ((x >>> 22) | (x << 10))
const bigSigma1 = (x: number): number => ((x >>> 6) | (x << 26)) ^ ((x >>> 11) | (x << 21)) ^ ((x >>> 25) | (x << 7))
const smallSigma0 = (x: number): number => ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)
const smallSigma1 = (x: number): number => ((x >>> 17) | (x << 15)) ^ ((x >>> 19) | (x << 13)) ^ (x >>> 10)

/** Loads the 64-byte block of `bytes` at `offset` as the first 16 big-endian words of the schedule. */
const load = (bytes: Uint8Array, offset: number): void => {
  const w = schedule
  for (let i = 0, j = offset; i < 16; i++, j += 4) {
    w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!
  }
}

/**
 * One compression (FIPS 180-4 §6.2.2) of the block already in `schedule[0, 16)`: `to` becomes `from`
 * plus the round results (they may be the same array), so no state is copied beforehand.
 */
const compress = (from: Int32Array, to: Int32Array): void => {
  const w = schedule
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!
    const y = w[i - 2]!
    w[i] = (w[i - 16]! + smallSigma0(x) + w[i - 7]! + smallSigma1(y)) | 0
  }
  let a = from[0]!
  let b = from[1]!
  let c = from[2]!
  let d = from[3]!
  let e = from[4]!
  let f = from[5]!
  let g = from[6]!
  let h = from[7]!
  // Eight rounds per iteration with the roles of a..h rotated in the source, so no values are shuffled;
  // Ch and Maj in their equivalent forms g ^ (e & (f ^ g)) and (a & b) | (c & (a | b)).
  for (let i = 0; i < 64; i += 8) {
    h = (h + bigSigma1(e) + (g ^ (e & (f ^ g))) + K[i]! + w[i]!) | 0
    d = (d + h) | 0
    h = (h + bigSigma0(a) + ((a & b) | (c & (a | b)))) | 0
    g = (g + bigSigma1(d) + (f ^ (d & (e ^ f))) + K[i + 1]! + w[i + 1]!) | 0
    c = (c + g) | 0
    g = (g + bigSigma0(h) + ((h & a) | (b & (h | a)))) | 0
    f = (f + bigSigma1(c) + (e ^ (c & (d ^ e))) + K[i + 2]! + w[i + 2]!) | 0
    b = (b + f) | 0
    f = (f + bigSigma0(g) + ((g & h) | (a & (g | h)))) | 0
    e = (e + bigSigma1(b) + (d ^ (b & (c ^ d))) + K[i + 3]! + w[i + 3]!) | 0
    a = (a + e) | 0
    e = (e + bigSigma0(f) + ((f & g) | (h & (f | g)))) | 0
    d = (d + bigSigma1(a) + (c ^ (a & (b ^ c))) + K[i + 4]! + w[i + 4]!) | 0
    h = (h + d) | 0
    d = (d + bigSigma0(e) + ((e & f) | (g & (e | f)))) | 0
    c = (c + bigSigma1(h) + (b ^ (h & (a ^ b))) + K[i + 5]! + w[i + 5]!) | 0
    g = (g + c) | 0
    c = (c + bigSigma0(d) + ((d & e) | (f & (d | e)))) | 0
    b = (b + bigSigma1(g) + (a ^ (g & (h ^ a))) + K[i + 6]! + w[i + 6]!) | 0
    f = (f + b) | 0
    b = (b + bigSigma0(c) + ((c & d) | (e & (c | d)))) | 0
    a = (a + bigSigma1(f) + (h ^ (f & (g ^ h))) + K[i + 7]! + w[i + 7]!) | 0
    e = (e + a) | 0
    a = (a + bigSigma0(b) + ((b & c) | (d & (b | c)))) | 0
  }
  to[0] = (from[0]! + a) | 0
  to[1] = (from[1]! + b) | 0
  to[2] = (from[2]! + c) | 0
  to[3] = (from[3]! + d) | 0
  to[4] = (from[4]! + e) | 0
  to[5] = (from[5]! + f) | 0
  to[6] = (from[6]! + g) | 0
  to[7] = (from[7]! + h) | 0
}

/**
 * Hashes `bytes[offset, offset + length)` into `state`, starting from `from`, where `from` already
 * absorbed `prefixBytes` bytes (a multiple of 64: zero for a plain hash, one block for HMAC).
 */
const absorb = (
  from: Int32Array,
  prefixBytes: number,
  bytes: Uint8Array,
  offset: number,
  length: number,
  state: Int32Array
): void => {
  const w = schedule
  const end = offset + length
  let p = offset
  let current = from
  for (; end - p >= BLOCK_BYTES; p += BLOCK_BYTES) {
    load(bytes, p)
    compress(current, state)
    current = state
  }
  // The last block(s), padded per FIPS 180-4 §5.1.1: the rest of the message, a 1 bit, zeros, and
  // the message length in bits as a 64-bit big-endian number. Built as words, straight in `w`.
  const rest = end - p
  const fullWords = rest >>> 2
  for (let i = 0, j = p; i < fullWords; i++, j += 4) {
    w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!
  }
  let last = 0
  const tailAt = p + fullWords * 4
  for (let j = 0; j < (rest & 3); j++) last |= bytes[tailAt + j]! << (24 - 8 * j)
  w[fullWords] = last | (0x80 << (24 - 8 * (rest & 3)))
  for (let i = fullWords + 1; i < 16; i++) w[i] = 0
  const bits = (prefixBytes + length) * 8
  if (rest >= BLOCK_BYTES - 8) {
    // No room left for the length: it goes alone into one more block.
    compress(current, state)
    current = state
    for (let i = 0; i < 16; i++) w[i] = 0
  }
  w[14] = Math.floor(bits / 0x100000000) | 0
  w[15] = bits | 0
  compress(current, state)
}

/** Writes the first `length` bytes of the big-endian digest held in `state` to `out` at `offset`. */
const writeDigest = (state: Int32Array, out: Uint8Array, offset: number, length: number): void => {
  for (let i = 0; i < length; i++) out[offset + i] = state[i >>> 2]! >>> (24 - 8 * (i & 3))
}

/**
 * The SHA-256 digest (32 bytes) of `bytes`.
 *
 * @category encoding
 */
export const sha256 = (bytes: Uint8Array): Uint8Array => {
  const state = new Int32Array(8)
  absorb(INITIAL_STATE, 0, bytes, 0, bytes.length, state)
  const out = new Uint8Array(DIGEST_BYTES)
  writeDigest(state, out, 0, DIGEST_BYTES)
  return out
}

/**
 * A secret prepared for HMAC-SHA-256: the hash states after the `K XOR ipad` and `K XOR opad`
 * blocks of RFC 2104 §2. Holding these instead of the key saves two compressions per MAC.
 *
 * @category models
 */
export interface HmacSha256Key {
  readonly inner: Int32Array
  readonly outer: Int32Array
}

/**
 * Prepares `secret` for {@link hmacSha256}. A secret longer than the 64-byte block is hashed
 * first (RFC 2104 §2), as every HMAC implementation does.
 *
 * @category constructors
 */
export const hmacSha256Key = (secret: Uint8Array): HmacSha256Key => {
  const key = secret.length > BLOCK_BYTES ? sha256(secret) : secret
  const pad = new Uint8Array(BLOCK_BYTES)
  const inner = new Int32Array(8)
  const outer = new Int32Array(8)
  for (let i = 0; i < BLOCK_BYTES; i++) pad[i] = (key[i] ?? 0) ^ 0x36
  load(pad, 0)
  compress(INITIAL_STATE, inner)
  for (let i = 0; i < BLOCK_BYTES; i++) pad[i] = (key[i] ?? 0) ^ 0x5c
  load(pad, 0)
  compress(INITIAL_STATE, outer)
  return { inner, outer }
}

const innerState = new Int32Array(8)
const outerState = new Int32Array(8)

/**
 * Writes the leftmost `tagLength` bytes of HMAC-SHA-256(key, `bytes[offset, offset + length)`) to
 * `out` at `outOffset`, allocating nothing. Truncation keeps the leftmost bytes (RFC 2104 §5).
 *
 * @category encoding
 */
export const hmacSha256Into = (
  key: HmacSha256Key,
  bytes: Uint8Array,
  offset: number,
  length: number,
  out: Uint8Array,
  outOffset: number,
  tagLength: number
): void => {
  absorb(key.inner, BLOCK_BYTES, bytes, offset, length, innerState)
  // The outer message is the 32-byte inner digest: one padded block, built from its words directly.
  const w = schedule
  for (let i = 0; i < 8; i++) w[i] = innerState[i]!
  w[8] = 0x80000000 | 0
  for (let i = 9; i < 15; i++) w[i] = 0
  w[15] = (BLOCK_BYTES + DIGEST_BYTES) * 8
  compress(key.outer, outerState)
  writeDigest(outerState, out, outOffset, Math.min(tagLength, DIGEST_BYTES))
}

/**
 * HMAC-SHA-256 of `message` under `key` (a raw secret or a prepared {@link HmacSha256Key}): 32
 * bytes, or the leftmost `tagLength` bytes when given.
 *
 * @category encoding
 */
export const hmacSha256 = (
  key: HmacSha256Key | Uint8Array,
  message: Uint8Array,
  tagLength: number = DIGEST_BYTES
): Uint8Array => {
  const prepared = key instanceof Uint8Array ? hmacSha256Key(key) : key
  const out = new Uint8Array(Math.max(0, Math.min(tagLength, DIGEST_BYTES)))
  hmacSha256Into(prepared, message, 0, message.length, out, 0, out.length)
  return out
}

/**
 * Compares `a[aOffset, aOffset + length)` with `b[bOffset, bOffset + length)` in time that depends
 * only on `length`, so that a forger learns nothing from how long a wrong tag takes to reject.
 *
 * @category guards
 */
export const timingSafeEqual = (
  a: Uint8Array,
  aOffset: number,
  b: Uint8Array,
  bOffset: number,
  length: number
): boolean => {
  let diff = 0
  for (let i = 0; i < length; i++) diff |= (a[aOffset + i] ?? 0x100) ^ (b[bOffset + i] ?? 0x200)
  return diff === 0
}
