/**
 * The columns a call and a contact's conversation share (when it started, how long it lasted, why it ended), written
 * once so the Calls page and a contact's history read the same fields the same way.
 */
import { dateTime, duration, isoTime } from "../Format.ts"
import type { Column } from "./VirtualTable.tsx"

/** What the spec's call and conversation objects both carry. */
interface Timed {
  readonly start_timestamp?: number
  readonly duration_ms?: number
  readonly disconnection_reason?: string
}

/** Started, Length and Ended because; `startedOptional` hides Started at phone width (the Calls page has more). */
export const timingColumns = <A extends Timed>(
  options: { readonly startedOptional: boolean }
): ReadonlyArray<Column<A>> => [
  {
    header: "Started",
    width: "minmax(9rem, 1.4fr)",
    optional: options.startedOptional,
    render: (c) => <time dateTime={isoTime(c.start_timestamp)}>{dateTime(c.start_timestamp)}</time>
  },
  {
    header: "Length",
    width: "minmax(4rem, 0.6fr)",
    optional: true,
    render: (c) => c.duration_ms === undefined ? "" : duration(c.duration_ms)
  },
  {
    header: "Ended because",
    width: "minmax(8rem, 1.4fr)",
    optional: true,
    render: (c) => c.disconnection_reason ?? ""
  }
]
