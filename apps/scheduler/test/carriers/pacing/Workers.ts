/**
 * Two pacing "workers" over one shared store, each with its own connection(s), as two scheduler processes would
 * have: two PostgreSQL pools on one fresh database, or two Redis clients on one redis-server (Debian's, spawned on
 * a free port as the server's RateLimitRedis test does).
 */
import { NodeRedis } from "@effect/platform-node"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Effect, Layer, type Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import * as CarrierPacerPostgres from "../../../src/carriers/pacing/CarrierPacerPostgres.ts"
import * as CarrierPacerRedis from "../../../src/carriers/pacing/CarrierPacerRedis.ts"
import type { CarrierPacingSettings } from "../../../src/carriers/pacing/CarrierPacingConfig.ts"
import * as SlotPacer from "../../../src/carriers/pacing/SlotPacer.ts"
import type { SlotStore } from "../../../src/carriers/pacing/SlotPacer.ts"
import { watched } from "./StoreWatch.ts"

let counter = 0

/** A fresh database cloned from the migrated template, dropped with the scope; its URL. */
export const freshDatabase = Effect.gen(function*() {
  const admin = yield* TestDatabase.adminUrl
  const name = `svc_pacing_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
  yield* Effect.acquireRelease(
    DatabaseAdmin.ensureDatabase(admin, name, process.env["SVC_TEST_TEMPLATE"]).pipe(Effect.orDie),
    () => DatabaseAdmin.dropDatabase(admin, name).pipe(Effect.ignore)
  )
  return { admin, name, url: TestDatabase.urlFor(admin, name) }
})

/**
 * A pacer on its own pool (2 connections) on the database at `url`: `CarrierPacerPostgres.make`'s pacer, its store
 * watched for `StoreWatch.settle`.
 */
export const postgresWorker = (
  url: Redacted.Redacted<string>,
  settings: CarrierPacingSettings,
  wrap: (store: SlotStore) => SlotStore = (store) => store
) =>
  Effect.flatMap(
    Layer.build(Database.layerFromUrl(url, { migrate: false, maxConnections: 2 })),
    (context) =>
      CarrierPacerPostgres.store.pipe(
        Effect.provideContext(context),
        Effect.map((store) => SlotPacer.make(watched(wrap(store)), settings))
      )
  )

/** Two pacers on two pools over one fresh database (`wrap` applied to each one's store). */
export const postgresWorkers = (settings: CarrierPacingSettings, wrap?: (store: SlotStore) => SlotStore) =>
  Effect.gen(function*() {
    const { url } = yield* freshDatabase
    return [yield* postgresWorker(url, settings, wrap), yield* postgresWorker(url, settings, wrap)] as const
  })

/** A pacer on its own Redis client: `CarrierPacerRedis.make`'s pacer, its store watched for `StoreWatch.settle`. */
export const redisWorker = (url: string, settings: CarrierPacingSettings) =>
  Effect.flatMap(
    Layer.build(NodeRedis.layer({ url, disableOfflineQueue: true })),
    (context) =>
      CarrierPacerRedis.store.pipe(
        Effect.provideContext(context),
        Effect.map((store) => SlotPacer.make(watched(store), settings))
      )
  )

/** Two pacers on two Redis clients. */
export const redisWorkers = (url: string, settings: CarrierPacingSettings) =>
  Effect.gen(function*() {
    return [yield* redisWorker(url, settings), yield* redisWorker(url, settings)] as const
  })

const REDIS = process.env["SVC_REDIS_SERVER"] ?? "/usr/bin/redis-server"

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** A redis-server of this test file's own (no persistence). */
export const startRedis = async (): Promise<{ readonly url: string; readonly process: ChildProcess }> => {
  const port = await freePort()
  const child = spawn(REDIS, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  await new Promise<void>((resolve, reject) => {
    let out = ""
    child.stdout?.on("data", (chunk) => {
      out += chunk
      if (out.includes("Ready to accept connections")) resolve()
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`redis-server exited ${code}: ${out}`)))
  })
  return { url: `redis://127.0.0.1:${port}`, process: child }
}

/** Stops a redis-server and waits for it to be gone. */
export const stopRedis = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })
