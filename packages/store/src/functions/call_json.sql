-- call_json: the current definition; the migrator re-creates it when this file changes (decision 0017).
-- Moved out of migration 0012_call_lifecycle (its authored text; PostgreSQL keeps the parsed SQL-standard body).
-- The get-call object (vendor-calls-facts 1.4): absent members are left out, never null (ABSENT ON NULL skips
-- SQL NULL only, so a JSON null inside metadata stays). `call_analysis` exists once the call is over: the
-- dialer's analysis data by name, the vendor's four named members lifted out when they have the vendor's type,
-- the rest under `custom_analysis_data`. `batch_call_id` is an svc extension (the vendor filters by it but does
-- not return it), `opt_out` one too (migration 0032).
CREATE OR REPLACE FUNCTION call_json(c calls) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE
RETURN json_object(
  'call_id': c.call_id,
  'call_type': 'phone_call',
  'direction': 'outbound',
  'call_status': c.call_status,
  'agent_id': c.agent_id,
  'agent_version': c.agent_version,
  'batch_call_id': c.batch_call_id,
  'from_number': c.from_number,
  'to_number': c.to_number,
  'metadata': c.metadata,
  'svc_llm_dynamic_variables': c.dynamic_variables,
  'custom_sip_headers': c.custom_sip_headers,
  'start_timestamp': c.start_timestamp,
  'end_timestamp': c.end_timestamp,
  'duration_ms': c.duration_ms,
  'disconnection_reason': c.disconnection_reason,
  'call_analysis': CASE WHEN c.call_status IN ('ended', 'not_connected', 'error') THEN json_object(
    'call_summary': CASE WHEN jsonb_typeof(c.analysis -> 'call_summary') = 'string'
      THEN c.analysis -> 'call_summary' END,
    'in_voicemail': CASE WHEN jsonb_typeof(c.analysis -> 'in_voicemail') = 'boolean'
      THEN c.analysis -> 'in_voicemail' END,
    'user_sentiment': CASE WHEN c.analysis ->> 'user_sentiment' IN ('Negative', 'Positive', 'Neutral', 'Unknown')
      THEN c.analysis -> 'user_sentiment' END,
    'call_successful': CASE WHEN jsonb_typeof(c.analysis -> 'call_successful') = 'boolean'
      THEN c.analysis -> 'call_successful' END,
    'custom_analysis_data': c.analysis - ARRAY['call_summary', 'in_voicemail', 'user_sentiment', 'call_successful']
    ABSENT ON NULL RETURNING jsonb) END,
  -- decision 0552 (svc extension): present only when the callee opted out on this call, so the object of every
  -- other call is what it was
  'opt_out': CASE WHEN c.opt_out THEN true END
  ABSENT ON NULL RETURNING jsonb)
