"""Flushing at exit: a program that captures and ends, with no flush() or shutdown()."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SYNC = """
import json, sys
from conversation_analytics import Client
client = Client(sys.argv[1], sys.argv[2], batch_size=1000, flush_interval=3600)
ids = {f"exit-{c}": [client.message(f"exit-{c}", "user", f"m{i}") for i in range(10)] for c in range(3)}
print(json.dumps(ids))
"""

ASYNC = """
import asyncio, json, sys
from conversation_analytics import AsyncClient

async def main():
    client = AsyncClient(sys.argv[1], sys.argv[2], batch_size=1000, flush_interval=3600)
    return {f"exit-{c}": [client.message(f"exit-{c}", "user", f"m{i}") for i in range(10)] for c in range(3)}

print(json.dumps(asyncio.run(main())))
"""


@pytest.mark.parametrize("program", [SYNC, ASYNC], ids=["Client", "AsyncClient"])
def test_what_is_queued_is_sent_at_exit(service, chatbot, program):
    bot = chatbot()
    done = subprocess.run(
        [sys.executable, "-c", program, bot["api_key"], service.url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    ids = json.loads(done.stdout)
    read = service.messages(bot["id"], {c: 10 for c in ids})
    assert {c: sorted(read[c]) for c in ids} == {c: sorted(m) for c, m in ids.items()}
