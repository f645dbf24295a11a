"""Exports GenAI spans with the official OpenTelemetry SDK for Python and its OTLP/HTTP protobuf exporter.

Run by test/otel-python.test.ts against the real service (CAS_OTLP_ENDPOINT, CAS_API_KEY). Sends:
- a chat in the current conventions (gen_ai.input.messages / gen_ai.output.messages as JSON strings,
  gen_ai.system_instructions), three model calls each repeating the history before it;
- a chat in the earlier forms: gen_ai.prompt.N / gen_ai.completion.N attributes (session.id), then
  gen_ai.user.message / gen_ai.choice span events (the trace is the conversation);
- a span that is not GenAI.
Every export must succeed (the exit code says so); the trace id of the event-form chat is printed as JSON.
"""

import json
import os
import sys
import time

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class Recording(SpanExporter):
    """The exporter's results: the SDK only logs a failed export."""

    def __init__(self, inner):
        self.inner = inner
        self.results = []

    def export(self, spans):
        result = self.inner.export(spans)
        self.results.append(result)
        return result

    def shutdown(self):
        self.inner.shutdown()

    def force_flush(self, timeout_millis=30000):
        return True


exporter = Recording(
    OTLPSpanExporter(
        endpoint=os.environ["CAS_OTLP_ENDPOINT"],
        headers={"Authorization": f"Bearer {os.environ['CAS_API_KEY']}"},
        compression=Compression.Gzip,
    )
)
provider = TracerProvider(resource=Resource.create({"service.name": "python-support-bot"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
tracer = provider.get_tracer("python-support-bot", "1.0.0")

NS = 1_000_000
t0 = (int(time.time() * 1000) - 10 * 60_000) * NS


def text(role, content):
    return {"role": role, "parts": [{"type": "text", "content": content}]}


system = json.dumps([{"type": "text", "content": "You are the help desk of a train company."}])
u1 = text("user", "My train was cancelled and nobody told me. This is awful!")
a1 = text("assistant", "I am sorry. You can get a refund for the ticket.")
u2 = text("user", "Great, thank you so much for the quick help!")
a2 = text("assistant", "Glad to help.")


def chat(at, inputs, outputs):
    span = tracer.start_span(
        "chat gpt-4o-mini",
        start_time=at,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.conversation.id": "python-current",
            "user.id": "traveller-1",
            "gen_ai.system_instructions": system,
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        },
    )
    span.end(end_time=at + 500 * NS)


chat(t0, [u1], [a1])
chat(t0 + 1000 * NS, [u1, a1, u2], [a2])
# The same call exported again (a retry of the application's): nothing new is stored.
chat(t0 + 1000 * NS, [u1, a1, u2], [a2])

# Earlier attributes, keyed by session.id.
for n, (prompt, completion) in enumerate(
    [
        ([("user", "Can I bring my bike on the train?")], "Yes, in the bike carriage."),
        (
            [
                ("user", "Can I bring my bike on the train?"),
                ("assistant", "Yes, in the bike carriage."),
                ("user", "Does it cost extra?"),
            ],
            "No, bikes travel free.",
        ),
    ]
):
    attributes = {"gen_ai.system": "openai", "session.id": "python-session", "enduser.id": "cyclist-9"}
    for i, (role, content) in enumerate(prompt):
        attributes[f"gen_ai.prompt.{i}.role"] = role
        attributes[f"gen_ai.prompt.{i}.content"] = content
    attributes["gen_ai.completion.0.role"] = "assistant"
    attributes["gen_ai.completion.0.content"] = completion
    at = t0 + (2000 + n * 1000) * NS
    tracer.start_span("openai.chat", start_time=at, attributes=attributes).end(end_time=at + 300 * NS)

# Events, one per message; the trace is the conversation.
at = t0 + 5000 * NS
span = tracer.start_span("chat", start_time=at, attributes={"gen_ai.system": "openai"})
trace_id = format(span.get_span_context().trace_id, "032x")
span.add_event("gen_ai.system.message", {"content": "Answer in one sentence."}, timestamp=at)
span.add_event("gen_ai.user.message", {"content": "When does the last train leave?"}, timestamp=at)
span.add_event(
    "gen_ai.choice",
    {"index": 0, "finish_reason": "stop", "message": json.dumps({"role": "assistant", "content": "At 23:40."})},
    timestamp=at + 200 * NS,
)
span.end(end_time=at + 200 * NS)

# Not GenAI: acknowledged and ignored.
tracer.start_span("GET /healthz", attributes={"http.route": "/healthz"}).end()

provider.shutdown()
ok = len(exporter.results) == 7 and all(r == SpanExportResult.SUCCESS for r in exporter.results)
print(json.dumps({"traceId": trace_id, "results": [r.name for r in exporter.results]}))
sys.exit(0 if ok else 1)
