/**
 * The shapes of the API answers the console reads (docs/api.md). Written here rather than imported from the
 * contract: the console is a client of the public API like any other (docs/decisions/0800), and reads only the
 * members it shows.
 */

export const TASK_STATES = ["pending", "dialling", "unknown", "completed", "failed", "skipped", "cancelled"] as const
export type TaskState = typeof TASK_STATES[number]

export interface Page<A> {
  readonly has_more: boolean
  readonly items: ReadonlyArray<A>
  readonly pagination_key?: string
  readonly total?: number
}

export interface ZoneSet {
  readonly zones: ReadonlyArray<string>
  readonly rules: ReadonlyArray<string>
  readonly pending_tasks: number
  readonly blocked_by: string | null
  readonly state_reason: string | null
  readonly next_opening_timestamp: number | null
}

export interface LegalHours {
  readonly policy_version: number
  readonly unconstrained_tasks: number
  readonly dialable_now_tasks: number
  readonly held_back: ReadonlyArray<{ readonly rule: string; readonly tasks: number }>
  readonly never_within_horizon_tasks: number
  readonly zone_sets: ReadonlyArray<ZoneSet>
}

export interface BatchCall {
  readonly batch_call_id: string
  readonly name: string
  readonly from_number: string
  readonly status: "scheduled" | "in_progress" | "paused" | "completed" | "cancelled"
  readonly total_task_count: number
  readonly scheduled_timestamp: number
  readonly created_timestamp: number
  readonly max_concurrency?: number
  readonly tasks: Readonly<Record<TaskState, number>>
  readonly calls_placed: number
  readonly calls_in_flight: number
  readonly window_open_now: boolean
  readonly next_window_opening_timestamp: number | null
  readonly estimated_completion_timestamp: number | null
  readonly completed_timestamp: number | null
  readonly cancelled_timestamp: number | null
  readonly legal_hours?: LegalHours
}

export interface BatchTask {
  readonly task_id: string
  readonly to_number: string
  readonly state: TaskState
  readonly state_reason: string | null
  readonly attempts: number
  readonly last_call_id: string | null
  readonly last_outcome: string | null
  readonly next_attempt_timestamp: number | null
}

export interface RetryAnswer {
  readonly requeued_task_count: number
}

export interface TranscriptTurn {
  readonly role: string
  readonly content: string
}

export interface Call {
  readonly call_id: string
  readonly call_status: string
  readonly agent_id?: string
  readonly from_number?: string
  readonly to_number?: string
  readonly direction?: string
  readonly batch_call_id?: string
  readonly start_timestamp?: number
  readonly end_timestamp?: number
  readonly duration_ms?: number
  readonly disconnection_reason?: string
  readonly transcript?: string
  readonly transcript_object?: ReadonlyArray<TranscriptTurn>
  readonly call_analysis?: Readonly<Record<string, unknown>>
  readonly metadata?: unknown
  readonly opt_out?: boolean
}

export interface Contact {
  readonly contact_id: string
  readonly phone_number: string
  readonly first_name?: string
  readonly last_name?: string
  readonly external_id?: string
  readonly do_not_call: boolean
  readonly contact_tags: ReadonlyArray<string>
  readonly custom_fields: Readonly<Record<string, unknown>>
  readonly conversation_count: number
  readonly last_conversation_timestamp?: number
  readonly created_timestamp: number
}

export interface Conversation {
  readonly type: "call" | "chat"
  readonly call_id?: string
  readonly chat_id?: string
  readonly direction?: string
  readonly disconnection_reason?: string
  readonly duration_ms?: number
  readonly start_timestamp?: number
  readonly summary?: string
  readonly successful?: boolean
}

export interface DeliveryAttempt {
  readonly attempted_timestamp: number
  readonly status_code: number | null
  readonly error: string | null
  readonly duration_ms: number
}

export interface WebhookDelivery {
  readonly event_id: string
  readonly call_id: string
  readonly event: string
  readonly url: string
  readonly state: "pending" | "delivered" | "gone" | "failed"
  readonly failing: boolean
  readonly attempt_count: number
  readonly attempts: ReadonlyArray<DeliveryAttempt>
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly next_retry_timestamp: number | null
  readonly finished_timestamp: number | null
}

export interface TestJob {
  readonly test_case_batch_job_id: string
  readonly status: string
  readonly pass_count: number
  readonly fail_count: number
  readonly error_count: number
  readonly total_count: number
  readonly creation_timestamp?: number
  readonly user_modified_timestamp?: number
}

export interface TestRun {
  readonly test_case_job_id: string
  readonly test_case_definition_id: string
  readonly status: string
  readonly result_explanation?: unknown
  readonly transcript_snapshot?: unknown
  readonly test_case_definition_snapshot?: { readonly name?: string }
}
