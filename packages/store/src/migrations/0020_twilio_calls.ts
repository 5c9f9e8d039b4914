/**
 * The Twilio adapter's own record of its calls (issue 14, "Exactly once without carrier idempotency"; decision
 * 0601). Twilio has no idempotency key, so the adapter writes a row per key before it asks Twilio for a call
 * (`status = 'requesting'`), sets the call SID when Twilio answers, and the status callbacks (received by any
 * server process, `POST /carrier/twilio/status`) move the row forward. A row left in `requesting` by a crash is
 * resolved by asking Twilio for calls between the same numbers since `requested_at`.
 *
 * `status_rank` makes the callbacks monotonic: Twilio does not guarantee their order, and a late `ringing` must not
 * undo a `completed`; a terminal status (rank 5) never changes again, so a replayed callback changes nothing.
 * `NOTIFY twilio_calls` (payload: the key) wakes the worker whose `dial` waits for that call's end.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE twilio_calls (
      idempotency_key text PRIMARY KEY,
      call_id text NOT NULL,
      account_sid text NOT NULL,
      from_number text NOT NULL,
      to_number text NOT NULL,
      -- epoch ms, written before the create request is sent (the lower bound of a crash-recovery search)
      requested_at bigint NOT NULL,
      call_sid text UNIQUE,
      status text NOT NULL DEFAULT 'requesting' CHECK (status IN ('requesting', 'rejected', 'queued', 'initiated',
        'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'failed', 'canceled')),
      status_rank smallint NOT NULL DEFAULT 0,
      -- Twilio's answering-machine detection result (human, machine_start, machine_end_beep, fax, unknown, ...)
      answered_by text,
      sip_response_code integer,
      error_code integer,
      -- why Twilio refused the create request (DialRejected), when status = 'rejected'
      rejection text,
      start_timestamp bigint,
      end_timestamp bigint,
      duration_s integer,
      updated_at bigint NOT NULL
    )`
  // the crash-recovery search and operators look rows up by number pair and time
  yield* sql`CREATE INDEX twilio_calls_unresolved ON twilio_calls (requested_at) WHERE status = 'requesting'`
})
