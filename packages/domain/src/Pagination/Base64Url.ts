/**
 * Strict, unpadded base64url (RFC 4648 §5) between strings and byte ranges. Decoding writes into
 * a buffer the caller owns, so checking a key allocates nothing.
 *
 * Decoding accepts only the canonical form: the URL-safe alphabet, no `=` padding, no whitespace, a
 * length that is not 1 modulo 4, and zero bits in the unused low bits of the last character. So every
 * byte string has exactly one encoding, and changing any character of a key changes its bytes,
 * which the pagination key's MAC then rejects.
 *
 * @internal
 */

import { fromCharCodes } from "./Binary.ts"

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Character code -> 6-bit value, or -1 outside the alphabet (codes >= 128 are rejected before lookup).
const VALUES = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i

const CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0))

/**
 * The unpadded base64url encoding of `bytes[offset, offset + length)`.
 *
 * @category encoding
 */
export const encode = (bytes: Uint8Array, offset: number = 0, length: number = bytes.length - offset): string => {
  // Collect character codes and build the string once: appending would leave a rope for the first
  // reader to flatten, which costs more than the encoding itself.
  const codes: Array<number> = []
  const end = offset + length
  let i = offset
  for (; end - i >= 3; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    codes.push(CODES[n >>> 18]!, CODES[(n >>> 12) & 63]!, CODES[(n >>> 6) & 63]!, CODES[n & 63]!)
  }
  const rest = end - i
  if (rest === 1) {
    const n = bytes[i]!
    codes.push(CODES[n >>> 2]!, CODES[(n << 4) & 63]!)
  } else if (rest === 2) {
    const n = (bytes[i]! << 8) | bytes[i + 1]!
    codes.push(CODES[n >>> 10]!, CODES[(n >>> 4) & 63]!, CODES[(n << 2) & 63]!)
  }
  return fromCharCodes(codes)
}

/**
 * The number of bytes `length` base64url characters decode to, or -1 when no byte string has an
 * unpadded encoding of that length.
 *
 * @category encoding
 */
export const decodedLength = (length: number): number => length % 4 === 1 ? -1 : Math.floor(length * 3 / 4)

const valueAt = (input: string, index: number): number => {
  const code = input.charCodeAt(index)
  return code < 128 ? VALUES[code]! : -1
}

/**
 * Decodes `input` into `out` from index 0 and returns the number of bytes written, or -1 when
 * `input` is not canonical unpadded base64url or `out` is too short. Never throws.
 *
 * @category encoding
 */
export const decodeInto = (input: string, out: Uint8Array): number => {
  const size = decodedLength(input.length)
  if (size < 0 || size > out.length) return -1
  const full = input.length - (input.length % 4)
  let o = 0
  for (let i = 0; i < full; i += 4) {
    const a = input.charCodeAt(i)
    const b = input.charCodeAt(i + 1)
    const c = input.charCodeAt(i + 2)
    const d = input.charCodeAt(i + 3)
    if ((a | b | c | d) >= 128) return -1
    const n = (VALUES[a]! << 18) | (VALUES[b]! << 12) | (VALUES[c]! << 6) | VALUES[d]!
    // An invalid character is -1, whose sign bit survives every shift above.
    if (n < 0) return -1
    out[o++] = n >>> 16
    out[o++] = n >>> 8
    out[o++] = n
  }
  const rest = input.length - full
  if (rest === 2) {
    const a = valueAt(input, full)
    const b = valueAt(input, full + 1)
    // The last character carries 2 meaningful bits: the other 4 must be zero (canonical form).
    if ((a | b) < 0 || (b & 0x0f) !== 0) return -1
    out[o++] = (a << 2) | (b >>> 4)
  } else if (rest === 3) {
    const a = valueAt(input, full)
    const b = valueAt(input, full + 1)
    const c = valueAt(input, full + 2)
    if ((a | b | c) < 0 || (c & 0x03) !== 0) return -1
    const n = (a << 10) | (b << 4) | (c >>> 2)
    out[o++] = n >>> 8
    out[o++] = n
  }
  return o
}
