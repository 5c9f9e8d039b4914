// Request bodies of create-batch-call as a CRM campaign sends them at the top of the range: every task with an
// override agent, an `agent_override` (voice, language, voicemail text, analysis items, an LLM greeting) and a
// dozen dynamic variables. Used to size the endpoint's body limit (decision 0303) and by the memory bench.

/** The number every bench org owns. */
export const FROM_NUMBER = "+14155550100"

/** One task; `i` makes the numbers and variables distinct, as a real export's are. */
export const heavyTask = (i: number) => ({
  to_number: `+1212${String(i % 10_000_000).padStart(7, "0")}`,
  override_agent_id: "agent_a",
  override_agent_version: 1,
  agent_override: {
    agent: {
      voice_id: "11labs-Adrian",
      language: ["en-US", "es-ES"],
      voice_speed: 1.05,
      voice_temperature: 0.8,
      responsiveness: 0.9,
      interruption_sensitivity: 0.7,
      enable_backchannel: true,
      backchannel_words: ["yeah", "uh-huh", "I see", "right"],
      boosted_keywords: ["Acme", "premium plan", "renewal", "appointment"],
      ambient_sound: "coffee-shop",
      end_call_after_silence_ms: 30_000,
      max_call_duration_ms: 900_000,
      webhook_url: `https://hooks.example.com/svc/campaigns/spring-2026/calls?row=${i}`,
      voicemail_option: {
        action: {
          type: "static_text",
          text: `Hi, this is Acme Health calling for customer ${i} about the appointment on the date we have on ` +
            "file. Please call us back at 415 555 0100 at your convenience. Thank you and have a good day."
        }
      },
      post_call_analysis_data: [
        {
          type: "boolean",
          name: "appointment_confirmed",
          description: "Whether the customer confirmed the appointment for the date and time offered."
        },
        {
          type: "enum",
          name: "reschedule_reason",
          description: "Why the customer wants another date, if they do.",
          choices: ["work", "travel", "health", "other"]
        },
        { type: "string", name: "callback_time", description: "When the customer asked to be called back." }
      ],
      pronunciation_dictionary: [{ word: "Acme", alphabet: "ipa", phoneme: "ˈækmi" }]
    },
    svc_llm: {
      model: "gpt-4.1",
      model_temperature: 0.3,
      begin_message: `Hello, may I speak with customer ${i}? I am calling from Acme Health about an upcoming ` +
        "appointment."
    }
  },
  svc_llm_dynamic_variables: {
    first_name: `Customer${i}`,
    last_name: "Example",
    appointment_date: "2026-05-14",
    appointment_time: "10:30",
    clinic_name: "Acme Health Downtown",
    clinic_address: "100 Market Street, San Francisco, CA 94105",
    doctor_name: "Dr. Rivera",
    account_id: `acct-${i}`,
    plan: i % 3 === 0 ? "gold" : "basic",
    balance_due: String(i % 500),
    preferred_language: "English",
    timezone: "America/Los_Angeles"
  },
  metadata: { crm_id: `crm-${i}`, campaign: "spring-2026", row: i, segment: i % 7 }
})

/** The JSON text of a create-batch-call of `count` heavy tasks. */
export const heavyBatchBody = (count: number, name = "memory bench"): string =>
  JSON.stringify({
    from_number: FROM_NUMBER,
    name,
    call_time_window: { windows: [{ start: 540, end: 1020 }], timezone: "America/New_York" },
    tasks: Array.from({ length: count }, (_, i) => heavyTask(i))
  })
