import { type ReactNode, useEffect, useRef } from 'react'
import { useRouter } from '../lib/router.tsx'

/**
 * The page's h1, which also names the document. After an in-app navigation it takes the focus, so that
 * keyboard and screen-reader users start at the new page rather than at the link they left.
 */
export function PageHeading({ title, children }: { title: string; children?: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null)
  const { location } = useRouter()
  useEffect(() => {
    document.title = `${title} · Conversation Analytics`
  }, [title])
  useEffect(() => {
    if (location.key > 0) ref.current?.focus({ preventScroll: true })
  }, [location.key])
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children ?? title}
    </h1>
  )
}
