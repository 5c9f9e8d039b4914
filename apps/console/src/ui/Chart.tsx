/**
 * Task counts per state over time, drawn by uPlot (docs/decisions/0800: a small canvas chart that redraws 3,000
 * points in well under a frame). The canvas is described for screen readers by `summary`, and the same numbers are
 * in the counts table beside it.
 */
import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"
import { TASK_STATES, type TaskState } from "../api/Types.ts"
import type { Sample } from "../Format.ts"

// colours with at least 3:1 contrast against the white background (WCAG 1.4.11, non-text contrast)
export const STATE_COLOURS: Readonly<Record<TaskState, string>> = {
  pending: "#5b6470",
  dialling: "#0b63c5",
  unknown: "#8a5300",
  completed: "#1a7f37",
  failed: "#c11f1f",
  skipped: "#6f42c1",
  cancelled: "#9a3412"
}

const toData = (samples: ReadonlyArray<Sample>): uPlot.AlignedData => [
  samples.map((s) => s.t / 1000),
  ...TASK_STATES.map((state) => samples.map((s) => s.counts[state]))
]

export const TaskChart = (props: { readonly samples: ReadonlyArray<Sample>; readonly summary: string }) => {
  const host = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | undefined>(undefined)
  useEffect(() => {
    const element = host.current
    if (element === null) return
    const width = Math.max(280, element.clientWidth)
    plot.current = new uPlot(
      {
        width,
        height: 240,
        // one sample (a page just opened) would stretch the axis over years: show a minute either side instead
        scales: { x: { time: true, range: (_u, min, max) => (min === max ? [min - 60, max + 60] : [min, max]) } },
        axes: [{ stroke: "#333" }, { stroke: "#333" }],
        series: [
          {},
          ...TASK_STATES.map((state) => ({ label: state, stroke: STATE_COLOURS[state], width: 2 }))
        ],
        legend: { show: true }
      },
      toData(props.samples),
      element
    )
    const resize = new ResizeObserver(() =>
      plot.current?.setSize({ width: Math.max(280, element.clientWidth), height: 240 })
    )
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.current?.destroy()
      plot.current = undefined
    }
  }, [])
  useEffect(() => {
    plot.current?.setData(toData(props.samples))
  }, [props.samples])
  return (
    <figure class="chart">
      <div ref={host} role="img" aria-label={props.summary} />
      <figcaption>{props.summary}</figcaption>
    </figure>
  )
}
