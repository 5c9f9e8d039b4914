import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { AgentLanguage, AgentOverride } from "../../src/models/AgentOverride.ts"
import { formatDecodeError } from "../../src/models/DecodeMessage.ts"
import { requestParseOptions } from "../../src/models/RequestDecoding.ts"

// as the HTTP edge decodes it
const decode = (input: unknown) =>
  Schema.decodeUnknownResult(AgentOverride)(input, { ...requestParseOptions, reportInput: true })

const failure = (input: unknown): string => {
  const result = decode(input)
  if (Result.isSuccess(result)) return assert.fail("expected a decode failure")
  return formatDecodeError(result.failure, { root: "agent_override" })
}

const roundTrip = (input: unknown): unknown => {
  const result = decode(input)
  if (Result.isFailure(result)) return assert.fail(formatDecodeError(result.failure))
  return Schema.encodeSync(AgentOverride)(result.success)
}

// Every field of the spec's agent table, with a value of the type the table gives.
const agent = {
  response_engine: { type: "conversation-flow", conversation_flow_id: "cf_1", version: null },
  agent_name: "Jarvis",
  version_description: "v2",
  version_title: "Second",
  voice_id: "11labs-Adrian",
  fallback_voice_ids: ["openai-Alloy"],
  backchannel_words: ["yeah"],
  boosted_keywords: ["svc"],
  expressive_emotion_tags: ["happy", "pause"],
  voice_temperature: 1,
  voice_speed: 1.2,
  volume: 0.8,
  responsiveness: 1,
  interruption_sensitivity: 0.5,
  backchannel_frequency: 0.8,
  ambient_sound_volume: 1,
  enable_dynamic_voice_speed: true,
  enable_dynamic_responsiveness: false,
  enable_expressive_mode: true,
  enable_backchannel: true,
  opt_in_signed_url: false,
  allow_user_dtmf: true,
  allow_dtmf_interruption: false,
  voice_emotion: "calm",
  expressive_mode_prompt: "Be warm.",
  stt_mode: "custom",
  vocab_specialization: "medical",
  denoising_mode: "noise-cancellation",
  post_call_analysis_model: "gpt-4.1",
  data_storage_setting: "everything_except_pii",
  timezone: "Europe/Berlin",
  language: ["en-US", "de-DE"],
  reminder_trigger_ms: 10000,
  reminder_max_count: 1,
  webhook_timeout_ms: 10000,
  data_storage_retention_days: 30,
  signed_url_expiration_ms: 86400000,
  end_call_after_silence_ms: 600000,
  max_call_duration_ms: 3600000,
  begin_message_delay_ms: 0,
  ring_duration_ms: 30000,
  webhook_url: "https://example.com/hook",
  webhook_events: ["call_started", "call_ended"],
  pronunciation_dictionary: [{ word: "actually", alphabet: "ipa", phoneme: "ˈæktʃuəli" }],
  voicemail_option: { action: { type: "static_text", text: "Call us back." } },
  ivr_option: { action: { type: "hangup" } },
  call_screening_option: { agent_identity: "Svc clinic", call_purpose: "appointment reminder" },
  post_call_analysis_data: [
    {
      type: "string",
      name: "customer_name",
      description: "The customer's name.",
      examples: ["Ada"],
      required: true,
      conditional_prompt: "Only if given."
    }
  ],
  custom_stt_config: { endpointing_ms: 300 },
  user_dtmf_options: { digit_limit: 4, termination_key: "#", timeout_ms: 3000 },
  guardrail_config: { output_topics: ["gambling"], input_topics: ["platform_integrity_jailbreaking"] },
  handbook_config: {
    default_personality: true,
    conversational_personality: false,
    natural_filler_words: true,
    high_empathy: true,
    echo_verification: false,
    nato_phonetic_alphabet: true,
    speech_normalization: true,
    smart_matching: false,
    ai_disclosure: true,
    scope_boundaries: true
  }
}

const svc_llm = {
  model: "gpt-4.1",
  s2s_model: null,
  begin_message: "",
  model_temperature: 0.2,
  model_high_priority: false,
  tool_call_strict_mode: true,
  knowledge_base_ids: ["kb_1"],
  kb_config: { top_k: 3, filter_score: 0.6 },
  begin_after_user_silence_ms: 2000
}

const conversation_flow = {
  model_temperature: 0.7,
  tool_call_strict_mode: false,
  knowledge_base_ids: ["kb_2"],
  kb_config: { top_k: 5, filter_score: 0.5 },
  start_speaker: "agent",
  begin_after_user_silence_ms: 1500
}

