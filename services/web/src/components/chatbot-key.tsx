import { useRef, useState } from 'react'
import { chatbots } from '../api/endpoints.ts'
import type { Chatbot } from '../api/types.ts'
import { useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { ErrorAlert } from './alert.tsx'
import { ConfirmByNameDialog } from './confirm-by-name.tsx'
import { CopyButton } from './copy-button.tsx'
import { ConfirmActions, Dialog } from './dialog.tsx'

const KEY_INPUT_ID = 'api-key'

/** The full key, right after create or rotate: the one time anyone sees it. */
export function KeyReveal({ chatbot }: { chatbot: Chatbot }) {
  const { freshKey, forgetKey } = useSession()
  const apiKey = freshKey(chatbot.id)
  if (!apiKey) return null
  return (
    <section className="key-reveal" aria-labelledby="key-reveal-heading">
      <h3 id="key-reveal-heading">Your API key</h3>
      <p>
        <strong>Copy it now: you won't see this key again.</strong> Only a hash is kept on the server. Store
        it as a secret on your chatbot's server; if you lose it, rotate the key to get a new one.
      </p>
      <div className="inline-form">
        <div className="field grow">
          <label htmlFor={KEY_INPUT_ID}>API key</label>
          <input
            id={KEY_INPUT_ID}
            readOnly
            value={apiKey}
            className="mono"
            onFocus={(e) => e.target.select()}
          />
        </div>
        <CopyButton text={apiKey} label="Copy key" />
      </div>
      <button type="button" className="button subtle" onClick={() => forgetKey(chatbot.id)}>
        I have stored the key: hide it
      </button>
    </section>
  )
}

export function ApiKeySection({ chatbot, onRotated }: { chatbot: Chatbot; onRotated: (c: Chatbot) => void }) {
  const { rememberKey } = useSession()
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()

  // Closing the dialog gives the focus back to its opener; after a rotation it goes to the new key
  // instead (at the top of the page, selected), once the dialog has closed.
  const focusNewKey = useRef(false)
  const closed = () => {
    setConfirming(false)
    if (!focusNewKey.current) return
    focusNewKey.current = false
    document.getElementById(KEY_INPUT_ID)?.focus()
  }

  const rotate = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const rotated = await chatbots.rotateKey(chatbot.id)
      rememberKey(chatbot.id, rotated.apiKey)
      onRotated(rotated.chatbot)
      focusNewKey.current = true
      setConfirming(false)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="card" aria-labelledby="key-heading">
      <h2 id="key-heading">API key</h2>
      <p>
        Current key: <code>{chatbot.api_key_prefix}</code>
      </p>
      <button
        type="button"
        className="button secondary"
        onClick={() => {
          setError(undefined)
          setConfirming(true)
        }}
      >
        Rotate key…
      </button>
      {/* A refusal is shown once: in the dialog while it is open, here once it is closed. */}
      {confirming ? null : <ErrorAlert error={error} prefix="The key was not rotated." />}
      <Dialog open={confirming} title="Rotate the API key?" onClose={closed}>
        <p>
          A new key is made and shown once. The current key (<code>{chatbot.api_key_prefix}</code>) stops
          working immediately: captures sent with it are refused until your chatbot uses the new one.
        </p>
        <ErrorAlert error={error} prefix="The key was not rotated." />
        <ConfirmActions
          onCancel={() => setConfirming(false)}
          onConfirm={rotate}
          busy={busy}
          label="Rotate key"
          busyLabel="Rotating…"
        />
      </Dialog>
    </section>
  )
}

export function DeleteSection({ chatbot }: { chatbot: Chatbot }) {
  const { navigate } = useRouter()
  const { forgetKey } = useSession()
  const [confirming, setConfirming] = useState(false)

  return (
    <section className="card danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete chatbot</h2>
      <p>Deleting removes the chatbot, its key, and all its conversations, messages and analysis results.</p>
      <button type="button" className="button danger" onClick={() => setConfirming(true)}>
        Delete chatbot…
      </button>
      <ConfirmByNameDialog
        open={confirming}
        onClose={() => setConfirming(false)}
        title={`Delete ${chatbot.name}?`}
        name={chatbot.name}
        inputId="confirm-name"
        errorPrefix="The chatbot was not deleted."
        onConfirm={async () => {
          await chatbots.remove(chatbot.id)
          forgetKey(chatbot.id)
          navigate(paths.chatbots(), { replace: true })
        }}
      >
        The chatbot, its API key and every conversation, message and analysis result it has are deleted; its
        key stops working at once.
      </ConfirmByNameDialog>
    </section>
  )
}
