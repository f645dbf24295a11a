// The organization roles, without zod: libs/auth's permissions (which the dashboard imports) read them.

/**
 * The roles a person can have in an organization, from most to least powerful. `owner`: everything,
 * the organization's members, roles and deletion included; `admin`: members other than owners,
 * chatbots, keys, settings, deletions and erasures; `member`: reads everything, edits chatbot names and
 * settings; `viewer`: reads conversations and analytics only.
 */
export const organizationRoles = ['owner', 'admin', 'member', 'viewer'] as const
export type OrganizationRole = (typeof organizationRoles)[number]
