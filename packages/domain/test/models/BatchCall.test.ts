import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { BatchCall, CreateBatchCallRequest } from "../../src/models/BatchCall.ts"
import { BatchCallTask } from "../../src/models/BatchCallTask.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { E164 } from "../../src/models/E164.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// as the HTTP edge decodes it
const decode = (input: unknown) =>
  Schema.decodeUnknownResult(CreateBatchCallRequest)(input, { ...requestParseOptions, reportInput: true })

const failure = (input: unknown): string => {
  const result = decode(input)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure)
}

const encode = Schema.encodeSync(CreateBatchCallRequest)

// The vendor client's "only required params" example.
const minimal = { from_number: "+14157774444", tasks: [{ to_number: "+12137774445" }] }

// The vendor client's "required and optional params" example, with the vendor word replaced by `svc` (spec,
// Conventions). It carries vendor fields the spec does not list: the older settings (enable_voicemail_detection,
// ...) are kept; the analysis_*_prompt fields were removed by the schedule on 06/15/2026 and are refused.
const full = {
  from_number: "+14157774444",
  tasks: [
    {
      to_number: "+12137774445",
      agent_override: {
        agent: {
          agent_name: "Jarvis",
          allow_user_dtmf: true,
          ambient_sound: "coffee-shop",
          ambient_sound_volume: 1,
          analysis_successful_prompt: "The agent finished the task and the call was complete without being cutoff.",
          analysis_summary_prompt: "Summarize the outcome of the conversation in two sentences.",
          backchannel_frequency: 0.9,
          backchannel_words: ["yeah", "uh-huh"],
          begin_message_delay_ms: 1000,
          boosted_keywords: ["svc", "kroger"],
          custom_stt_config: { endpointing_ms: 0, provider: "azure" },
          data_storage_setting: "everything",
          denoising_mode: "noise-cancellation",
          enable_backchannel: true,
          enable_voicemail_detection: true,
          end_call_after_silence_ms: 600000,
          fallback_voice_ids: ["openai-Alloy", "deepgram-Angus"],
          interruption_sensitivity: 1,
          is_public: false,
          language: "en-US",
          max_call_duration_ms: 3600000,
          normalize_for_speech: true,
          opt_in_signed_url: true,
          pii_config: { categories: ["person_name"], mode: "post_call" },
          post_call_analysis_data: [
            {
              description: "The name of the customer.",
              name: "customer_name",
              type: "string",
              examples: ["John Doe", "Jane Smith"]
            }
          ],
          post_call_analysis_model: "gpt-4.1-mini",
          pronunciation_dictionary: [{ alphabet: "ipa", phoneme: "ˈæktʃuəli", word: "actually" }],
          reminder_max_count: 2,
          reminder_trigger_ms: 10000,
          response_engine: { llm_id: "llm_234sdertfsdsfsdf", type: "svc-llm", version: 0 },
          responsiveness: 1,
          ring_duration_ms: 30000,
          signed_url_expiration_ms: 86400000,
          stt_mode: "fast",
          user_dtmf_options: { digit_limit: 1, termination_key: "#", timeout_ms: 1000 },
          version_description: "Customer support agent for handling product inquiries",
          vocab_specialization: "general",
          voice_id: "11labs-Adrian",
          voice_model: "eleven_turbo_v2",
          voice_speed: 1,
          voice_temperature: 1,
          voicemail_detection_timeout_ms: 30000,
          voicemail_message: "Hi, please give us a callback.",
          voicemail_option: { action: { text: "Please give us a callback tomorrow at 10am.", type: "static_text" } },
          volume: 1,
          webhook_timeout_ms: 10000,
          webhook_url: "https://webhook-url-here"
        },
        conversation_flow: {
          begin_after_user_silence_ms: 2000,
          kb_config: { filter_score: 0.6, top_k: 3 },
          knowledge_base_ids: ["kb_001", "kb_002"],
          model_choice: { model: "gpt-4.1", type: "cascading", high_priority: true },
          model_temperature: 0.7,
          start_speaker: "agent",
          tool_call_strict_mode: true
        },
        svc_llm: {
          begin_after_user_silence_ms: 2000,
          begin_message: "Hey I am a virtual assistant calling from Svc Hospital.",
          kb_config: { filter_score: 0.6, top_k: 3 },
          knowledge_base_ids: ["string"],
          model: "gpt-4.1",
          model_high_priority: true,
          model_temperature: 0,
          s2s_model: "gpt-4o-realtime",
          start_speaker: "user",
          tool_call_strict_mode: true
        }
      },
      ignore_e164_validation: false,
      metadata: {},
      override_agent_id: "oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD",
      override_agent_version: 1,
      svc_llm_dynamic_variables: { customer_name: "bar" }
    }
  ],
  call_time_window: { windows: [{ end: 1020, start: 540 }], day: ["Monday"], timezone: "America/New_York" },
  name: "First batch call",
  reserved_concurrency: 0,
  trigger_timestamp: 1735718400000
}

