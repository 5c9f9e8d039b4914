/** svc-scheduler as a library, for the all-in-one `npm start` composition (tools/start). */
export * as Scheduler from "./runtime/Scheduler.ts"
