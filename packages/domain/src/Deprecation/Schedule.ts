/**
 * The spec's deprecation schedule as data (spec: Versioning, "Deprecation schedule", 12 rows).
 *
 * Rows that name several things become several rules (row 5: endpoints and agent fields; row 6:
 * endpoints and the hosted tool-protocol server; row 7: endpoints and the `multi` value; row 10:
 * the browser library and the create-web-call endpoint), so every rule has one kind and one
 * replacement. Statuses follow the spec's wording: a row that says "Removed:", "removed" or
 * "retired" moves to `removed` on its date; a row that says "deprecated" (or describes a change of
 * meaning) moves to `deprecated`; rows with two dates move through both. The server's
 * Deprecation/Sunset headers and 404s and the linter's findings all read this one table.
 *
 * @category models
 */
import { type EndpointPattern, milestone, type Rule, type RuleId } from "./Rule.ts"

const endpoint = (method: string, path: string, replacement: string, partial?: string): EndpointPattern =>
  partial === undefined ? { method, path, replacement } : { method, path, replacement, partial }

const ongoingCalls = "on ongoing calls (including `override_dynamic_variables` and `data_storage_setting` changes)"

/**
 * Every rule, in the order of the spec's table.
 *
 * @category models
 */
export const rules: ReadonlyArray<Rule> = [
  {
    // spec row 1 (01/23/2026): show_transferee_as_caller stops choosing REFER vs INVITE.
    id: "cold-transfer-mode",
    row: 1,
    kind: "field",
    title: "Cold transfer: show_transferee_as_caller no longer selects the SIP method",
    summary:
      "In cold-transfer options, `show_transferee_as_caller` no longer chooses between SIP REFER and SIP INVITE; " +
      "it only controls caller ID display under `sip_invite`. Affects create/update of LLMs, conversation flows " +
      "and flow components.",
    replacement: "`cold_transfer_mode` (`sip_refer` or `sip_invite`)",
    milestones: [
      milestone("2026-01-23", "deprecated", "show_transferee_as_caller only controls caller ID under sip_invite")
    ],
    configs: ["llm", "conversation-flow", "flow-component", "tool"],
    endpoints: [],
    fixable: true
  },
  {
    // spec row 2 (03/31/2026): phone number single-agent fields deprecated.
    id: "phone-number-single-agent-fields",
    row: 2,
    kind: "field",
    title: "Phone number single-agent fields",
    summary: "Phone number single-agent fields deprecated: inbound_agent_id, inbound_agent_version, " +
      "outbound_agent_id, outbound_agent_version, inbound_sms_agent_id, inbound_sms_agent_version, " +
      "outbound_sms_agent_id, outbound_sms_agent_version.",
    replacement: "the weighted lists `inbound_agents`, `outbound_agents`, `inbound_sms_agents`, `outbound_sms_agents`",
    milestones: [milestone("2026-03-31", "deprecated", "single-agent fields deprecated")],
    configs: ["phone-number"],
    endpoints: [],
    fixable: true
  },
  {
    // spec row 3 (04/03, 05/25, 07/12/2026): model retirements; the models are not named.
    id: "model-retirements",
    row: 3,
    kind: "value",
    title: "Retired speech, language and voice models",
    summary: "Certain speech, language and voice models retired and migrated automatically to named newer " +
      "ones on 04/03/2026, 05/25/2026 and 07/12/2026.",
    replacement: "a current model (retired models are migrated automatically to newer ones)",
    milestones: [
      milestone("2026-04-03", "deprecated", "first retirement wave"),
      milestone("2026-05-25", "deprecated", "second retirement wave"),
      milestone("2026-07-12", "removed", "last retirement wave: every model outside the catalogue is retired")
    ],
    configs: ["agent", "llm", "conversation-flow", "flow-component"],
    endpoints: [],
    fixable: false
  },
  {
    // spec row 4 (04/18/2026): tools on conversation nodes deprecated.
    id: "conversation-node-tools",
    row: 4,
    kind: "field",
    title: "Tools on conversation nodes",
    summary: "`tools` and `tool_ids` on conversation nodes of type `conversation` deprecated; existing ones " +
      "auto-migrated.",
    replacement: "a node of type `subagent`",
    milestones: [milestone("2026-04-18", "deprecated", "tools on conversation nodes deprecated")],
    configs: ["conversation-flow", "flow-component"],
    endpoints: [],
    fixable: true
  },
  {
    // spec row 5 (06/15/2026), first half: legacy (unversioned) list endpoints removed.
    id: "legacy-list-endpoints",
    row: 5,
    kind: "endpoint",
    title: "Legacy list endpoints",
    summary: "Removed: legacy list endpoints (batch tests, flow components, flows, phone numbers, LLMs, test " +
      "case definitions, test runs, calls, chats).",
    replacement: "the versioned (v2/v3) list endpoints",
    milestones: [milestone("2026-06-15", "removed", "legacy list endpoints removed")],
    configs: [],
    endpoints: [
      endpoint("*", "/list-batch-tests", "GET /v2/list-batch-tests"),
      endpoint("*", "/list-conversation-flow-components", "GET /v2/list-conversation-flow-components"),
      endpoint("*", "/list-conversation-flows", "GET /v2/list-conversation-flows"),
      endpoint("*", "/list-phone-numbers", "GET /v2/list-phone-numbers"),
      endpoint("*", "/list-svc-llms", "GET /v2/list-svc-llms"),
      // The vendor spelling, as sources written against the vendor's API still carry it.
      endpoint("*", "/list-retell-llms", "GET /v2/list-svc-llms"),
      endpoint("*", "/list-test-case-definitions", "GET /v2/list-test-case-definitions"),
      endpoint("*", "/list-test-runs/{test_case_batch_job_id}", "GET /v2/list-test-runs/{test_case_batch_job_id}"),
      endpoint("*", "/list-calls", "POST /v3/list-calls"),
      endpoint("*", "/list-chats", "POST /v3/list-chats")
    ],
    fixable: false
  },
  {
    // spec row 5 (06/15/2026), second half: agent analysis prompt fields removed.
    id: "legacy-analysis-prompts",
    row: 5,
    kind: "field",
    title: "Agent analysis prompt fields",
    summary: "Removed: agent fields analysis_summary_prompt, analysis_successful_prompt, " +
      "analysis_user_sentiment_prompt.",
    replacement: "`post_call_analysis_data` / `post_chat_analysis_data` system presets",
    milestones: [milestone("2026-06-15", "removed", "analysis prompt fields removed")],
    configs: ["agent"],
    endpoints: [],
    fixable: true
  },
  {
    // spec row 6 (07/20/2026), first half: publish endpoints removed.
    id: "publish-agent-endpoints",
    row: 6,
    kind: "endpoint",
    title: "Publish agent endpoints",
    summary: "Removed: `POST /publish-agent/{agent_id}` and `POST /publish-chat-agent/{agent_id}`.",
    replacement: "the agent-version endpoints (`POST /publish-agent-version/{agent_id}`)",
    milestones: [milestone("2026-07-20", "removed", "publish endpoints removed")],
    configs: [],
    endpoints: [
      endpoint("POST", "/publish-agent/{agent_id}", "POST /publish-agent-version/{agent_id}"),
      endpoint("POST", "/publish-chat-agent/{agent_id}", "POST /publish-agent-version/{agent_id}")
    ],
    fixable: false
  },
  {
    // spec row 6 (07/20/2026), second half: the legacy hosted tool-protocol server.
    id: "legacy-mcp-server",
    row: 6,
    kind: "integration",
    title: "Legacy hosted tool-protocol (MCP) server",
    summary: "The legacy hosted tool-protocol server at its old host was removed.",
    replacement: "the current server at {mcp_url}, same bearer auth",
    milestones: [milestone("2026-07-20", "removed", "legacy hosted tool-protocol server removed")],
    configs: [],
    endpoints: [],
    fixable: false
  },
  {
    // spec row 7 (07/31/2026), first half: GET list-agents endpoints removed.
    id: "list-agents-v1",
    row: 7,
    kind: "endpoint",
    title: "GET list-agents endpoints",
    summary: "Removed: `GET /list-agents` and `GET /list-chat-agents`.",
    replacement: "`POST /v2/list-agents` with a `channel` filter (voice or chat)",
    milestones: [milestone("2026-07-31", "removed", "GET list-agents endpoints removed")],
    configs: [],
    endpoints: [
      endpoint("GET", "/list-agents", "POST /v2/list-agents with a channel filter (voice)"),
      endpoint("GET", "/list-chat-agents", "POST /v2/list-agents with a channel filter (chat)")
    ],
    fixable: false
  },
  {
    // spec row 7 (07/31/2026), second half: the scalar `multi` language value removed.
    id: "agent-language-multi",
    row: 7,
    kind: "value",
    title: "Scalar agent language `multi`",
    summary: "Removed: scalar `multi` value of agent `language` (existing agents migrated to an equivalent " +
      "array of 10 locales).",
    replacement: "a locale array such as [\"en-US\", \"es-ES\"] (two or more locale codes)",
    milestones: [milestone("2026-07-31", "removed", "scalar multi rejected")],
    configs: ["agent"],
    endpoints: [],
    fixable: true
  },
  {
    // spec row 8 (08/31/2026): update-call becomes ended-calls-only.
    id: "update-call-live-fields",
    row: 8,
    kind: "endpoint",
    title: "Update Call on ongoing calls",
    summary: "On Update Call, `override_dynamic_variables` deprecated and the operation becomes " +
      "ended-calls-only, including `data_storage_setting` changes.",
    replacement: "`PATCH /v2/update-live-call/{call_id}` for ongoing calls",
    milestones: [milestone("2026-08-31", "deprecated", "update-call ended-calls-only")],
    configs: [],
    endpoints: [
      endpoint(
        "PATCH",
        "/v2/update-call/{call_id}",
        "PATCH /v2/update-live-call/{call_id} for ongoing calls",
        ongoingCalls
      ),
      endpoint(
        "PATCH",
        "/update-call/{call_id}",
        "PATCH /v2/update-live-call/{call_id} for ongoing calls",
        ongoingCalls
      )
    ],
    fixable: false
  },
  {
    // spec row 9 (09/15/2026): get-agent-versions endpoints removed.
    id: "get-agent-versions",
    row: 9,
    kind: "endpoint",
    title: "get-agent-versions endpoints",
    summary: "`GET /get-agent-versions/{agent_id}` and `GET /get-chat-agent-versions/{agent_id}` removed.",
    replacement: "`GET /list-agent-versions/{agent_id}`",
    milestones: [milestone("2026-09-15", "removed", "get-agent-versions endpoints removed")],
    configs: [],
    endpoints: [
      endpoint("GET", "/get-agent-versions/{agent_id}", "GET /list-agent-versions/{agent_id}"),
      endpoint("GET", "/get-chat-agent-versions/{agent_id}", "GET /list-agent-versions/{agent_id}")
    ],
    fixable: false
  },
  {
    // spec row 10 (09/30/2026), first half: browser client library v2 deprecated.
    id: "web-client-v2",
    row: 10,
    kind: "integration",
    title: "Browser client library v2",
    summary: "Browser client library v2 deprecated (replace the web client class with the new client class " +
      "and update event handlers).",
    replacement: "browser client library v3",
    milestones: [milestone("2026-09-30", "deprecated", "browser client library v2 deprecated")],
    configs: [],
    endpoints: [],
    fixable: false
  },
  {
    // spec row 10 (09/30/2026), second half: POST /v2/create-web-call deprecated.
    id: "create-web-call-v2",
    row: 10,
    kind: "endpoint",
    title: "POST /v2/create-web-call",
    summary: "`POST /v2/create-web-call` deprecated.",
    replacement: "`POST /v3/create-web-call`",
    milestones: [milestone("2026-09-30", "deprecated", "v2 create-web-call deprecated")],
    configs: [],
    endpoints: [endpoint("POST", "/v2/create-web-call", "POST /v3/create-web-call")],
    fixable: false
  },
  {
    // spec row 11 (09/30/2026): legacy SIP endpoint retired; deprecated since 11/2025 (no day given:
    // the first of the month is used).
    id: "legacy-sip-endpoint",
    row: 11,
    kind: "integration",
    title: "Legacy SIP endpoint",
    summary: "Legacy SIP endpoint (deprecated since 11/2025) retired; calls to it may stop connecting.",
    replacement: "`sip:{sip_server}` for trunks and dial-to-SIP (`sip:{call_id}@{sip_server}`, call_id from " +
      "the register-phone-call operation)",
    milestones: [
      milestone("2025-11-01", "deprecated", "legacy SIP endpoint deprecated (11/2025)"),
      milestone("2026-09-30", "removed", "legacy SIP endpoint retired")
    ],
    configs: [],
    endpoints: [],
    fixable: false
  },
  {
    // spec row 12 (09/30/2026 and 10/31/2026): built-in calendar tool types.
    id: "calendar-cal-tools",
    row: 12,
    kind: "field",
    title: "Built-in calendar tools check_availability_cal and book_appointment_cal",
    summary: "Built-in calendar tool types `check_availability_cal` and `book_appointment_cal`: the API stops " +
      "creating and updating them on 09/30/2026; existing tools run until 10/31/2026, then are migrated to " +
      "the calendar integration; a tool whose calendar key has expired is skipped and stops working.",
    replacement: "the calendar integration",
    milestones: [
      milestone("2026-09-30", "deprecated", "no longer created or updated; existing tools keep running"),
      milestone("2026-10-31", "removed", "existing tools migrated to the calendar integration")
    ],
    configs: ["llm", "conversation-flow", "flow-component", "tool"],
    endpoints: [],
    fixable: false
  }
]

const byId: ReadonlyMap<RuleId, Rule> = new Map(rules.map((rule) => [rule.id, rule]))

/**
 * The rule with an id.
 *
 * @category combinators
 */
export const getRule = (id: RuleId): Rule => {
  const rule = byId.get(id)
  // Every RuleId has a row in `rules` (checked by the schedule tests).
  if (rule === undefined) throw new Error(`unknown deprecation rule ${id}`)
  return rule
}

/**
 * Whether a string is a rule id (for config files and inline disable comments).
 *
 * @category guards
 */
export const isRuleId = (id: string): id is RuleId => byId.has(id as RuleId)

/**
 * All rule ids, in schedule order.
 *
 * @category models
 */
export const ruleIds: ReadonlyArray<RuleId> = rules.map((rule) => rule.id)
