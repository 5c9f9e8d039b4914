/**
 * Suppression (do-not-call) lists (decision 0550): what other features and the apps may use of them.
 * `insertSuppression` writes one number in the caller's transaction (create-suppression, update-call's `opt_out`).
 */
export * from "./SuppressionWrites.ts"
