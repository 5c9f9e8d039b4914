// `npm start`: the whole product in one process on the embedded PostgreSQL (or DATABASE_URL):
// the HTTP API and the scheduler share one database layer, so one pool and one embedded server,
// which this process restarts if it dies (and stops, with one line, if it cannot).
// This file composes the apps, so it lives in tools/ (a composition root), not in an app: apps
// never import each other (docs/architecture.md).
import { Logging, Main } from "@svc/runtime"
import { Scheduler } from "@svc/scheduler"
import { Server } from "@svc/server"
import { Database } from "@svc/store"
import { Layer } from "effect"

Main.launch(
  "svc",
  Layer.mergeAll(Server.layer, Scheduler.layer).pipe(
    Layer.provideMerge(Database.layerSupervised),
    Layer.provide(Logging.layer)
  ),
  Database.supervisionFailed
)
