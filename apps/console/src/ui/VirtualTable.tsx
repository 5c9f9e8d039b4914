/**
 * A long table that renders only the rows in view (a 100,000-task batch, a million contacts: long tables are
 * virtualised), on TanStack Virtual's headless core (docs/decisions/0800). Rows have one fixed height, so the
 * scroll height is exact without measuring. The API pages with cursors, so rows are appended as the user scrolls near
 * the end (`loadMore`): a page is fetched only when it is about to be seen.
 *
 * Accessibility: ARIA table roles with `aria-rowcount`/`aria-rowindex` (a screen reader knows the table's real size
 * while only some rows exist), a focusable scroll region (keyboard users scroll it with the arrow keys), and cells
 * that hold real links.
 */
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from "@tanstack/virtual-core"
import type { ComponentChildren } from "preact"
import { useLayoutEffect, useReducer, useRef, useState } from "preact/hooks"

export interface Column<A> {
  readonly header: string
  /** CSS grid track, e.g. `minmax(8rem, 1fr)` */
  readonly width: string
  readonly render: (row: A) => ComponentChildren
  /** Hidden at phone width, where the rest must fit. */
  readonly optional?: boolean
}

export interface VirtualTableProps<A> {
  readonly label: string
  readonly columns: ReadonlyArray<Column<A>>
  readonly rows: ReadonlyArray<A>
  readonly rowKey: (row: A) => string
  readonly hasMore: boolean
  readonly loading: boolean
  readonly loadMore: () => void
  /** The total when the API gives one (list-contacts); else the rows loaded (+1 while more exist). */
  readonly total?: number
  readonly rowHeight?: number
  readonly empty?: string
}

const ROW_HEIGHT = 40
// rows of the first paint, before the scroll area is measured (a laptop's table height)
const INITIAL_RECT = { width: 1200, height: 640 }

export function VirtualTable<A>(props: VirtualTableProps<A>) {
  const rowHeight = props.rowHeight ?? ROW_HEIGHT
  const scrollRef = useRef<HTMLDivElement>(null)
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  const [virtualizer] = useState(() =>
    new Virtualizer<HTMLDivElement, HTMLDivElement>({
      count: props.rows.length,
      getScrollElement: () => scrollRef.current,
      estimateSize: () => rowHeight,
      overscan: 10,
      initialRect: INITIAL_RECT,
      observeElementRect,
      observeElementOffset,
      scrollToFn: elementScroll,
      onChange: () => rerender(0)
    })
  )
  virtualizer.setOptions({ ...virtualizer.options, count: props.rows.length })
  useLayoutEffect(() => virtualizer._didMount(), [])
  useLayoutEffect(() => virtualizer._willUpdate())

  const items = virtualizer.getVirtualItems()
  const lastShown = items[items.length - 1]?.index ?? -1
  const nearEnd = lastShown >= props.rows.length - 20
  useLayoutEffect(() => {
    if (nearEnd && props.hasMore && !props.loading) props.loadMore()
  }, [nearEnd, props.hasMore, props.loading, props.rows.length])

  const template = props.columns.map((c) => c.width).join(" ")
  const rowCount = (props.total ?? props.rows.length + (props.hasMore ? 1 : 0)) + 1
  return (
    <div class="vtable">
      <div role="table" aria-label={props.label} aria-rowcount={rowCount}>
        <div role="rowgroup" class="vtable-head">
          <div role="row" aria-rowindex={1} class="vtable-row" style={{ gridTemplateColumns: template }}>
            {props.columns.map((c) => (
              <div role="columnheader" class={c.optional === true ? "cell optional" : "cell"} key={c.header}>
                {c.header}
              </div>
            ))}
          </div>
        </div>
        <div
          ref={scrollRef}
          class="vtable-scroll"
          tabIndex={0}
          role="rowgroup"
          aria-label={`${props.label}: rows`}
          aria-busy={props.loading}
        >
          <div role="presentation" style={{ height: `${virtualizer.getTotalSize()}px`, position: "relative" }}>
            {items.map((item) => {
              const row = props.rows[item.index]
              if (row === undefined) return null
              return (
                <div
                  role="row"
                  aria-rowindex={item.index + 2}
                  class="vtable-row"
                  key={props.rowKey(row)}
                  style={{
                    gridTemplateColumns: template,
                    height: `${rowHeight}px`,
                    transform: `translateY(${item.start}px)`
                  }}
                >
                  {props.columns.map((c) => (
                    <div role="cell" class={c.optional === true ? "cell optional" : "cell"} key={c.header}>
                      {c.render(row)}
                    </div>
                  ))}
                </div>
              )
            })}
          </div>
        </div>
      </div>
      {props.rows.length === 0 && !props.loading ? <p class="empty">{props.empty ?? "Nothing to show."}</p> : null}
      <p class="vtable-foot" aria-live="polite">
        {props.loading
          ? "Loading…"
          : `${props.rows.length.toLocaleString("en-US")}${
            props.total !== undefined ? ` of ${props.total.toLocaleString("en-US")}` : props.hasMore ? "+" : ""
          } rows${props.hasMore ? " (scroll for more)" : ""}`}
      </p>
    </div>
  )
}
