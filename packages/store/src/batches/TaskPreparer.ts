/**
 * Preparing a create-batch-call request: the task columns and the body hash, in one pass over the tasks, a chunk at
 * a time (decisions 0302, 0303).
 */
import type { ContactLocation } from "@svc/domain/compliance/RecipientZones.ts"
import type { BatchCallTask } from "@svc/domain/models/BatchCallTask.ts"
import * as crypto from "node:crypto"
import { TooManyTasks, UnstorableText } from "./BatchCallErrors.ts"
import type { CreateBatchCallHead, TaskGrouper } from "./BatchCallModels.ts"
import { canonical, canonicalJson, hasUnstorable } from "./CanonicalJson.ts"

/** Column arrays of the tasks insert, in task order; `null` where a task has no value. */
export interface TaskColumns {
  readonly toNumber: Array<string>
  readonly agentId: Array<string | null>
  readonly agentVersion: Array<number | null>
  readonly agentVersionName: Array<string | null>
  readonly agentOverride: Array<string | null>
  readonly dynamicVariables: Array<string | null>
  readonly metadata: Array<string | null>
  readonly customSipHeaders: Array<string | null>
  /** The task's legal group (LegalGroups; null = unconstrained), decision 0623. */
  readonly legalGroup: Array<number | null>
}

/** Distinct (agent id, version or -1 for "any version") pairs in order of first use, with that task's index. */
export type AgentUses = Array<{ readonly agentId: string; readonly version: number; readonly taskIndex: number }>

export const INT4_MAX = 2_147_483_647

/** Every field of a task this module stores or hashes; a test fails when the task schema gains another. */
export const TASK_FIELDS = [
  "to_number",
  "ignore_e164_validation",
  "override_agent_id",
  "override_agent_version",
  "agent_override",
  "svc_llm_dynamic_variables",
  "metadata",
  "custom_sip_headers"
] as const

/** The first field of the request's own (non-task) fields holding a string PostgreSQL cannot store. */
export const findUnstorableHead = (head: CreateBatchCallHead): string | undefined => {
  for (const [key, value] of Object.entries(head)) {
    if (key !== "tasks" && hasUnstorable(value)) return key
  }
  return undefined
}

export const unstorable = (field: string) =>
  new UnstorableText({
    field,
    message: `${field} contains a NUL character (\\u0000) or an unpaired surrogate, which cannot be stored`
  })

/**
 * The tasks of one create, taken a chunk at a time as the request arrives: each chunk becomes the column arrays
 * of one insert, and every task goes into the request's hash and the list of override agents to check. The
 * first refusal the tasks alone decide (too many tasks, a string PostgreSQL cannot store) is kept and ends the
 * columns: nothing more needs storing for a request that will be refused.
 *
 * The hash (SHA-256) covers a version tag, then per task in order the canonical JSON of its stored values (jsonb
 * values with object keys sorted), then the canonical JSON of the request's other fields: equal for bodies a
 * client means as equal, whatever their key order or whitespace, and whatever the chunks they arrived in.
 */
export class TaskPreparer {
  count = 0
  refusal: TooManyTasks | UnstorableText | undefined
  readonly agents: AgentUses = []
  private readonly seenAgents = new Set<string>()
  private readonly hash = crypto.createHash("sha256").update("create-batch-call v2\n")
  private readonly maxTasks: number
  /**
   * Legal groups of the batch's tasks, assigned in task order (decision 0623) by the create's caller's grouper
   * (`CreateOptions.legalGrouper`): which rules bind a number is a compliance decision, not the store's (dependency
   * rule 3).
   */
  readonly legal: TaskGrouper

  constructor(maxTasks: number, legal: TaskGrouper) {
    this.maxTasks = maxTasks
    this.legal = legal
  }

