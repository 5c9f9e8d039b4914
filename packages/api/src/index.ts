/**
 * The HTTP contract of svc (spec: voice-agent-api.md), shared by the server, its tests and clients.
 * The endpoints arrive with the server issue; the error body is fixed here first.
 */
export * as ErrorBody from "./ErrorBody.ts"