const removedBySchedule = ["analysis_successful_prompt", "analysis_summary_prompt"]

// The full example without the removed fields, as a client following the schedule sends it.
const fullCurrent = (() => {
  const agent = { ...full.tasks[0]!.agent_override.agent } as Record<string, unknown>
  for (const key of removedBySchedule) delete agent[key]
  return { ...full, tasks: [{ ...full.tasks[0]!, agent_override: { ...full.tasks[0]!.agent_override, agent } }] }
})()

const task = { to_number: "+14155550123" }
const withTask = (extra: Record<string, unknown>) => ({ ...minimal, tasks: [{ ...task, ...extra }] })

describe("CreateBatchCallRequest", () => {
  it("decodes the vendor's minimal example", () => {
    const result = decode(minimal)
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      assert.instanceOf(result.success, CreateBatchCallRequest)
      assert.instanceOf(result.success.tasks[0], BatchCallTask)
      assert.deepStrictEqual<unknown>(encode(result.success), minimal)
    }
  })

  it("decodes the vendor's full example and keeps every field of it", () => {
    const result = decode(fullCurrent)
    assert.isTrue(Result.isSuccess(result), Result.isFailure(result) ? formatDecodeError(result.failure) : "")
    if (Result.isSuccess(result)) assert.deepStrictEqual<unknown>(encode(result.success), fullCurrent)
  })

  it("refuses the full example's analysis prompts, which the schedule removed, naming date and replacement", () => {
    assert.strictEqual(
      failure(full),
      "tasks[0].agent_override.agent.analysis_summary_prompt was removed on 2026-06-15; use " +
        "`post_call_analysis_data` / `post_chat_analysis_data` system presets (got \"Summarize the outcome of the " +
        "conversation in two sentences.\")"
    )
  })

  it("rejects unknown fields at every level, naming the first (decision 0105)", () => {
    assert.strictEqual(failure({ ...minimal, retry: true }), "retry is not a known field of this request (got true)")
    assert.strictEqual(
      failure(withTask({ priority: 1 })),
      "tasks[0].priority is not a known field of this request (got 1)"
    )
    // the vendor word: this service spells it svc_llm_dynamic_variables (spec, Conventions)
    assert.strictEqual(
      failure(withTask({ retell_llm_dynamic_variables: { a: "b" } })),
      "tasks[0].retell_llm_dynamic_variables is not a known field of this request (got {\"a\":\"b\"})"
    )
    assert.strictEqual(
      failure(withTask({ agent_override: { x: 1 } })),
      "tasks[0].agent_override.x is not a known field of this request (got 1)"
    )
    assert.strictEqual(
      failure(withTask({ agent_override: { agent: { response_engine: { type: "svc-llm", llm_id: "l", v: 1 } } } })),
      "tasks[0].agent_override.agent.response_engine.v is not a known field of this request (got 1)"
    )
    assert.strictEqual(
      failure({ ...minimal, call_time_window: { windows: [{ start: 540, end: 1020, tz: "UTC" }] } }),
      "call_time_window.windows[0].tz is not a known field of this request (got \"UTC\")"
    )
    assert.strictEqual(
      failure({ ...minimal, call_time_window: { windows: [{ start: 540, end: 1020 }], days: ["Monday"] } }),
      "call_time_window.days is not a known field of this request (got [\"Monday\"])"
    )
  })

  it("keeps any keys inside metadata, dynamic variables and SIP headers, which are maps", () => {
    const maps = withTask({
      metadata: { anything: { nested: [1] } },
      svc_llm_dynamic_variables: { customer: "Ann" },
      custom_sip_headers: { "X-Campaign": "q4" }
    })
    const result = decode(maps)
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) assert.deepStrictEqual<unknown>(encode(result.success), maps)
  })

  it("requires from_number as a non-empty E.164 number", () => {
    assert.strictEqual(failure({ tasks: [task] }), "from_number is required")
    assert.strictEqual(
      failure({ ...minimal, from_number: "" }),
      "from_number must be an E.164 number like +14155550123 (got \"\")"
    )
    assert.strictEqual(
      failure({ ...minimal, from_number: "4157774444" }),
      "from_number must be an E.164 number like +14155550123 (got \"4157774444\")"
    )
  })

  it("requires at least one task", () => {
    assert.strictEqual(failure({ from_number: "+14157774444" }), "tasks is required")
    assert.strictEqual(failure({ ...minimal, tasks: [] }), "tasks must be a list of at least one task (got [])")
    assert.strictEqual(failure({ ...minimal, tasks: {} }), "tasks must be an array (got {})")
  })

  it("accepts trigger_timestamp as integer ms", () => {
    assert.isTrue(Result.isSuccess(decode({ ...minimal, trigger_timestamp: 0 })))
    assert.match(failure({ ...minimal, trigger_timestamp: 1.5 }), /^trigger_timestamp must be an integer \(got 1.5\)$/)
    assert.match(failure({ ...minimal, trigger_timestamp: "1735718400000" }), /^trigger_timestamp must be a number/)
  })

  it("accepts reserved_concurrency as an integer from 0 to 2^31 - 1 (what the database holds)", () => {
    assert.isTrue(Result.isSuccess(decode({ ...minimal, reserved_concurrency: 0 })))
    assert.isTrue(Result.isSuccess(decode({ ...minimal, reserved_concurrency: 7 })))
    assert.isTrue(Result.isSuccess(decode({ ...minimal, reserved_concurrency: 2_147_483_647 })))
    assert.strictEqual(
      failure({ ...minimal, reserved_concurrency: -1 }),
      "reserved_concurrency must be an integer from 0 to 2147483647 (got -1)"
    )
    assert.strictEqual(
      failure({ ...minimal, reserved_concurrency: 2_147_483_648 }),
      "reserved_concurrency must be an integer from 0 to 2147483647 (got 2147483648)"
    )
    assert.strictEqual(
      failure({ ...minimal, reserved_concurrency: 1.5 }),
      "reserved_concurrency must be an integer (got 1.5)"
    )
  })

  it("accepts a name and rejects a non-string one", () => {
    assert.isTrue(Result.isSuccess(decode({ ...minimal, name: "" })))
    assert.strictEqual(failure({ ...minimal, name: 5 }), "name must be a string (got 5)")
  })

  it("checks call_time_window with the call-window rules", () => {
    assert.match(
      failure({ ...minimal, call_time_window: { windows: [{ start: 600, end: 60 }] } }),
      /^call_time_window\.windows\[0\]\.end must be greater than start/
    )
  })
})

