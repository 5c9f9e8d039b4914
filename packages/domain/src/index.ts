/**
 * The pure domain of svc: resource models, call windows, pagination keys and the deprecation
 * schedule. Imports only `effect` (the dependency rule, docs/architecture.md).
 */
export {}
