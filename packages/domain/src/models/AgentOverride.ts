/**
 * The per-task `agent_override` of a batch call (spec, "agent_override.agent", ".svc_llm",
 * ".conversation_flow"): every field is optional and overrides the agent's setting for that one call.
 *
 * Types follow the spec's tables. The spec gives no numeric bounds or allowed-value sets, so none are
 * enforced beyond what the types mean (durations and counts cannot be negative); enumerated settings are
 * strings. Where the vendor's clients send `null` to clear a setting, `null` is accepted. The vendor's
 * `ambient_sound`, `voice_model`, `pii_config`, `svc_llm.start_speaker`, `conversation_flow.model_choice`
 * and `custom_stt_config.provider` are accepted too, so that a vendor client's override is not dropped.
 *
 * The vendor's older agent settings that its client examples still carry (`enable_voicemail_detection`,
 * `voicemail_message`, `voicemail_detection_timeout_ms`, `is_public`, `normalize_for_speech`) are accepted and
 * kept as sent. The agent fields the deprecation schedule removed (`analysis_summary_prompt`,
 * `analysis_successful_prompt`, `analysis_user_sentiment_prompt`, 06/15/2026) are a 400 naming the date and the
 * replacement; any other unknown field is a 400 too (decision 0105: never dropped).
 *
 * The one value rule: a scalar `language` of `"multi"` is rejected (spec, Versioning, 07/31/2026, and
 * Errors: "a request that sends the scalar `multi` as an agent `language` is rejected"), with a message that
 * names the replacement, a list of locales.
 */
import { Schema } from "effect"
import type { RuleId } from "../Deprecation/Rule.ts"
import { getRule } from "../Deprecation/Schedule.ts"
import { FiniteNumber, NonEmptyString, NonNegativeInt, NonNegativeNumber } from "./Primitives.ts"
import { ResponseEngine } from "./ResponseEngine.ts"

const optional = <S extends Schema.Top>(schema: S) => Schema.optionalKey(schema)
const nullable = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

const Strings = Schema.Array(Schema.String)

/**
 * A field the deprecation schedule removed: any value is a 400 that names the removal date and the
 * replacement, from the schedule's own row, instead of the generic unknown-field message.
 */
const removedField = (ruleId: RuleId) => {
  const rule = getRule(ruleId)
  const removal = rule.milestones.find((milestone) => milestone.status === "removed")?.date ?? ""
  return Schema.optionalKey(
    Schema.Never.annotate({
      message: `was removed on ${removal}; use ${rule.replacement}`,
      description: `Removed on ${removal}: use ${rule.replacement}. Sending it is a 400.`
    })
  )
}

const isMulti = (language: string): boolean => language.toLowerCase() === "multi"

/**
 * The message for a scalar `"multi"` language.
 *
 * @category schemas
 */
export const multiLanguageMessage = "must be a list of locales such as [\"en-US\", \"es-ES\"] instead of the scalar " +
  "\"multi\", which was removed on 07/31/2026"

/**
 * An agent's `language`: one locale, or a list of locales for a multilingual agent. The scalar `"multi"` is
 * rejected with {@link multiLanguageMessage}; `"multi"` is not a locale inside a list either.
 *
 * @category schemas
 */
export const AgentLanguage = Schema.Union([
  NonEmptyString.check(Schema.makeFilter((language: string) => !isMulti(language), { message: multiLanguageMessage })),
  Schema.Array(
    NonEmptyString.check(
      Schema.makeFilter((language: string) => !isMulti(language), {
        message: "must be a locale such as \"en-US\"; \"multi\" is not a locale"
      })
    )
  ).check(Schema.isMinLength(1, { expected: "a list of at least one locale" }))
]).annotate({
  identifier: "AgentLanguage",
  expected: "a locale such as \"en-US\" or a list of locales",
  description: "A locale such as \"en-US\", or a list of locales. The scalar \"multi\" is rejected."
})
/** @category models */
export type AgentLanguage = typeof AgentLanguage.Type

/**
 * A word and how to pronounce it.
 *
 * @category models
 */
export const PronunciationEntry = Schema.Struct({
  word: Schema.String,
  alphabet: Schema.String.annotate({ description: "Phonetic alphabet, such as ipa or cmu." }),
  phoneme: Schema.String
}).annotate({ identifier: "PronunciationEntry" })

/**
 * What to do when the call reaches voicemail.
 *
 * @category models
 */
export const VoicemailOption = Schema.Struct({
  action: Schema.Struct({
    type: NonEmptyString.annotate({ description: "Action type, such as static_text, prompt or hangup." }),
    text: optional(Schema.String)
  }),
  detection_prompt: nullable(Schema.String)
}).annotate({ identifier: "VoicemailOption" })

/**
 * What to do when the call reaches an IVR.
 *
 * @category models
 */
export const IvrOption = Schema.Struct({
  action: Schema.Struct({
    type: NonEmptyString.annotate({ description: "Action type, such as hangup." })
  }),
  detection_prompt: nullable(Schema.String)
}).annotate({ identifier: "IvrOption" })

