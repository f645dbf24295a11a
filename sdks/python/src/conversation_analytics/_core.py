"""What both clients share: the bounded queue, batching into capture requests, one HTTP attempt, and the
retry decision. Standard library only (urllib, gzip, json, threading)."""

from __future__ import annotations

import email.utils
import gzip
import json
import logging
import random
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
import warnings
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from ._version import __version__

if TYPE_CHECKING:
    from .api_types import CaptureMessage

logger = logging.getLogger("conversation_analytics")

#: The most messages one capture request takes (the API's limit).
MAX_MESSAGES_PER_REQUEST = 100
#: The API refuses bodies over 4 MiB (413), decompressed; requests stay well under.
MAX_BODY_BYTES = 3 * 1024 * 1024
CAPTURE_PATH = "/api/v1/capture"
USER_AGENT = f"conversation-analytics-python/{__version__}"

FieldValue = Union[str, int, float, bool]
Fields = Mapping[str, FieldValue]


class CaptureWarning(UserWarning):
    """A capture succeeded but something was taken differently from how it was sent (the API's `warnings`),
    for example a custom field outside the chatbot's schema."""


class CaptureError(Exception):
    """Messages the service did not take: a 4xx other than 429 (never retried), or retries given up."""

    def __init__(
        self,
        message: str,
        *,
        conversation_id: str,
        message_ids: Sequence[str],
        status: Optional[int] = None,
        code: Optional[str] = None,
        details: Optional[List[Dict[str, Any]]] = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.conversation_id = conversation_id
        self.message_ids = list(message_ids)
        self.status = status
        self.code = code
        self.details = details or []
        self.retryable = retryable


@dataclass
class Stats:
    """Counters since the client was made. Messages, except `requests`, `retries` and `rate_limited`."""

    enqueued: int = 0
    #: Refused by capture()/message() because the queue was full (max_queue_size).
    dropped: int = 0
    #: Acknowledged by the service (a 2xx): stored now or earlier (ids already stored are not stored again).
    sent: int = 0
    #: The sum of the service's `messagesStored`: messages stored for the first time.
    stored: int = 0
    #: Given up: refused with a 4xx other than 429, or still failing after max_retries, or at shutdown.
    failed: int = 0
    #: Capture warnings received.
    warnings: int = 0
    #: Capture requests the service acknowledged (a 2xx), as the TypeScript SDK's `requests`: a request
    #: sent again counts once, a refused or abandoned one not at all (see `retries`, `failed`).
    requests: int = 0
    #: Attempts sent again after a 429, a 5xx, a 408, a network error or a timeout.
    retries: int = 0
    #: 429 answers received, each attempt answered 429 once, whatever followed (a retry, giving up, or a
    #: shutdown before the retry), as the TypeScript SDK's `rateLimited`.
    rate_limited: int = 0


@dataclass
class Options:
    api_key: str
    base_url: str = "http://127.0.0.1:3000"
    #: Send as soon as this many messages wait (at most 100 go in one request: one conversation each).
    batch_size: int = 100
    #: ...or once the oldest waiting message has waited this long (seconds).
    flush_interval: float = 1.0
    #: Messages waiting at most; more are dropped and counted (stats.dropped).
    max_queue_size: int = 10_000
    #: Retries of one request (429, 5xx, network errors) before its messages are given up; None: no limit.
    max_retries: Optional[int] = 10
    #: Exponential backoff: base * 2**attempt, capped at backoff_max, with full jitter; Retry-After wins.
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: One HTTP request's timeout (seconds).
    timeout: float = 10.0
    #: gzip request bodies above this many bytes (None: never).
    gzip_min_bytes: Optional[int] = 1024
    #: How long shutdown() (and so the flush at exit) keeps trying, at most (seconds).
    shutdown_timeout: float = 10.0
    on_error: Optional[Callable[[CaptureError], None]] = None
    on_warning: Optional[Callable[[str, str], None]] = None

    def __post_init__(self) -> None:
        if not self.api_key:
            raise ValueError("api_key is required (the chatbot's key, svc_live_…)")
        if self.batch_size < 1 or self.max_queue_size < 1:
            raise ValueError("batch_size and max_queue_size must be at least 1")
        self.base_url = self.base_url.rstrip("/")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_message_id() -> str:
    return str(uuid.uuid4())


@dataclass
class Call:
    """One capture()'s messages of one conversation (at most 100), with the fields it carries."""

    seq: int
    conversation_id: str
    messages: List[CaptureMessage]
    context: Dict[str, Any]
    context_key: str


@dataclass
class Request:
    conversation_id: str
    body: bytes
    message_ids: List[str]
    last_seq: int
    attempts: int = 0


def plan_requests(calls: Sequence[Call]) -> List[Request]:
    """Capture requests for queued calls: a conversation's consecutive calls that carry the same fields go in
    one request (at most 100 messages, MAX_BODY_BYTES), in the order they were made; conversations in the
    order of their first call."""
    by_conversation: Dict[str, List[Call]] = {}
    for call in calls:
        by_conversation.setdefault(call.conversation_id, []).append(call)
    requests: List[Request] = []
    for conversation_id, conversation_calls in by_conversation.items():
        run: List[Call] = []
        for call in conversation_calls:
            if run and run[-1].context_key != call.context_key:
                requests.extend(_split(conversation_id, run))
                run = []
            run.append(call)
        requests.extend(_split(conversation_id, run))
    requests.sort(key=lambda r: r.last_seq)
    return requests


def _split(conversation_id: str, run: Sequence[Call]) -> List[Request]:
    context = run[-1].context
    messages: List[tuple[CaptureMessage, int]] = [(m, call.seq) for call in run for m in call.messages]
    requests: List[Request] = []
    chunk: List[tuple[CaptureMessage, int]] = []
    size = 0
    base = len(_encode({"conversationId": conversation_id, "messages": [], **context}))
    for message, seq in messages:
        message_size = len(_encode(message)) + 1
        if chunk and (len(chunk) >= MAX_MESSAGES_PER_REQUEST or base + size + message_size > MAX_BODY_BYTES):
            requests.append(_request(conversation_id, chunk, context))
            chunk, size = [], 0
        chunk.append((message, seq))
        size += message_size
    if chunk:
        requests.append(_request(conversation_id, chunk, context))
    return requests


def _request(conversation_id: str, chunk: Sequence[tuple[CaptureMessage, int]], context: Dict[str, Any]) -> Request:
    body = {"conversationId": conversation_id, "messages": [m for m, _ in chunk], **context}
    return Request(
        conversation_id=conversation_id,
        body=_encode(body),
        message_ids=[m["id"] for m, _ in chunk],
        last_seq=max(seq for _, seq in chunk),
    )


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Queue:
    """The bounded, thread-safe queue of calls, counted in messages. Both clients use it."""

    def __init__(self, options: Options, stats: Stats) -> None:
        self.options = options
        self.stats = stats
        self.lock = threading.Condition()
        self.calls: deque[Call] = deque()
        self.messages = 0
        self.seq = 0
        self.done_seq = 0
        self.oldest_at: Optional[float] = None
        self.flush_wanted = 0
        self.closed = False
        self._warned_full = False
        #: Called (outside the lock) after messages were queued: the asyncio client wakes its task.
        self.on_put: Optional[Callable[[], None]] = None

    def put(
        self,
        conversation_id: str,
        messages: Sequence[Mapping[str, Any]],
        context: Dict[str, Any],
    ) -> List[str]:
        """Queues the messages (ids and sentAt filled in); returns the ids of those queued (the rest were
        dropped: the queue is full or the client shut down)."""
        if not isinstance(conversation_id, str) or not conversation_id:
            raise ValueError("conversation_id must be a non-empty string")
        prepared: List[CaptureMessage] = []
        for message in messages:
            item: Dict[str, Any] = dict(message)
            item.setdefault("id", new_message_id())
            item.setdefault("sentAt", now_iso())
            if "role" not in item or "content" not in item:
                raise ValueError("each message needs a role and content")
            prepared.append(item)  # type: ignore[arg-type]
        context_key = json.dumps(context, sort_keys=True, default=str)
        queued: List[str] = []
        with self.lock:
            if self.closed:
                self.stats.dropped += len(prepared)
                logger.warning("capture after shutdown: %d message(s) dropped", len(prepared))
                return queued
            room = self.options.max_queue_size - self.messages
            taken, dropped = prepared[: max(room, 0)], prepared[max(room, 0) :]
            if dropped:
                self.stats.dropped += len(dropped)
                if not self._warned_full:
                    self._warned_full = True
                    logger.warning(
                        "the queue is full (%d messages): dropping new messages until it drains "
                        "(stats.dropped counts them)",
                        self.options.max_queue_size,
                    )
            elif self.messages < self.options.max_queue_size // 2:
                self._warned_full = False
            for start in range(0, len(taken), MAX_MESSAGES_PER_REQUEST):
                chunk = taken[start : start + MAX_MESSAGES_PER_REQUEST]
                self.seq += 1
                self.calls.append(Call(self.seq, conversation_id, chunk, context, context_key))
                self.messages += len(chunk)
                self.stats.enqueued += len(chunk)
                queued.extend(m["id"] for m in chunk)
            if taken and self.oldest_at is None:
                self.oldest_at = time.monotonic()
            self.lock.notify_all()
        if queued and self.on_put is not None:
            self.on_put()
        return queued

    def put_back(self, calls: Sequence[Call]) -> None:
        """Returns calls taken but not finished (a cancelled task) to the front of the queue."""
        with self.lock:
            for call in reversed(calls):
                self.calls.appendleft(call)
                self.messages += len(call.messages)
            if calls and self.oldest_at is None:
                self.oldest_at = time.monotonic()
            self.lock.notify_all()

    def ready(self) -> bool:
        """Whether a batch should go now (call under the lock)."""
        if not self.calls:
            return False
        if self.messages >= self.options.batch_size or self.flush_wanted > self.done_seq or self.closed:
            return True
        return self.oldest_at is not None and time.monotonic() - self.oldest_at >= self.options.flush_interval

    def wait_time(self) -> Optional[float]:
        """How long until the oldest message's flush_interval is up (call under the lock)."""
        if self.oldest_at is None:
            return None
        return max(0.0, self.options.flush_interval - (time.monotonic() - self.oldest_at))

    def take(self) -> List[Call]:
        """Up to batch_size messages' calls, oldest first (call under the lock)."""
        taken: List[Call] = []
        count = 0
        while self.calls and (not taken or count + len(self.calls[0].messages) <= self.options.batch_size):
            call = self.calls.popleft()
            taken.append(call)
            count += len(call.messages)
        self.messages -= count
        self.oldest_at = time.monotonic() if self.calls else None
        return taken

    def done(self, last_seq: int) -> None:
        with self.lock:
            self.done_seq = max(self.done_seq, last_seq)
            self.lock.notify_all()


@dataclass
class Outcome:
    status: Optional[int]
    body: Any = None
    retry_after: Optional[float] = None
    error: Optional[str] = None
    retryable: bool = False


def attempt(options: Options, request: Request) -> Outcome:
    """One POST /api/v1/capture. Never raises: network failures are an Outcome without a status."""
    body = request.body
    headers = {
        "Authorization": f"Bearer {options.api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
    }
    if options.gzip_min_bytes is not None and len(body) >= options.gzip_min_bytes:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    http_request = urllib.request.Request(options.base_url + CAPTURE_PATH, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(http_request, timeout=options.timeout) as response:
            return Outcome(status=response.status, body=_json(response.read()))
    except urllib.error.HTTPError as error:
        status = error.code
        payload = _json(error.read())
        retryable = status == 429 or status >= 500
        return Outcome(
            status=status,
            body=payload,
            retry_after=parse_retry_after(error.headers.get("Retry-After")),
            retryable=retryable,
            error=_error_message(payload) or f"HTTP {status}",
        )
    except (urllib.error.URLError, OSError, socket.timeout, ConnectionError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Outcome(status=None, error=f"network error: {reason}", retryable=True)
    except Exception as error:  # http.client oddities (e.g. RemoteDisconnected is an OSError; others are not)
        return Outcome(status=None, error=f"network error: {error!r}", retryable=True)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8")) if raw else None
    except (ValueError, UnicodeDecodeError):
        return None


# The most invalid fields an error's message names (CaptureError.details has them all).
FIELDS_NAMED = 3


def _error_message(payload: Any) -> Optional[str]:
    """What the service said, with the fields it named ("The request body is invalid. /messages/0/sentAt:
    must be an ISO 8601 date-time with a zone..."): the default logging prints only the message, and a
    400's message alone does not say which field to fix."""
    if not (isinstance(payload, dict) and isinstance(payload.get("error"), dict)):
        return None
    message = payload["error"].get("message")
    if message is None:
        return None
    details = payload["error"].get("details")
    details = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    named = [f"{d.get('path') or 'the body'}: {d.get('message')}" for d in details[:FIELDS_NAMED]]
    if len(details) > FIELDS_NAMED:
        named.append(f"and {len(details) - FIELDS_NAMED} more")
    return f"{message} {'; '.join(named)}" if named else str(message)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delay-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def backoff(options: Options, attempt_number: int, retry_after: Optional[float]) -> float:
    """The wait before retry number `attempt_number` (0 first): full-jitter exponential backoff, and never
    less than the server's Retry-After (plus up to 10% jitter, so that clients do not all come back at once)."""
    cap = min(options.backoff_max, options.backoff_base * (2**attempt_number))
    delay = random.uniform(cap / 2, cap)
    if retry_after is not None:
        delay = max(delay, retry_after + random.uniform(0, max(0.1, retry_after * 0.1)))
    return delay


class Reporter:
    """Counts outcomes and tells the developer: warnings through `logging` and `warnings`, errors through
    on_error (or `logging` without one)."""

    def __init__(self, options: Options, stats: Stats) -> None:
        self.options = options
        self.stats = stats
        self.lock = threading.Lock()

    def answered(self, outcome: Outcome) -> None:
        """Every attempt's outcome, as it arrives: a 429 counts here once, whatever follows it."""
        if outcome.status == 429:
            with self.lock:
                self.stats.rate_limited += 1

    def sent(self, request: Request, outcome: Outcome) -> None:
        body = outcome.body if isinstance(outcome.body, dict) else {}
        stored = body.get("messagesStored")
        with self.lock:
            self.stats.requests += 1
            self.stats.sent += len(request.message_ids)
            if isinstance(stored, int):
                self.stats.stored += stored
        for warning in body.get("warnings") or []:
            with self.lock:
                self.stats.warnings += 1
            logger.warning("capture warning (conversation %s): %s", request.conversation_id, warning)
            warnings.warn(f"conversation {request.conversation_id}: {warning}", CaptureWarning, stacklevel=2)
            if self.options.on_warning is not None:
                _safely(self.options.on_warning, request.conversation_id, str(warning))

    def retrying(self, request: Request, outcome: Outcome, delay: float) -> None:
        with self.lock:
            self.stats.retries += 1
        logger.info(
            "capture of conversation %s failed (%s); retry %d in %.1f s",
            request.conversation_id,
            outcome.error,
            request.attempts,
            delay,
        )

    def failed(self, request: Request, outcome: Outcome, why: str) -> None:
        with self.lock:
            self.stats.failed += len(request.message_ids)
        payload = outcome.body if isinstance(outcome.body, dict) else {}
        error_body = payload.get("error") if isinstance(payload.get("error"), dict) else {}
        error = CaptureError(
            f"{len(request.message_ids)} message(s) of conversation {request.conversation_id} not captured: {why}",
            conversation_id=request.conversation_id,
            message_ids=request.message_ids,
            status=outcome.status,
            code=error_body.get("code"),
            details=error_body.get("details"),
            retryable=outcome.retryable,
        )
        if self.options.on_error is not None:
            _safely(self.options.on_error, error)
        else:
            logger.error("%s", error)


def _safely(callback: Callable[..., None], *args: Any) -> None:
    try:
        callback(*args)
    except Exception:
        logger.exception("a conversation_analytics callback raised")


def decide(options: Options, request: Request, outcome: Outcome) -> Optional[float]:
    """None: the request is finished (sent or given up); else the wait before retrying it."""
    if outcome.status is not None and 200 <= outcome.status < 300:
        return None
    if not outcome.retryable:
        return None
    if options.max_retries is not None and request.attempts > options.max_retries:
        return None
    return backoff(options, request.attempts - 1, outcome.retry_after)


def finish(reporter: Reporter, request: Request, outcome: Outcome, why: Optional[str] = None) -> None:
    if outcome.status is not None and 200 <= outcome.status < 300:
        reporter.sent(request, outcome)
    elif why is not None:
        reporter.failed(request, outcome, why)
    elif outcome.retryable:
        reporter.failed(request, outcome, f"{outcome.error}, after {request.attempts} attempt(s)")
    else:
        reporter.failed(request, outcome, f"{outcome.error} (HTTP {outcome.status}: not retried)")


def context_of(
    user: Optional[Fields],
    organization: Optional[Fields],
    session: Optional[Fields],
    custom: Optional[Fields],
) -> Dict[str, Any]:
    context: Dict[str, Any] = {}
    for name, value in (("user", user), ("organization", organization), ("session", session), ("custom", custom)):
        if value is not None:
            context[name] = dict(value)
    return context


def message_of(role: str, content: str, id: Optional[str], sent_at: Union[str, datetime, None]) -> Dict[str, Any]:
    message: Dict[str, Any] = {"id": id or new_message_id(), "role": role, "content": content}
    if isinstance(sent_at, datetime):
        if sent_at.tzinfo is None:
            raise ValueError("sent_at needs a time zone (e.g. datetime.now(timezone.utc))")
        message["sentAt"] = sent_at.isoformat()
    elif sent_at is not None:
        message["sentAt"] = sent_at
    return message