describe("AgentOverride", () => {
  it("decodes every field of the spec's three tables and encodes them back unchanged", () => {
    const override = { agent, svc_llm, conversation_flow }
    assert.deepStrictEqual<unknown>(roundTrip(override), override)
  })

  it("makes every field optional", () => {
    assert.deepStrictEqual<unknown>(roundTrip({}), {})
    assert.deepStrictEqual<unknown>(roundTrip({ agent: {}, svc_llm: {}, conversation_flow: {} }), {
      agent: {},
      svc_llm: {},
      conversation_flow: {}
    })
  })

  it("accepts null where the vendor's clients clear a setting", () => {
    const cleared = {
      agent: { webhook_url: null, voicemail_option: null, pronunciation_dictionary: null, user_dtmf_options: null },
      svc_llm: { begin_message: null, kb_config: null }
    }
    assert.deepStrictEqual<unknown>(roundTrip(cleared), cleared)
  })

  it("keeps the vendor's older agent settings that its client examples still send", () => {
    const older = {
      agent: {
        enable_voicemail_detection: true,
        voicemail_message: "Hi, please give us a callback.",
        voicemail_detection_timeout_ms: 30000,
        is_public: false,
        normalize_for_speech: true
      }
    }
    assert.deepStrictEqual<unknown>(roundTrip(older), older)
  })

  it("rejects the agent fields the schedule removed, naming the date and the replacement", () => {
    for (const field of ["analysis_summary_prompt", "analysis_successful_prompt", "analysis_user_sentiment_prompt"]) {
      assert.strictEqual(
        failure({ agent: { voice_id: "v", [field]: "Summarize the call." } }),
        `agent.${field} was removed on 2026-06-15; use \`post_call_analysis_data\` / \`post_chat_analysis_data\` ` +
          "system presets (got \"Summarize the call.\")"
      )
    }
    // null too: nothing about a removed field is kept
    assert.include(failure({ agent: { analysis_summary_prompt: null } }), "was removed on 2026-06-15")
  })

  it("rejects any other field the tables do not have, at every level (decision 0105)", () => {
    assert.strictEqual(failure({ retell_llm: {} }), "retell_llm is not a known field of this request (got {})")
    assert.strictEqual(
      failure({ agent: { voice_id: "v", voice_ids: ["a"] } }),
      "agent.voice_ids is not a known field of this request (got [\"a\"])"
    )
    assert.strictEqual(
      failure({ agent: { voicemail_option: { action: { type: "hangup", delay: 1 } } } }),
      "agent.voicemail_option.action.delay is not a known field of this request (got 1)"
    )
    assert.strictEqual(
      failure({ svc_llm: { kb_config: { top_k: 1, top_p: 0.5 } } }),
      "svc_llm.kb_config.top_p is not a known field of this request (got 0.5)"
    )
    assert.strictEqual(
      failure({ conversation_flow: { model_choice: { type: "cascading", model: "gpt-4.1", tier: 1 } } }),
      "conversation_flow.model_choice.tier is not a known field of this request (got 1)"
    )
  })

  it("checks the types of the tables", () => {
    assert.strictEqual(failure({ agent: { voice_speed: "fast" } }), "agent.voice_speed must be a number (got \"fast\")")
    assert.strictEqual(
      failure({ agent: { enable_backchannel: "yes" } }),
      "agent.enable_backchannel must be true or false (got \"yes\")"
    )
    assert.strictEqual(
      failure({ agent: { boosted_keywords: ["a", 1] } }),
      "agent.boosted_keywords[1] must be a string (got 1)"
    )
    assert.strictEqual(
      failure({ agent: { reminder_max_count: -1 } }),
      "agent.reminder_max_count must be an integer >= 0 (got -1)"
    )
    assert.strictEqual(
      failure({ agent: { ring_duration_ms: -5 } }),
      "agent.ring_duration_ms must be a number >= 0 (got -5)"
    )
    assert.strictEqual(
      failure({ agent: { pronunciation_dictionary: [{ word: "a", alphabet: "ipa" }] } }),
      "agent.pronunciation_dictionary[0].phoneme is required"
    )
    assert.strictEqual(
      failure({ agent: { handbook_config: { high_empathy: 1 } } }),
      "agent.handbook_config.high_empathy must be true or false (got 1)"
    )
    assert.strictEqual(
      failure({ svc_llm: { kb_config: { top_k: 1.5 } } }),
      "svc_llm.kb_config.top_k must be an integer (got 1.5)"
    )
    assert.strictEqual(
      failure({ conversation_flow: { tool_call_strict_mode: "on" } }),
      "conversation_flow.tool_call_strict_mode must be true or false or null (got \"on\")"
    )
  })

  it("checks the response engine", () => {
    assert.strictEqual(
      failure({ agent: { response_engine: { type: "retell-llm", llm_id: "x" } } }),
      "agent.response_engine.type must be one of \"svc-llm\", \"custom-llm\", \"conversation-flow\" (got \"retell-llm\")"
    )
  })
})

describe("AgentOverride round trip", () => {
  it.prop("keeps its wire form through decode and encode", [AgentOverride], ([override]) => {
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(AgentOverride)(override)))
    assert.deepStrictEqual<unknown>(JSON.parse(JSON.stringify(roundTrip(wire))), wire)
  })
})

describe("AgentLanguage", () => {
  const decodeLanguage = (input: unknown) => Schema.decodeUnknownResult(AgentLanguage)(input, { reportInput: true })

  it("accepts a locale or a list of locales", () => {
    for (const language of ["en-US", "es-419", ["en-US"], ["en-US", "es-ES", "fr-FR"]]) {
      assert.isTrue(Result.isSuccess(decodeLanguage(language)), JSON.stringify(language))
    }
  })

  it("rejects the scalar multi, naming the replacement", () => {
    assert.strictEqual(
      failure({ agent: { language: "multi" } }),
      "agent.language must be a list of locales such as [\"en-US\", \"es-ES\"] instead of the scalar \"multi\", " +
        "which was removed on 07/31/2026 (got \"multi\")"
    )
    assert.isTrue(Result.isFailure(decodeLanguage("MULTI")))
  })

  it("rejects multi inside a list, an empty list and other types", () => {
    assert.strictEqual(
      failure({ agent: { language: ["en-US", "multi"] } }),
      "agent.language[1] must be a locale such as \"en-US\"; \"multi\" is not a locale (got \"multi\")"
    )
    assert.strictEqual(
      failure({ agent: { language: [] } }),
      "agent.language must be a list of at least one locale (got [])"
    )
    assert.strictEqual(
      failure({ agent: { language: 5 } }),
      "agent.language must be a locale such as \"en-US\" or a list of locales (got 5)"
    )
  })
})