describe("CreateBatchCallRequest in JSON Schema", () => {
  it("states the required fields and the rules, for the OpenAPI document", () => {
    const document = Schema.toJsonSchemaDocument(CreateBatchCallRequest)
    const request = document.definitions["CreateBatchCallRequestEncoded"] as {
      readonly required: ReadonlyArray<string>
      readonly properties: Record<string, Record<string, unknown>>
    }
    assert.deepStrictEqual<unknown>(request.required, ["from_number", "tasks"])
    assert.strictEqual(request.properties["from_number"]?.["pattern"], "^\\+[1-9]\\d{0,14}$")
    assert.strictEqual(request.properties["tasks"]?.["minItems"], 1)
    assert.strictEqual(request.properties["reserved_concurrency"]?.["minimum"], 0)
    assert.isDefined(document.definitions["AgentOverride"])
  })
})

describe("BatchCallTask", () => {
  it("requires to_number", () => {
    assert.strictEqual(failure({ ...minimal, tasks: [{}] }), "tasks[0].to_number is required")
  })

  it("requires an E.164 to_number, naming the task", () => {
    assert.strictEqual(
      failure({ ...minimal, tasks: [task, task, task, { to_number: "555-1234" }] }),
      "tasks[3].to_number must be an E.164 number like +14155550123 (got \"555-1234\")"
    )
    assert.strictEqual(
      failure(withTask({ to_number: "555-1234", ignore_e164_validation: false })),
      "tasks[0].to_number must be an E.164 number like +14155550123 (got \"555-1234\")"
    )
  })

  it("skips the E.164 check when ignore_e164_validation is true, for that task only", () => {
    assert.isTrue(Result.isSuccess(decode(withTask({ to_number: "555-1234", ignore_e164_validation: true }))))
    assert.strictEqual(
      failure({ ...minimal, tasks: [{ to_number: "1001", ignore_e164_validation: true }, { to_number: "1002" }] }),
      "tasks[1].to_number must be an E.164 number like +14155550123 (got \"1002\")"
    )
    assert.strictEqual(
      failure(withTask({ to_number: "", ignore_e164_validation: true })),
      "tasks[0].to_number must be a non-empty string (got \"\")"
    )
  })

  it("keeps the E.164 check on from_number whatever the tasks say", () => {
    assert.strictEqual(
      failure({ from_number: "1000", tasks: [{ to_number: "1001", ignore_e164_validation: true }] }),
      "from_number must be an E.164 number like +14155550123 (got \"1000\")"
    )
  })

  it("requires string values in svc_llm_dynamic_variables", () => {
    assert.isTrue(Result.isSuccess(decode(withTask({ svc_llm_dynamic_variables: { name: "Ada", empty: "" } }))))
    assert.strictEqual(
      failure(withTask({ svc_llm_dynamic_variables: { name: "Ada", age: 36 } })),
      "tasks[0].svc_llm_dynamic_variables.age must be a string (got 36)"
    )
    assert.strictEqual(
      failure(withTask({ svc_llm_dynamic_variables: { "first name": null } })),
      "tasks[0].svc_llm_dynamic_variables[\"first name\"] must be a string (got null)"
    )
  })

  it("accepts override_agent_version as a number or a name", () => {
    for (const version of [0, 3, "latest", "latest_published", "prod"]) {
      assert.isTrue(Result.isSuccess(decode(withTask({ override_agent_version: version }))), String(version))
    }
    for (const version of [-1, 1.5, "", true]) {
      assert.strictEqual(
        failure(withTask({ override_agent_version: version })).startsWith("tasks[0].override_agent_version must be"),
        true,
        String(version)
      )
    }
  })

  it("keeps metadata as free-form JSON and custom_sip_headers as strings", () => {
    const metadata = { customer: { id: 7, tags: ["a"], vip: true, note: null } }
    const result = decode(withTask({ metadata, custom_sip_headers: { "X-Account": "42" } }))
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) assert.deepStrictEqual<unknown>(result.success.tasks[0]?.metadata, metadata)
    assert.strictEqual(failure(withTask({ metadata: [1] })), "tasks[0].metadata must be an object (got [1])")
    assert.strictEqual(
      failure(withTask({ custom_sip_headers: { "X-Account": 42 } })),
      "tasks[0].custom_sip_headers[\"X-Account\"] must be a string (got 42)"
    )
  })

  const taskFields = Arbitrary.schema(Schema.Struct(BatchCallTask.fields))
  const numbers = Arbitrary.schema(E164)
  const tasks = Arbitrary.map(
    Arbitrary.all([taskFields, numbers]),
    ([fields, number]) =>
      new BatchCallTask(fields.ignore_e164_validation === true ? fields : { ...fields, to_number: number })
  )
  const requests = Arbitrary.map(
    Arbitrary.all([
      Arbitrary.schema(
        Schema.Struct({ ...CreateBatchCallRequest.fields, tasks: Schema.Unknown, call_time_window: Schema.Unknown })
      ),
      Arbitrary.array(tasks, { minLength: 1, maxLength: 4 })
    ]),
    ([{ call_time_window: _window, ...fields }, tasks]) => new CreateBatchCallRequest({ ...fields, tasks })
  )

  it.prop("keeps its wire form through decode and encode", [requests], ([request]) => {
    const wire = JSON.parse(JSON.stringify(encode(request)))
    const decoded = Schema.decodeUnknownSync(CreateBatchCallRequest)(wire)
    assert.instanceOf(decoded, CreateBatchCallRequest)
    assert.deepStrictEqual<unknown>(
      JSON.parse(JSON.stringify(Schema.encodeSync(CreateBatchCallRequest)(decoded))),
      wire
    )
  })
})

