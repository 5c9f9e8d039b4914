/**
 * Whether a failure means "the database is not there right now" (refused, dropped, shutting down,
 * starting up, out of connections) rather than "this request or this code is wrong". The first is an
 * outage: callers answer 503 with Retry-After and wait for it to heal, logging once per state change;
 * the second stays a 500 with its cause logged (decision 0009: a killed postmaster made every request a
 * 500 with a stack trace).
 */

/** SQLSTATEs of an outage: connection exceptions (08), admin/crash shutdown, cannot connect now, too many connections. */
const OUTAGE_SQLSTATE = /^(08...|57P01|57P02|57P03|53300)$/

/** Node socket errors that mean the server is not reachable. */
const OUTAGE_ERRNO = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"])

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null && name in value ? (value as Record<string, unknown>)[name] : undefined

/**
 * True when `error` (a squashed cause: an `SqlError`, its reason, a socket error, anything wrapping
 * them in `cause`) is a database outage.
 *
 * @category predicates
 */
export const isUnavailable = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    // effect/sql's SqlError carries its classification in `reason`; ConnectionError is the outage one.
    const reason = field(current, "reason")
    if (field(reason, "_tag") === "ConnectionError" || field(current, "_tag") === "ConnectionError") return true
    const code = field(current, "code")
    if (typeof code === "string" && (OUTAGE_SQLSTATE.test(code) || OUTAGE_ERRNO.has(code))) return true
    current = field(reason, "cause") ?? field(current, "cause")
  }
  return false
}
