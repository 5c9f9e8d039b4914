/**
 * The scheduler's statements (docs/decisions/0401-scheduler-row-leasing.md): what other features and the apps may
 * use of dispatch. `DispatchRepo` is the service composed of DueBatches, Claims, DryBatches, Leases, Attempts,
 * LegalGroupsRepo and OrgLock (its models and constants come with it); `DispatchInspect` the operators' views;
 * `DispatchWakeups` the LISTEN on created batches; `LegalHoursRows` the rows a batch's legal-hours summary is
 * explained from (by the callers, with the domain's `compliance/LegalHoursReport`: dependency rule 3).
 */
export * from "./DispatchInspect.ts"
export * from "./DispatchRepo.ts"
export * from "./DispatchWakeups.ts"
export * from "./LegalHoursRows.ts"
