import { type ReactNode, useEffect, useId, useRef } from 'react'

/**
 * A modal dialog on the native <dialog> element: focus moves into it and stays there, Escape closes it,
 * and focus returns to whatever opened it.
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean
  title: string
  onClose: () => void
  children: ReactNode
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  }, [open])
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} className="dialog">
      <h2 id={titleId}>{title}</h2>
      {open ? children : null}
    </dialog>
  )
}

/** A confirmation dialog's buttons: Cancel, and the action (danger), busy while it runs. */
export function ConfirmActions({
  onCancel,
  onConfirm,
  busy,
  label,
  busyLabel,
}: {
  onCancel: () => void
  onConfirm: () => void
  busy: boolean
  label: string
  busyLabel: string
}) {
  return (
    <div className="dialog-actions">
      <button type="button" className="button secondary" onClick={onCancel}>
        Cancel
      </button>
      <button type="button" className="button danger" onClick={onConfirm} disabled={busy}>
        {busy ? busyLabel : label}
      </button>
    </div>
  )
}
