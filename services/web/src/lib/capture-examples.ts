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

/** A value on one line, as TypeScript or Python source (JSON's strings are valid in both). */
function inline(value: unknown, lang: 'ts' | 'py'): string {
  if (value === null) return lang === 'py' ? 'None' : 'null'
  if (typeof value === 'boolean') return lang === 'py' ? (value ? 'True' : 'False') : String(value)
  if (Array.isArray(value)) return `[${value.map((v) => inline(v, lang)).join(', ')}]`
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) =>
      lang === 'py' ? `${JSON.stringify(k)}: ${inline(v, lang)}` : `${k}: ${inline(v, lang)}`,
    )
    return lang === 'py' ? `{${entries.join(', ')}}` : `{ ${entries.join(', ')} }`
  }
  return JSON.stringify(value)
}

/** The same capture with the TypeScript SDK (sdks/typescript): batched, gzipped and retried for you. */
export function typescriptSdkExample(origin: string, apiKey: string | undefined): string {
  const { conversationId, messages, user } = exampleCapture()
  return [
    '// Not on the npm registry yet: npm pack -w sdks/typescript in a checkout of this service,',
    '// then npm install the .tgz it makes (docs/first-conversation.md)',
    "import { ConversationAnalytics } from '@conversation-analytics/sdk'",
    '',
    '// On your server: the API key is a secret.',
    'const analytics = new ConversationAnalytics({',
    `  apiKey: ${JSON.stringify(apiKey ?? KEY_PLACEHOLDER)},`,
    `  baseUrl: ${JSON.stringify(origin)},`,
    '})',
    '',
    '// After each turn of your chatbot (returns at once; sent in the background):',
    'analytics.capture({',
    `  conversationId: ${JSON.stringify(conversationId)},`,
    '  messages: [',
    ...messages.map((m) => `    ${inline(m, 'ts')},`),
    '  ],',
    `  user: ${inline(user, 'ts')},`,
    '})',
    '',
    '// Before the process ends (Node.js also flushes by itself at exit):',
    'await analytics.shutdown()',
  ].join('\n')
}

/** The same capture with the Python SDK (sdks/python): a background thread sends, and flushes at exit. */
export function pythonSdkExample(origin: string, apiKey: string | undefined): string {
  const { conversationId, messages, user } = exampleCapture()
  return [
    '# Not on PyPI yet: pip install /path/to/a/checkout/of/this/service/sdks/python',
    'from conversation_analytics import Client',
    '',
    '# On your server: the API key is a secret.',
    `analytics = Client(api_key=${JSON.stringify(apiKey ?? KEY_PLACEHOLDER)}, base_url=${JSON.stringify(origin)})`,
    '',
    '# After each turn of your chatbot (returns at once; sent in the background):',
    'analytics.capture(',
    `    ${JSON.stringify(conversationId)},`,
    '    [',
    ...messages.map((m) => `        ${inline(m, 'py')},`),
    '    ],',
    `    user=${inline(user, 'py')},`,
    ')',
    '',
    'analytics.shutdown()  # optional: it also flushes when the interpreter exits',
  ].join('\n')
}

/**
 * For an app that already uses OpenTelemetry: the standard OTLP exporter variables that send its traces
 * to POST /v1/traces with the key; the GenAI spans become conversations, the rest is ignored.
 */
export function opentelemetryExample(origin: string, apiKey: string | undefined): string {
  return [
    '# Any OpenTelemetry SDK sends its GenAI spans here: set these where your app runs.',
    `export OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${shellQuote(`${origin}/v1/traces`)}`,
    `export OTEL_EXPORTER_OTLP_TRACES_HEADERS=${shellQuote(`Authorization=Bearer%20${apiKey ?? KEY_PLACEHOLDER}`)}`,
    'export OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf',
  ].join('\n')
}