/**
 * How the agent introduces itself to a call screener.
 *
 * @category models
 */
export const CallScreeningOption = Schema.Struct({
  agent_identity: Schema.String,
  call_purpose: Schema.String
}).annotate({ identifier: "CallScreeningOption" })

/**
 * One item of data to extract from the call after it ends.
 *
 * @category models
 */
export const PostCallAnalysisItem = Schema.Struct({
  type: NonEmptyString.annotate({ description: "Item type, such as string, enum, boolean, number." }),
  name: NonEmptyString,
  description: optional(Schema.String),
  examples: optional(Strings),
  choices: optional(Strings),
  required: optional(Schema.Boolean),
  conditional_prompt: optional(Schema.String)
}).annotate({ identifier: "PostCallAnalysisItem" })

/**
 * Speech-to-text settings used when `stt_mode` is `custom`.
 *
 * @category models
 */
export const CustomSttConfig = Schema.Struct({
  endpointing_ms: NonNegativeNumber,
  provider: optional(Schema.String)
}).annotate({ identifier: "CustomSttConfig" })

/**
 * How keypad (DTMF) input from the user is collected.
 *
 * @category models
 */
export const UserDtmfOptions = Schema.Struct({
  digit_limit: nullable(NonNegativeInt),
  termination_key: nullable(Schema.String),
  timeout_ms: optional(NonNegativeNumber)
}).annotate({ identifier: "UserDtmfOptions" })

/**
 * Topic categories checked in the agent's output and the user's input.
 *
 * @category models
 */
export const GuardrailConfig = Schema.Struct({
  output_topics: nullable(Strings),
  input_topics: nullable(Strings)
}).annotate({ identifier: "GuardrailConfig" })

/**
 * Built-in behaviour switches of the agent.
 *
 * @category models
 */
export const HandbookConfig = Schema.Struct({
  default_personality: optional(Schema.Boolean),
  conversational_personality: optional(Schema.Boolean),
  natural_filler_words: optional(Schema.Boolean),
  high_empathy: optional(Schema.Boolean),
  echo_verification: optional(Schema.Boolean),
  nato_phonetic_alphabet: optional(Schema.Boolean),
  speech_normalization: optional(Schema.Boolean),
  smart_matching: optional(Schema.Boolean),
  ai_disclosure: optional(Schema.Boolean),
  scope_boundaries: optional(Schema.Boolean)
}).annotate({ identifier: "HandbookConfig" })

/**
 * Scrubbing of personal data from transcripts and recordings (vendor field).
 *
 * @category models
 */
export const PiiConfig = Schema.Struct({
  mode: Schema.String,
  categories: Strings
}).annotate({ identifier: "PiiConfig" })

/**
 * Overrides of agent settings.
 *
 * @category models
 */
export const AgentSettingsOverride = Schema.Struct({
  response_engine: optional(ResponseEngine),
  agent_name: nullable(Schema.String),
  version_description: nullable(Schema.String),
  version_title: optional(Schema.String),
  voice_id: optional(Schema.String),
  fallback_voice_ids: nullable(Strings),
  backchannel_words: nullable(Strings),
  boosted_keywords: nullable(Strings),
  expressive_emotion_tags: optional(Strings),
  voice_temperature: optional(FiniteNumber),
  voice_speed: optional(FiniteNumber),
  volume: optional(FiniteNumber),
  responsiveness: optional(FiniteNumber),
  interruption_sensitivity: optional(FiniteNumber),
  backchannel_frequency: optional(FiniteNumber),
  ambient_sound_volume: optional(FiniteNumber),
  enable_dynamic_voice_speed: optional(Schema.Boolean),
  enable_dynamic_responsiveness: optional(Schema.Boolean),
  enable_expressive_mode: optional(Schema.Boolean),
  enable_backchannel: optional(Schema.Boolean),
  opt_in_signed_url: optional(Schema.Boolean),
  allow_user_dtmf: optional(Schema.Boolean),
  allow_dtmf_interruption: optional(Schema.Boolean),
  voice_emotion: nullable(Schema.String),
  expressive_mode_prompt: optional(Schema.String),
  stt_mode: optional(Schema.String),
  vocab_specialization: optional(Schema.String),
  denoising_mode: optional(Schema.String),
  post_call_analysis_model: nullable(Schema.String),
  data_storage_setting: optional(Schema.String),
  timezone: optional(Schema.String),
  language: optional(AgentLanguage),
  reminder_trigger_ms: optional(NonNegativeNumber),
  reminder_max_count: optional(NonNegativeInt),
  webhook_timeout_ms: optional(NonNegativeNumber),
  data_storage_retention_days: nullable(NonNegativeInt),
  signed_url_expiration_ms: nullable(NonNegativeNumber),
  end_call_after_silence_ms: optional(NonNegativeNumber),
  max_call_duration_ms: optional(NonNegativeNumber),
  begin_message_delay_ms: optional(NonNegativeNumber),
  ring_duration_ms: optional(NonNegativeNumber),
  webhook_url: nullable(Schema.String),
  webhook_events: nullable(Strings),
  pronunciation_dictionary: nullable(Schema.Array(PronunciationEntry)),
  voicemail_option: nullable(VoicemailOption),
  ivr_option: nullable(IvrOption),
  call_screening_option: nullable(CallScreeningOption),
  post_call_analysis_data: nullable(Schema.Array(PostCallAnalysisItem)),
  custom_stt_config: nullable(CustomSttConfig),
  user_dtmf_options: nullable(UserDtmfOptions),
  guardrail_config: optional(GuardrailConfig),
  handbook_config: optional(HandbookConfig),
  ambient_sound: nullable(Schema.String),
  voice_model: nullable(Schema.String),
  pii_config: optional(PiiConfig),
  // older vendor settings still in the vendor's client examples: kept as sent
  enable_voicemail_detection: optional(Schema.Boolean),
  voicemail_message: optional(Schema.String),
  voicemail_detection_timeout_ms: optional(NonNegativeNumber),
  is_public: optional(Schema.Boolean),
  normalize_for_speech: optional(Schema.Boolean),
  // spec, deprecation schedule 06/15/2026: removed
  analysis_summary_prompt: removedField("legacy-analysis-prompts"),
  analysis_successful_prompt: removedField("legacy-analysis-prompts"),
  analysis_user_sentiment_prompt: removedField("legacy-analysis-prompts")
}).annotate({ identifier: "AgentSettingsOverride", description: "Overrides of agent settings for one call." })
/** @category models */
export type AgentSettingsOverride = typeof AgentSettingsOverride.Type

