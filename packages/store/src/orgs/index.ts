/**
 * Organisations and their API keys: what other features and the apps may use of them (rule 5 of the dependency
 * rule), among them `OrgNotFound`, the error every org-scoped write answers for an org that is gone.
 */
export * from "./ApiKeys.ts"
