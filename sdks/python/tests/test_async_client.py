"""The asyncio client against the real service."""

from __future__ import annotations

import asyncio
from typing import Dict, List

from helpers import wait_until_async

from conversation_analytics import AsyncClient, CaptureError


def test_batches_and_flushes(service, chatbot):
    bot = chatbot()

    async def main() -> Dict[str, List[str]]:
        async with AsyncClient(bot["api_key"], service.url, batch_size=100, flush_interval=3600) as client:
            sent: Dict[str, List[str]] = {f"async-{c}": [] for c in range(3)}
            for i in range(40):
                for conversation in sent:
                    sent[conversation].append(client.message(conversation, "user", f"m{i}"))
            # 120 messages: one full batch (100) goes by itself, flush() sends the other 20.
            await wait_until_async(lambda: client.stats.sent == 100, "the full batch")
            # Requests acknowledged: one per conversation and batch.
            assert client.stats.requests == 3
            assert await client.flush(timeout=60)
            stats = client.stats
            assert (stats.requests, stats.sent, stats.stored) == (6, 120, 120)
        return sent

    sent = asyncio.run(main())
    read = service.messages(bot["id"], {c: 40 for c in sent})
    assert {c: sorted(read[c]) for c in sent} == {c: sorted(ids) for c, ids in sent.items()}


def test_retries_across_a_restart_in_the_middle_of_a_batch(service, chatbot):
    bot = chatbot()
    errors: List[CaptureError] = []

    async def main() -> Dict[str, List[str]]:
        client = AsyncClient(
            bot["api_key"],
            service.url,
            batch_size=600,
            flush_interval=3600,
            max_retries=None,
            backoff_max=2.0,
            on_error=errors.append,
        )
        sent: Dict[str, List[str]] = {}
        for c in range(20):
            conversation = f"async-restart-{c}"
            messages = [{"role": "user", "content": f"{conversation} message {i}"} for i in range(30)]
            sent[conversation] = client.capture(conversation, messages)
        await wait_until_async(lambda: client.stats.sent >= 30, "the batch's first request")
        await asyncio.get_running_loop().run_in_executor(None, service.crash)
        assert client.stats.sent < 600, "the batch was not in the middle when the service went down"
        await wait_until_async(lambda: client.stats.retries >= 1, "a retry against the dead service")
        await asyncio.get_running_loop().run_in_executor(None, service.start)
        assert await client.flush(timeout=300)
        stats = client.stats
        assert (stats.sent, stats.failed) == (600, 0)
        # A request the service committed just before it died was never answered: sent again, it is
        # acknowledged as already stored (messagesStored 0). One request (30 messages) is in flight at a
        # time, so at most one is counted so; the read-back below shows nothing lost and nothing doubled.
        assert 570 <= stats.stored <= 600
        assert stats.retries >= 1
        assert await client.shutdown()
        return sent

    sent = asyncio.run(main())
    assert errors == []
    read = service.messages(bot["id"], {c: 30 for c in sent})
    assert {c: sorted(read[c]) for c in sent} == {c: sorted(ids) for c, ids in sent.items()}


def test_bounded_queue_under_a_dead_url(dead_url):
    errors: List[CaptureError] = []

    async def main() -> None:
        client = AsyncClient(
            "svc_live_nothing", dead_url, batch_size=10, max_queue_size=50, max_retries=None, on_error=errors.append
        )
        ids = [client.message("dead", "user", f"m{i}") for i in range(200)]
        queued = [i for i in ids if i is not None]
        # The task has not run yet (capture never yields to the loop): the queue held 50, the rest dropped.
        assert (client.stats.enqueued, client.stats.dropped) == (50, 150)
        await wait_until_async(lambda: client.stats.retries >= 2, "retries against the dead URL")
        assert client.stats.sent == 0
        # Taking the first batch out made room again.
        assert client.message("dead", "user", "room") is not None
        await client.shutdown(timeout=0.5)
        assert (client.stats.sent, client.stats.failed) == (0, len(queued) + 1)

    asyncio.run(main())
    assert sum(len(e.message_ids) for e in errors) == 51
