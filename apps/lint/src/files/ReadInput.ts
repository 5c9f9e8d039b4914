/**
 * Reading a file for linting: its bytes and its stat in one open, fstat, read and close, or why it is not checked
 * (larger than --max-file-size, unreadable, binary content).
 */
import * as fs from "node:fs"
import type { InputFile } from "./Discovery.ts"

const BINARY_PROBE = 8000

/** A text file's bytes and its stat, or why the file is not checked. */
export type FileInput =
  | { readonly buffer: Buffer; readonly stat: fs.Stats }
  | { readonly skipped: string }

const readAll = (fd: number, size: number): Buffer => {
  const buffer = Buffer.allocUnsafe(size)
  let offset = 0
  while (offset < size) {
    const n = fs.readSync(fd, buffer, offset, size - offset, null)
    if (n === 0) return buffer.subarray(0, offset)
    offset += n
  }
  // Files whose stat size is 0 or too small (procfs, a file still being written): read to the end.
  const more: Array<Buffer> = []
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024)
    const n = fs.readSync(fd, chunk, 0, chunk.length, null)
    if (n === 0) break
    more.push(chunk.subarray(0, n))
  }
  return more.length === 0 ? buffer : Buffer.concat([buffer, ...more])
}

/**
 * Reads a file for linting, or says why it is skipped. One open, fstat, read and close: the stat
 * comes with the bytes, so the cache (LintCache.ts) records it without another system call.
 */
export const readInput = (file: InputFile, maxFileSize: number): FileInput => {
  let fd: number
  try {
    fd = fs.openSync(file.path, "r")
  } catch (error) {
    // Same answer as stat-then-read: a file too large is reported as such even when unreadable.
    try {
      const size = fs.statSync(file.path).size
      if (size > maxFileSize) return { skipped: `larger than --max-file-size (${size} > ${maxFileSize} bytes)` }
    } catch {
      // reported below
    }
    return { skipped: `unreadable (${(error as NodeJS.ErrnoException).code ?? String(error)})` }
  }
  let buffer: Buffer
  let stat: fs.Stats
  try {
    stat = fs.fstatSync(fd)
    if (stat.size > maxFileSize) return { skipped: `larger than --max-file-size (${stat.size} > ${maxFileSize} bytes)` }
    buffer = readAll(fd, stat.size)
  } catch (error) {
    return { skipped: `unreadable (${(error as NodeJS.ErrnoException).code ?? String(error)})` }
  } finally {
    fs.closeSync(fd)
  }
  const probe = buffer.length > BINARY_PROBE ? buffer.subarray(0, BINARY_PROBE) : buffer
  if (probe.includes(0)) return { skipped: "binary content" }
  return { buffer, stat }
}
