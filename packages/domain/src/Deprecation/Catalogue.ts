/**
 * Value catalogues the deprecation rules compare against.
 *
 * The spec names neither the retired models (row 3: "names not given here") nor the ten locales
 * that replace the scalar language `multi` (row 7). The model catalogues are the model enums of
 * the vendor SDK 5.66.1, released 2026-09-11, after the last retirement date (2026-07-12): a model
 * outside them is retired or unknown (reference/vendor-api-facts.md §4.1). The ten locales are an
 * inference recorded in docs/decisions/0103-deprecation-engine.md, which is why the fix that uses
 * them is marked unsafe.
 *
 * @category models
 */

/**
 * LLM models accepted after the retirements: the LLM `model`, conversation-flow
 * `model_choice.model` and agent `post_call_analysis_model` enum.
 *
 * @category models
 */
export const currentLlmModels: ReadonlySet<string> = new Set([
  "gpt-4.1",
  "gpt-4.1-mini",
  "gpt-4.1-nano",
  "gpt-5",
  "gpt-5-mini",
  "gpt-5-nano",
  "gpt-5.1",
  "gpt-5.2",
  "gpt-5.4",
  "gpt-5.4-mini",
  "gpt-5.4-nano",
  "gpt-5.5",
  "gpt-5.6-terra",
  "gpt-5.6-luna",
  "claude-4.5-sonnet",
  "claude-4.6-sonnet",
  "claude-5-sonnet",
  "claude-4.5-haiku",
  "gemini-3.0-flash",
  "gemini-3.1-flash-lite",
  "gemini-3.5-flash",
  "gemini-3.5-flash-lite",
  "gemini-3.6-flash"
])

/**
 * Voice (text-to-speech) models accepted after the retirements: the agent `voice_model` enum.
 *
 * @category models
 */
export const currentVoiceModels: ReadonlySet<string> = new Set([
  "eleven_flash_v2",
  "eleven_flash_v2_5",
  "eleven_multilingual_v2",
  "eleven_v3",
  "sonic-3",
  "sonic-3-latest",
  "sonic-3.5",
  "sonic-3.6",
  "tts-1",
  "gpt-4o-mini-tts",
  "speech-02-turbo",
  "speech-2.8-turbo",
  "s1",
  "s2-pro",
  "s2.1-pro",
  "inworld-tts-2",
  "inworld-tts-2-flash"
])

/**
 * The locale array proposed for the scalar language `multi`: one locale for each of the ten
 * languages of the multilingual speech recogniser that `multi` used (English, Spanish, French,
 * German, Hindi, Russian, Portuguese, Japanese, Italian, Dutch). An inference: the spec says only
 * "an equivalent array of 10 locales".
 *
 * @category models
 */
export const multiLocales: ReadonlyArray<string> = [
  "en-US",
  "es-ES",
  "fr-FR",
  "de-DE",
  "hi-IN",
  "ru-RU",
  "pt-BR",
  "ja-JP",
  "it-IT",
  "nl-NL"
]
