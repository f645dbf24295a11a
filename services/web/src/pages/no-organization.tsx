import { CreateOrganizationSection } from '../components/organization-sections.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { useSession } from '../lib/session.tsx'

/**
 * Signed in, but working in no organization: removed from the only one, or the one in use was left or
 * deleted. Pick another (the switcher above) or create one; an invitation link also brings them in.
 */
export function NoOrganizationPage() {
  const { account } = useSession()
  const others = account?.organizations.length ?? 0
  return (
    <section className="page">
      <PageHeading title="No organization" />
      {others > 0 ? (
        <p>
          You are not working in an organization right now: choose one of yours with the switcher above, or
          create one.
        </p>
      ) : (
        <p>
          You don't belong to any organization. Create one of your own, or open an invitation link someone
          sent you to join theirs.
        </p>
      )}
      <CreateOrganizationSection first />
    </section>
  )
}
