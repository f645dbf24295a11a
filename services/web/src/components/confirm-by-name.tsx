import { type FormEvent, type ReactNode, useState } from 'react'
import { ErrorAlert } from './alert.tsx'
import { Dialog } from './dialog.tsx'

/**
 * The dialog of a permanent deletion: it says what goes, and acts only once the thing's name is typed.
 * `onConfirm` does the deletion (and what follows it); its error is shown under `errorPrefix`.
 */
export function ConfirmByNameDialog({
  open,
  onClose,
  title,
  name,
  inputId,
  errorPrefix,
  onConfirm,
  children,
}: {
  open: boolean
  onClose: () => void
  title: string
  /** What must be typed. */
  name: string
  inputId: string
  errorPrefix: string
  onConfirm: () => Promise<void>
  /** What is deleted, said plainly. */
  children: ReactNode
}) {
  const [typed, setTyped] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const matches = typed === name

  const remove = async (event: FormEvent) => {
    event.preventDefault()
    if (!matches) return
    setBusy(true)
    setError(undefined)
    try {
      await onConfirm()
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  const close = () => {
    setTyped('')
    onClose()
  }

  return (
    <Dialog open={open} title={title} onClose={close}>
      <form onSubmit={remove} className="stack">
        <p>
          <strong>This is permanent and cannot be undone.</strong> {children}
        </p>
        <div className="field">
          <label htmlFor={inputId}>
            Type <strong>{name}</strong> to confirm
          </label>
          <input
            id={inputId}
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        </div>
        <ErrorAlert error={error} prefix={errorPrefix} />
        <div className="dialog-actions">
          <button type="button" className="button secondary" onClick={close}>
            Cancel
          </button>
          <button type="submit" className="button danger" disabled={!matches || busy}>
            {busy ? 'Deleting…' : 'Delete permanently'}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
