import { PageHeading } from '../components/page-heading.tsx'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'

export function NotFoundPage({ what = 'page' }: { what?: string }) {
  return (
    <section className="page">
      <PageHeading title="Not found" />
      <p>There is no such {what} in your organization (it may have been deleted).</p>
      <p>
        <Link to={paths.chatbots()}>Back to your chatbots</Link>
      </p>
    </section>
  )
}
