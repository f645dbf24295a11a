"""The synchronous client against the real service."""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, List

import pytest
from helpers import wait_until

from conversation_analytics import CaptureError, CaptureWarning, Client


def test_batches_by_size_one_request_per_conversation_and_batch(service, chatbot):
    bot = chatbot()
    client = Client(bot["api_key"], service.url, batch_size=100, flush_interval=3600)
    sent: Dict[str, List[str]] = {f"size-{c}": [] for c in range(5)}
    for i in range(40):
        for conversation in sent:
            sent[conversation].append(client.message(conversation, "user" if i % 2 else "assistant", f"m{i}"))
    # No flush: two full batches (100 messages, 20 of each conversation) go by themselves.
    wait_until(lambda: client.stats.sent == 200, "both batches sent")
    stats = client.stats
    # Requests acknowledged (a retry after an overloaded service's 503 counts once): one per conversation and batch.
    assert (stats.requests, stats.stored, stats.failed) == (10, 200, 0)
    read = service.messages(bot["id"], {c: 40 for c in sent})
    assert {c: sorted(read[c]) for c in sent} == {c: sorted(ids) for c, ids in sent.items()}
    client.shutdown()


def test_batches_by_time(service, chatbot):
    bot = chatbot()
    client = Client(bot["api_key"], service.url, batch_size=1000, flush_interval=0.5)
    ids = [client.message("time-1", "user", f"hello {i}") for i in range(3)]
    # Far below batch_size and no flush: the interval sends them, together.
    wait_until(lambda: client.stats.sent == 3, "the interval to send the messages")
    assert (client.stats.requests, client.stats.stored) == (1, 3)
    assert sorted(service.messages(bot["id"], {"time-1": 3})["time-1"]) == sorted(ids)
    client.shutdown()


