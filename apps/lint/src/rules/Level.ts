/**
 * Report levels (SARIF's words) and how a rule's status at the `--as-of` date maps to one:
 * removed -> error, deprecated -> warning, upcoming within `--upcoming-days` -> note.
 */
import type { Status } from "@svc/domain/Deprecation/Rule.ts"

/** How serious a problem is. */
export type Level = "error" | "warning" | "note"

/** A rule setting in the config file: a fixed level, or `off`. */
export type Setting = Level | "off"

export const levels: ReadonlyArray<Level> = ["error", "warning", "note"]

const rank: Record<Level, number> = { note: 1, warning: 2, error: 3 }

/** Whether `level` is at least as serious as `threshold`. */
export const atLeast = (level: Level, threshold: Level): boolean => rank[level] >= rank[threshold]

/** Orders the most serious first. */
export const compare = (a: Level, b: Level): number => rank[b] - rank[a]

/** The level of a schedule status. */
export const ofStatus = (status: Status): Level =>
  status === "removed" ? "error" : status === "deprecated" ? "warning" : "note"

export const isLevel = (u: unknown): u is Level => u === "error" || u === "warning" || u === "note"

export const isSetting = (u: unknown): u is Setting => u === "off" || isLevel(u)
