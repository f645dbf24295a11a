import { PageHeading } from '../components/page-heading.tsx'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'

export function NotFoundPage({ what = 'page' }: { what?: string }) {
  return (
    <section className="page">
      <PageHeading title="Not found" />
      <p>There is no such {what} in your organization (it may have been deleted).</p>
      <p>
        <Link to={paths.home()}>Back to the start</Link>
      </p>
    </section>
  )
}

/** A page the role may not see (the server would refuse its data all the same). */
export function ForbiddenPage() {
  const { account } = useSession()
  const organization = account?.organization
  return (
    <section className="page">
      <PageHeading title="Not available to your role" />
      <p>
        As{' '}
        {organization
          ? `${article(organization.role)} ${organization.role} of ${organization.name}`
          : 'a member'}
        , you can't see this page. An owner or admin of the organization can change your role.
      </p>
      <p>
        <Link to={paths.home()}>Back to the start</Link>
      </p>
    </section>
  )
}

export function article(role: string): string {
  return role === 'owner' || role === 'admin' ? 'an' : 'a'
}