/**
 * Knowledge-base retrieval settings.
 *
 * @category models
 */
export const KnowledgeBaseConfig = Schema.Struct({
  top_k: optional(NonNegativeInt),
  filter_score: optional(FiniteNumber)
}).annotate({ identifier: "KnowledgeBaseConfig" })

/**
 * Overrides of the svc LLM's settings; used when the response engine is an svc LLM.
 *
 * @category models
 */
export const SvcLlmOverride = Schema.Struct({
  model: nullable(Schema.String),
  s2s_model: nullable(Schema.String),
  begin_message: nullable(Schema.String.annotate({
    description: "First utterance of the agent; \"\" waits for the user to speak first."
  })),
  model_temperature: optional(FiniteNumber),
  model_high_priority: nullable(Schema.Boolean),
  tool_call_strict_mode: nullable(Schema.Boolean),
  knowledge_base_ids: nullable(Strings),
  kb_config: nullable(KnowledgeBaseConfig),
  begin_after_user_silence_ms: nullable(NonNegativeNumber),
  start_speaker: optional(Schema.String)
}).annotate({ identifier: "SvcLlmOverride", description: "Overrides of the svc LLM's settings for one call." })
/** @category models */
export type SvcLlmOverride = typeof SvcLlmOverride.Type

/**
 * The model a conversation flow runs on (vendor field).
 *
 * @category models
 */
export const ModelChoice = Schema.Struct({
  type: NonEmptyString.annotate({ description: "Such as cascading." }),
  model: NonEmptyString,
  high_priority: optional(Schema.Boolean)
}).annotate({ identifier: "ModelChoice" })

/**
 * Overrides of the conversation flow's settings; used when the response engine is a conversation flow.
 *
 * @category models
 */
export const ConversationFlowOverride = Schema.Struct({
  model_temperature: nullable(FiniteNumber),
  tool_call_strict_mode: nullable(Schema.Boolean),
  knowledge_base_ids: nullable(Strings),
  kb_config: nullable(KnowledgeBaseConfig),
  start_speaker: optional(Schema.String),
  begin_after_user_silence_ms: nullable(NonNegativeNumber),
  model_choice: optional(ModelChoice)
}).annotate({
  identifier: "ConversationFlowOverride",
  description: "Overrides of the conversation flow's settings for one call."
})
/** @category models */
export type ConversationFlowOverride = typeof ConversationFlowOverride.Type

/**
 * A task's `agent_override`.
 *
 * @category models
 */
export const AgentOverride = Schema.Struct({
  agent: optional(AgentSettingsOverride),
  svc_llm: optional(SvcLlmOverride),
  conversation_flow: optional(ConversationFlowOverride)
}).annotate({
  identifier: "AgentOverride",
  description: "Overrides of the agent's configuration for this one call; the base agent is not changed."
})
/** @category models */
export type AgentOverride = typeof AgentOverride.Type

/**
 * `override_agent_version`: a version number, or a version name such as `"latest"` (highest version),
 * `"latest_published"` or a tag.
 *
 * @category models
 */
export const AgentVersionRef = Schema.Union([NonNegativeInt, NonEmptyString]).annotate({
  identifier: "AgentVersionRef",
  expected: "a version number (an integer >= 0) or a version name such as \"latest_published\"",
  description: "A version number, or a name: \"latest\", \"latest_published\" or a tag."
})
/** @category models */
export type AgentVersionRef = typeof AgentVersionRef.Type
