/**
 * E.164 phone numbers: a `+` followed by 1 to 15 digits, the first of them 1-9 (ITU-T E.164; spec,
 * create-batch-call: "a number in E.164 format"). No spaces, dashes or parentheses are accepted: the
 * service stores and compares numbers in this one form.
 */
import { Schema } from "effect"

/**
 * A valid example number, used in messages and the OpenAPI document.
 *
 * @category schemas
 */
export const E164Example = "+14155550123"

/**
 * The phrase decode failures use: "`<path>` must be an E.164 number like +14155550123".
 *
 * @category schemas
 */
export const E164Expected = `an E.164 number like ${E164Example}`

// The `u` flag lets the pattern be exported to the JSON Schema of the OpenAPI document.
const e164Pattern = /^\+[1-9]\d{0,14}$/u

/**
 * Whether a string is an E.164 number.
 *
 * @category guards
 */
export const isE164 = (value: string): boolean => e164Pattern.test(value)

/**
 * The E.164 rule as a schema check, for fields whose check depends on another field (a batch call task's
 * `to_number` with `ignore_e164_validation`).
 *
 * @category schemas
 */
export const isE164Number = Schema.isPattern(e164Pattern, { expected: E164Expected })

/**
 * A string that is an E.164 number, branded so that unchecked strings cannot be passed for it.
 *
 * @category schemas
 */
export const E164 = Schema.String.check(isE164Number).annotate({
  description: "A phone number in E.164 format: + followed by 1 to 15 digits, the first 1-9.",
  examples: [E164Example]
}).pipe(Schema.brand("E164"))

/**
 * An E.164 phone number.
 *
 * @category models
 */
export type E164 = typeof E164.Type