def test_retries_across_a_restart_in_the_middle_of_a_batch(service, chatbot):
    bot = chatbot()
    errors: List[CaptureError] = []
    client = Client(
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
        conversation = f"restart-{c}"
        messages = [{"role": "user", "content": f"{conversation} message {i}"} for i in range(30)]
        sent[conversation] = client.capture(conversation, messages, user={"id": f"u-{c}"})
    # One batch of 600 messages: 20 requests, one conversation each. The service dies after a few.
    wait_until(lambda: client.stats.sent >= 30, "the batch's first request")
    service.crash()
    assert client.stats.sent < 600, "the batch was not in the middle when the service went down"
    wait_until(lambda: client.stats.retries >= 1, "a retry against the dead service")
    service.start()
    assert client.flush(timeout=300)
    stats = client.stats
    assert errors == []
    assert (stats.sent, stats.failed) == (600, 0)
    # A request the service committed just before it died was never answered: sent again, it is
    # acknowledged as already stored (messagesStored 0). One request (30 messages) is in flight at a
    # time, so at most one is counted so; the read-back below shows nothing lost and nothing doubled.
    assert 570 <= stats.stored <= 600
    assert stats.retries >= 1
    # Each of the 20 requests counts once, however often it was sent.
    assert stats.requests == 20
    read = service.messages(bot["id"], {c: 30 for c in sent})
    # Nothing lost, nothing doubled.
    assert {c: sorted(read[c]) for c in sent} == {c: sorted(ids) for c, ids in sent.items()}
    client.shutdown()


def test_bounded_queue_under_a_dead_service_counts_what_it_drops(service, chatbot):
    bot = chatbot()
    client = Client(bot["api_key"], service.url, batch_size=10, max_queue_size=50, max_retries=None, backoff_max=1.0)
    service.crash()
    try:
        ids = [client.message("dead", "user", f"m{i}") for i in range(200)]
        queued = [i for i in ids if i is not None]
        stats = client.stats
        # The queue holds 50; one batch of 10 may be out of it, retrying; the rest was dropped and counted.
        assert stats.enqueued == len(queued)
        assert stats.dropped == 200 - len(queued)
        assert 50 <= len(queued) <= 60
        wait_until(lambda: client.stats.retries >= 2, "retries against the dead service")
        assert client.stats.sent == 0
        assert client.pending == len(queued)
    finally:
        service.start()
    assert client.flush(timeout=300)
    stats = client.stats
    assert (stats.sent, stats.stored, stats.failed) == (len(queued), len(queued), 0)
    # Every message it queued arrived, once; none that it dropped.
    assert sorted(service.messages(bot["id"], {"dead": len(queued)})["dead"]) == sorted(queued)
    client.shutdown()


def test_shutdown_gives_up_on_a_dead_url_and_reports_it(dead_url):
    errors: List[CaptureError] = []
    client = Client("svc_live_nothing", dead_url, batch_size=5, max_retries=None, on_error=errors.append)
    for i in range(5):
        client.message("never", "user", f"m{i}")
    wait_until(lambda: client.stats.retries >= 1, "a retry")
    client.shutdown(timeout=0.5)
    stats = client.stats
    assert (stats.sent, stats.failed) == (0, 5)
    assert [(e.conversation_id, len(e.message_ids), e.retryable) for e in errors] == [("never", 5, True)]
    # After shutdown nothing more is taken.
    assert client.message("never", "user", "late") is None
    assert client.stats.dropped == 1


def test_other_4xx_are_reported_and_never_retried(service, chatbot):
    errors: List[CaptureError] = []
    wrong = Client("svc_live_" + "x" * 40, service.url, on_error=errors.append)
    wrong.message("401", "user", "hello")
    assert wrong.flush(timeout=60)
    # trial2: `requests` counted every request sent (1 here, 2 below), the TypeScript SDK those answered 200.
    assert (wrong.stats.requests, wrong.stats.retries, wrong.stats.failed) == (0, 0, 1)
    assert [(e.status, e.code) for e in errors] == [(401, "unauthorized")]
    wrong.shutdown()

    errors.clear()
    bot = chatbot()
    client = Client(bot["api_key"], service.url, on_error=errors.append)
    good = client.message("fine", "user", "hello")
    client.capture("bad", [{"role": "robot", "content": "beep"}])
    assert client.flush(timeout=60)
    stats = client.stats
    assert (stats.requests, stats.retries, stats.sent, stats.failed) == (1, 0, 1, 1)
    assert [(e.status, e.code, e.conversation_id) for e in errors] == [(400, "invalid_request", "bad")]
    # trial2: the message (all the default logging prints) said only "The request body is invalid.".
    assert "/messages/0/role: " in str(errors[0])
    assert service.messages(bot["id"], {"fine": 1})["fine"] == [good]
    client.shutdown()


def test_capture_warnings_reach_logging_warnings_and_the_callback(service, chatbot, caplog):
    bot = chatbot({"customFields": {"plan": "string"}})
    seen: List[Any] = []
    client = Client(bot["api_key"], service.url, on_warning=lambda cid, w: seen.append((cid, w)))
    client.message("warned", "user", "hello", custom={"plan": "pro", "seats": 3})
    with caplog.at_level(logging.WARNING, logger="conversation_analytics"):
        with pytest.warns(CaptureWarning, match="custom field seats"):
            assert client.flush(timeout=60)
    assert client.stats.warnings == 1
    assert [cid for cid, _ in seen] == ["warned"] and "seats" in seen[0][1]
    assert any("custom field seats" in r.getMessage() for r in caplog.records)
    client.shutdown()


def test_large_bodies_go_gzipped_and_arrive_whole(service, chatbot):
    bot = chatbot()
    client = Client(bot["api_key"], service.url, gzip_min_bytes=1024)
    text = "The quick brown fox jumps over the lazy dog. " * 600
    message_id = client.message("big", "user", text)
    assert client.flush(timeout=60)
    assert client.stats.stored == 1
    assert service.messages(bot["id"], {"big": 1})["big"] == [message_id]
    conversation = service.conversations(bot["id"])["big"]
    detail = service.call("GET", f"/api/v1/conversations/{conversation['id']}")["conversation"]
    assert [(m["id"], m["content"]) for m in detail["messages"]] == [(message_id, text)]
    client.shutdown()


def test_capture_is_safe_from_many_threads(service, chatbot):
    bot = chatbot()
    client = Client(bot["api_key"], service.url, batch_size=200, flush_interval=3600)
    ids: List[str] = []
    lock = threading.Lock()

    def produce(t: int) -> None:
        mine = [client.message(f"threads-{t}", "user", f"m{i}") for i in range(50)]
        with lock:
            ids.extend(m for m in mine if m is not None)

    threads = [threading.Thread(target=produce, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert client.flush(timeout=120)
    assert (client.stats.sent, client.stats.stored) == (200, 200)
    read = service.messages(bot["id"], {f"threads-{t}": 50 for t in range(4)})
    assert sorted(m for ms in read.values() for m in ms) == sorted(ids)
    client.shutdown()
