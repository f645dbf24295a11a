"""429 with Retry-After, both clients at once (each its own chatbot, so its own limit)."""

from __future__ import annotations

import asyncio
from typing import List

from helpers import wait_until, wait_until_async

from conversation_analytics import AsyncClient, Client


def test_429_waits_for_retry_after_then_sends_everything(service, chatbot):
    over = service.rate_limit + 5
    sync_bot, async_bot = chatbot(), chatbot()
    # One conversation per capture request: `over` requests, 5 beyond the service's limit per minute.
    client = Client(sync_bot["api_key"], service.url, batch_size=1000, flush_interval=3600)
    sync_ids = [client.message(f"limited-{i}", "user", "hello") for i in range(over)]
    assert client.flush(timeout=0) is False  # starts sending

    async def main() -> List[str]:
        async with AsyncClient(async_bot["api_key"], service.url, batch_size=1000, flush_interval=3600) as aclient:
            ids = [aclient.message(f"limited-{i}", "user", "hello") for i in range(over)]
            assert await aclient.flush(timeout=300)
            stats = aclient.stats
            # One 429: the client waited as long as Retry-After said, so its retry was in the next window,
            # and what came after it too. A client that retried sooner would have met the limit again.
            assert (stats.rate_limited, stats.sent, stats.stored, stats.failed) == (1, over, over, 0)
            return ids

    async_ids = asyncio.run(main())
    assert client.flush(timeout=300)
    stats = client.stats
    assert (stats.rate_limited, stats.sent, stats.stored, stats.failed) == (1, over, over, 0)
    client.shutdown()
    for bot, ids in ((sync_bot, sync_ids), (async_bot, async_ids)):
        read = service.messages(bot["id"], {f"limited-{i}": 1 for i in range(over)})
        assert sorted(m for ms in read.values() for m in ms) == sorted(ids)


def test_a_429_counts_once_when_the_client_shuts_down_before_its_retry(service, chatbot):
    # The Python SDK counted a 429 when it was retried and again when the client then gave the request up
    # at shutdown (2 for one answer); `rate_limited` counts answers, as the TypeScript SDK's `rateLimited`.
    over = service.rate_limit + 5
    sync_bot, async_bot = chatbot(), chatbot()
    client = Client(sync_bot["api_key"], service.url, batch_size=1000, flush_interval=3600, on_error=lambda e: None)
    for i in range(over):
        client.message(f"limited-{i}", "user", "hello")
    assert client.flush(timeout=0) is False  # starts sending
    wait_until(lambda: client.stats.retries >= 1, "the 429's retry to wait for Retry-After")
    client.shutdown(timeout=0)
    stats = client.stats
    assert (stats.rate_limited, stats.retries, stats.sent + stats.failed) == (1, 1, over)

    async def main() -> None:
        aclient = AsyncClient(
            async_bot["api_key"], service.url, batch_size=1000, flush_interval=3600, on_error=lambda e: None
        )
        for i in range(over):
            aclient.message(f"limited-{i}", "user", "hello")
        assert await aclient.flush(timeout=0) is False
        await wait_until_async(lambda: aclient.stats.retries >= 1, "the 429's retry to wait for Retry-After")
        await aclient.shutdown(timeout=0)
        stats = aclient.stats
        assert (stats.rate_limited, stats.retries, stats.sent + stats.failed) == (1, 1, over)

    asyncio.run(main())
