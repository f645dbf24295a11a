import { describeError } from '../api/client.ts'

/** An error message announced as soon as it appears. */
export function ErrorAlert({ error, prefix }: { error: unknown; prefix?: string }) {
  if (!error) return null
  const text = typeof error === 'string' ? error : describeError(error)
  return (
    <p className="alert error" role="alert">
      {prefix ? `${prefix} ` : ''}
      {text}
    </p>
  )
}

export function ProblemList({ problems }: { problems: readonly string[] }) {
  if (problems.length === 0) return null
  return (
    <div className="alert error" role="alert">
      <p>Please fix:</p>
      <ul>
        {problems.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
    </div>
  )
}
