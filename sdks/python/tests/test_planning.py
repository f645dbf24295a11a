"""How queued calls become capture requests (no service needed)."""

from __future__ import annotations

import json

from conversation_analytics._core import MAX_MESSAGES_PER_REQUEST, Call, parse_retry_after, plan_requests


def call(seq: int, conversation: str, n: int, context=None) -> Call:
    context = context or {}
    messages = [{"id": f"{conversation}-{seq}-{i}", "role": "user", "content": "x"} for i in range(n)]
    return Call(seq, conversation, messages, context, json.dumps(context, sort_keys=True))


def test_consecutive_calls_of_a_conversation_share_a_request_until_their_fields_change():
    calls = [
        call(1, "a", 2),
        call(2, "b", 1),
        call(3, "a", 3),
        call(4, "a", 1, {"user": {"id": "u"}}),
        call(5, "a", 1, {"user": {"id": "u"}}),
    ]
    requests = plan_requests(calls)
    bodies = [json.loads(r.body) for r in requests]
    assert [(b["conversationId"], len(b["messages"]), b.get("user")) for b in bodies] == [
        ("b", 1, None),
        ("a", 5, None),
        ("a", 2, {"id": "u"}),
    ]
    assert [r.last_seq for r in requests] == [2, 3, 5]


def test_a_request_holds_at_most_the_api_s_limit():
    calls = [call(i, "a", 60) for i in range(1, 4)]
    requests = plan_requests(calls)
    assert [len(r.message_ids) for r in requests] == [MAX_MESSAGES_PER_REQUEST, 80]
    assert sorted(m for r in requests for m in r.message_ids) == sorted(m["id"] for c in calls for m in c.messages)


def test_retry_after_takes_seconds_and_http_dates():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