  /** The chunk's columns and the index of its first task, or `undefined` once the request is refused. */
  add(tasks: ReadonlyArray<BatchCallTask>): { readonly offset: number; readonly columns: TaskColumns } | undefined {
    const offset = this.count
    this.count += tasks.length
    if (this.refusal === undefined && this.count > this.maxTasks) {
      this.refusal = new TooManyTasks({
        count: this.count,
        max: this.maxTasks,
        message: `tasks has more than ${this.maxTasks} tasks; a batch holds at most ${this.maxTasks}`
      })
    }
    if (this.refusal !== undefined) return undefined
    const count = tasks.length
    const columns: TaskColumns = {
      toNumber: new Array(count),
      agentId: new Array(count),
      agentVersion: new Array(count),
      agentVersionName: new Array(count),
      agentOverride: new Array(count),
      dynamicVariables: new Array(count),
      metadata: new Array(count),
      customSipHeaders: new Array(count),
      legalGroup: new Array(count)
    }
    for (let i = 0; i < count; i++) {
      const task = tasks[i]!
      const version = task.override_agent_version
      const agentVersion = typeof version === "number" ? version : null
      const agentVersionName = typeof version === "string" ? version : null
      const agentOverride = task.agent_override === undefined ? null : canonicalJson(task.agent_override)
      const dynamicVariables = task.svc_llm_dynamic_variables === undefined
        ? null
        : canonicalJson(task.svc_llm_dynamic_variables)
      const metadata = task.metadata === undefined ? null : canonicalJson(task.metadata)
      const customSipHeaders = task.custom_sip_headers === undefined ? null : canonicalJson(task.custom_sip_headers)
      const record = JSON.stringify([
        task.to_number,
        task.ignore_e164_validation ?? null,
        task.override_agent_id ?? null,
        agentVersion,
        agentVersionName,
        agentOverride,
        dynamicVariables,
        metadata,
        customSipHeaders
      ])
      // JSON.stringify writes U+0000 and unpaired surrogates as \u escapes; without one, nothing needs a closer look
      if (record.includes("\\u")) {
        const field = Object.entries(task).find(([, value]) => hasUnstorable(value))?.[0]
        if (field !== undefined) {
          this.refusal = unstorable(`tasks[${offset + i}].${field}`)
          return undefined
        }
      }
      this.hash.update(record).update("\n")
      columns.toNumber[i] = task.to_number
      columns.agentId[i] = task.override_agent_id ?? null
      columns.agentVersion[i] = agentVersion
      columns.agentVersionName[i] = agentVersionName
      columns.agentOverride[i] = agentOverride
      columns.dynamicVariables[i] = dynamicVariables
      columns.metadata[i] = metadata
      columns.customSipHeaders[i] = customSipHeaders
      // assigned in assignLegal, once the contacts' location fields of the chunk's numbers are known
      columns.legalGroup[i] = null
      if (task.override_agent_id !== undefined) {
        // a name ("latest", "latest_published", a tag) resolves at dial time: the agent must exist in some version
        const wanted = typeof version === "number" ? version : -1
        const pair = `${wanted}:${task.override_agent_id}`
        if (!this.seenAgents.has(pair)) {
          this.seenAgents.add(pair)
          this.agents.push({ agentId: task.override_agent_id, version: wanted, taskIndex: offset + i })
        }
      }
    }
    return { offset, columns }
  }

  /**
   * The chunk's legal groups (decisions 0620, 0623): from each number and, when the org has a contact for
   * it with location custom fields (`timezone`, `state`), from those too: a timezone narrows the number's candidate
   * zones (or adds itself to them), an address state adds its zones and its rules.
   */
  assignLegal(columns: TaskColumns, contacts: ReadonlyMap<string, ContactLocation>): void {
    for (let i = 0; i < columns.toNumber.length; i++) {
      const toNumber = columns.toNumber[i]!
      columns.legalGroup[i] = this.legal.assign(toNumber, contacts.get(toNumber))
    }
  }

  /** The request's hash, once every task was added. */
  digest(head: CreateBatchCallHead): Uint8Array {
    const { tasks: _tasks, ...fields } = head as CreateBatchCallHead & { readonly tasks?: unknown }
    return this.hash.update("request\n").update(canonical(fields)).digest()
  }
}

/**
 * A column array as a bind parameter. The driver infers an array's type from its elements and cannot type an
 * array of only NULLs; an empty array is bound untyped instead, and the lockstep `unnest`s of the insert pad it
 * with NULLs to the length of the longest array, which is the same thing.
 */
export const column = <A>(values: Array<A | null>): Array<A | null> => values.some((v) => v !== null) ? values : []

/**
 * Versions as one bind type: the driver binds a JS integer as int4 when it fits and int8 otherwise, and refuses an
 * array that mixes the two.
 */
export const int8 = (values: Array<number | null>): Array<number | bigint | null> =>
  values.some((v) => v !== null && v > INT4_MAX) ? values.map((v) => v === null ? null : BigInt(v)) : values
