/**
 * One sentence for a SQL failure, down to the root cause ("Failed to connect: connect
 * ECONNREFUSED 127.0.0.1:5432"), because the wrapper's own message alone does not tell an
 * operator what to fix.
 */

/** @category encoding */
export const describe = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const message = current instanceof Error || (typeof current === "object" && "message" in current)
      ? String((current as { message: unknown }).message)
      : String(current)
    if (message && !parts.some((p) => p.includes(message))) parts.push(message)
    current = typeof current === "object" && "cause" in current ? (current as { cause: unknown }).cause : undefined
  }
  return parts.join(": ")
}
