/**
 * Calling policies (legal hours, attempt caps, per org and per batch; decisions 0620-0625): what other features and
 * the apps may use of them (rule 5 of the dependency rule).
 */
export * from "./CallingPolicyRepo.ts"
