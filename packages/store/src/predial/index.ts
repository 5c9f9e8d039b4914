/**
 * Pre-dial checks (decision 0553): what other features and the apps may use of them, `PredialRepo` (an org's setting,
 * the workers' targets, the undo of an attempt the check did not allow) with its models.
 */
export * from "./PredialRepo.ts"
