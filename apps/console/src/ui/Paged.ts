/**
 * A cursor-paged list for a VirtualTable: the first page on mount (and whenever `deps` change), the next one when the
 * table asks for more. A stale answer (the filters changed meanwhile) is dropped.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import type { Page } from "../api/Types.ts"

export interface Paged<A> {
  readonly rows: ReadonlyArray<A>
  readonly hasMore: boolean
  readonly loading: boolean
  readonly error: string | undefined
  readonly total: number | undefined
  readonly loadMore: () => void
  readonly reload: () => void
}

export const usePaged = <A>(
  fetchPage: (paginationKey: string | undefined) => Promise<Page<A>>,
  deps: ReadonlyArray<unknown>
): Paged<A> => {
  const [rows, setRows] = useState<ReadonlyArray<A>>([])
  const [hasMore, setHasMore] = useState(false)
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<string | undefined>(undefined)
  const [total, setTotal] = useState<number | undefined>(undefined)
  const generation = useRef(0)
  const nextKey = useRef<string | undefined>(undefined)
  const busy = useRef(false)

  const load = useCallback((first: boolean) => {
    if (busy.current && !first) return
    const mine = first ? ++generation.current : generation.current
    busy.current = true
    setLoading(true)
    fetchPage(first ? undefined : nextKey.current).then(
      (page) => {
        if (mine !== generation.current) return
        nextKey.current = page.pagination_key
        setRows((before) => first ? page.items : [...before, ...page.items])
        setHasMore(page.has_more && page.pagination_key !== undefined)
        if (page.total !== undefined) setTotal(page.total)
        setError(undefined)
        busy.current = false
        setLoading(false)
      },
      (e: unknown) => {
        if (mine !== generation.current) return
        setError(e instanceof Error ? e.message : String(e))
        setHasMore(false)
        busy.current = false
        setLoading(false)
      }
    )
  }, deps)

  useEffect(() => {
    setRows([])
    setTotal(undefined)
    load(true)
  }, deps)

  return { rows, hasMore, loading, error, total, loadMore: () => load(false), reload: () => load(true) }
}
