/** A placeholder for the key in the examples when the full key is no longer known to the page. */
export const KEY_PLACEHOLDER = 'YOUR_API_KEY'

/** The body both examples send: a two-message conversation the analysis gives a clear sentiment. */
export function exampleCapture() {
  return {
    conversationId: 'welcome-conversation',
    messages: [
      {
        id: 'welcome-1',
        role: 'user',
        content: 'Hi! The setup was quick and I love it.',
      },
      { id: 'welcome-2', role: 'assistant', content: 'Great to hear! Anything else I can help with?' },
    ],
    user: { id: 'user-1', name: 'Ada' },
  }
}

/** Single-quoted for a POSIX shell: safe whatever the text holds. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/** A curl command that captures the example conversation with `apiKey` on the server at `origin`. */
export function curlExample(origin: string, apiKey: string | undefined): string {
  const body = JSON.stringify(exampleCapture(), null, 2)
  return [
    `curl ${shellQuote(`${origin}/api/v1/capture`)} \\`,
    `  -H ${shellQuote(`Authorization: Bearer ${apiKey ?? KEY_PLACEHOLDER}`)} \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(body)}`,
  ].join('\n')
}

/** The same capture from JavaScript (Node.js 18+ or any server-side runtime with fetch). */
export function javascriptExample(origin: string, apiKey: string | undefined): string {
  const body = JSON.stringify(exampleCapture(), null, 2).replace(/\n/g, '\n  ')
  return [
    '// Run this on your server: the API key is a secret, never ship it to browsers.',
    `const response = await fetch(${JSON.stringify(`${origin}/api/v1/capture`)}, {`,
    "  method: 'POST',",
    '  headers: {',
    `    Authorization: ${JSON.stringify(`Bearer ${apiKey ?? KEY_PLACEHOLDER}`)},`,
    "    'Content-Type': 'application/json',",
    '  },',
    `  body: JSON.stringify(${body}),`,
    '})',
    'console.log(response.status, await response.json())',
  ].join('\n')
}