describe("BatchCall", () => {
  const response = {
    batch_call_id: "batch_1",
    name: "First batch call",
    from_number: "+14157774444",
    scheduled_timestamp: 1735718400000,
    total_task_count: 1
  }
  const window = {
    windows: [{ start: 540, end: 1020 }],
    timezone: "America/Los_Angeles",
    day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
  }

  it("round-trips a response without and with a canonical call_time_window", () => {
    for (const body of [response, { ...response, call_time_window: window }]) {
      const decoded = Schema.decodeUnknownSync(BatchCall)(body)
      assert.deepStrictEqual<unknown>(Schema.encodeSync(BatchCall)(decoded), body)
    }
  })

  it("refuses to encode a window that is not canonical", () => {
    const decoded = Schema.decodeUnknownResult(BatchCall)({
      ...response,
      call_time_window: { windows: window.windows }
    })
    assert.isTrue(Result.isFailure(decoded))
  })

  it("drops unknown fields", () => {
    const decoded = Schema.decodeUnknownSync(BatchCall)({ ...response, internal: "x" })
    assert.deepStrictEqual<unknown>(Schema.encodeSync(BatchCall)(decoded), response)
  })

  const batches = Arbitrary.map(
    Arbitrary.all([
      Arbitrary.schema(Schema.Struct({ ...BatchCall.fields, call_time_window: Schema.Boolean })),
      Arbitrary.schema(Schema.Literals(["Monday", "Saturday"]))
    ]),
    ([{ call_time_window: withWindow, ...fields }, day]) =>
      new BatchCall(withWindow ? { ...fields, call_time_window: { ...window, day: [day] } } : fields)
  )

  it.prop("keeps its wire form through decode and encode", [batches], ([batch]) => {
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(BatchCall)(batch)))
    const decoded = Schema.decodeUnknownSync(BatchCall)(wire)
    assert.instanceOf(decoded, BatchCall)
    assert.deepStrictEqual<unknown>(JSON.parse(JSON.stringify(Schema.encodeSync(BatchCall)(decoded))), wire)
  })
})
