/**
 * A claim's lease over its tasks (docs/decisions/0401-scheduler-row-leasing.md): the claim commits a task `dialling`
 * with a lease before its dial; while calls last a heartbeat renews the worker's leases every third of the lease time;
 * a dial is not started when its claim is within 1 s of expiring (a stalled worker leaves it to expire and be
 * reconciled, so no two workers act on one task).
 */

/**
 * A dial must start at least this long before its lease ends.
 *
 * @category models
 */
export const safetyMs = 1_000

/**
 * Whether a claimed task's dial may start at `now`, given when its lease ends.
 *
 * @category guards
 */
export const mayStartDial = (now: number, leaseExpiresAt: number): boolean => now <= leaseExpiresAt - safetyMs

/**
 * How long the heartbeat waits between renewals: a third of the lease, in whole milliseconds, at least one.
 *
 * @category combinators
 */
export const heartbeatMs = (leaseMs: number): number => Math.max(1, Math.floor(leaseMs / 3))
