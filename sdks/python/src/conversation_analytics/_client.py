"""The synchronous client: capture() queues and returns at once; a background thread sends."""

from __future__ import annotations

import atexit
import os
import threading
import time
import weakref
from dataclasses import replace
from datetime import datetime
from typing import Any, Callable, List, Mapping, Optional, Sequence, Union

from ._core import (
    CaptureError,
    Fields,
    Options,
    Outcome,
    Queue,
    Reporter,
    Request,
    Stats,
    attempt,
    context_of,
    decide,
    finish,
    logger,
    message_of,
    plan_requests,
)

DEFAULT_BASE_URL = "http://127.0.0.1:3000"


def options_from(api_key: Optional[str], base_url: Optional[str], settings: Mapping[str, Any]) -> Options:
    key = api_key or os.environ.get("CONVERSATION_ANALYTICS_API_KEY", "")
    url = base_url or os.environ.get("CONVERSATION_ANALYTICS_URL", DEFAULT_BASE_URL)
    return Options(api_key=key, base_url=url, **settings)


class _Base:
    """What both clients have: the queue, the counters, capture() and message()."""

    _options: Options
    _queue: Queue
    _stats: Stats

    def _start(self) -> None:  # pragma: no cover - each client starts its own sender
        raise NotImplementedError

    def capture(
        self,
        conversation_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        user: Optional[Fields] = None,
        organization: Optional[Fields] = None,
        session: Optional[Fields] = None,
        custom: Optional[Fields] = None,
    ) -> List[str]:
        """Queues messages of one conversation (`{"role", "content", "id"?, "sentAt"?}` each) and returns
        at once with the ids of those queued. A message without an id gets a UUID, and one without sentAt the
        time of this call, so that a retry sends exactly the same message (stored once). Messages that do not
        fit in the queue are dropped and counted (stats.dropped)."""
        ids = self._queue.put(conversation_id, list(messages), context_of(user, organization, session, custom))
        if ids:
            self._start()
        return ids

    def message(
        self,
        conversation_id: str,
        role: str,
        content: str,
        *,
        id: Optional[str] = None,
        sent_at: Union[str, datetime, None] = None,
        user: Optional[Fields] = None,
        organization: Optional[Fields] = None,
        session: Optional[Fields] = None,
        custom: Optional[Fields] = None,
    ) -> Optional[str]:
        """Queues one message; returns its id, or None when it was dropped (the queue is full)."""
        ids = self.capture(
            conversation_id,
            [message_of(role, content, id, sent_at)],
            user=user,
            organization=organization,
            session=session,
            custom=custom,
        )
        return ids[0] if ids else None

    @property
    def stats(self) -> Stats:
        """A copy of the counters (messages sent, stored, dropped, failed; requests, retries, 429s)."""
        with self._queue.lock:
            return replace(self._stats)

    @property
    def pending(self) -> int:
        """Messages queued or being sent: not yet sent, nor given up."""
        with self._queue.lock:
            return self._stats.enqueued - self._stats.sent - self._stats.failed

    def _exit(self) -> None:  # pragma: no cover - each client flushes its own way at exit
        raise NotImplementedError


class Client(_Base):
    """Sends captured messages from a background thread, in batches, with retries.

    Client(api_key, base_url, batch_size=100, flush_interval=1.0, max_queue_size=10_000, max_retries=10,
    backoff_base=0.5, backoff_max=30.0, timeout=10.0, gzip_min_bytes=1024, shutdown_timeout=10.0,
    on_error=None, on_warning=None). api_key and base_url default to $CONVERSATION_ANALYTICS_API_KEY and
    $CONVERSATION_ANALYTICS_URL. The queue is flushed at interpreter exit (atexit), for at most
    shutdown_timeout seconds.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        batch_size: int = 100,
        flush_interval: float = 1.0,
        max_queue_size: int = 10_000,
        max_retries: Optional[int] = 10,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        timeout: float = 10.0,
        gzip_min_bytes: Optional[int] = 1024,
        shutdown_timeout: float = 10.0,
        on_error: Optional[Callable[[CaptureError], None]] = None,
        on_warning: Optional[Callable[[str, str], None]] = None,
    ) -> None:
        self._options = options_from(
            api_key,
            base_url,
            dict(
                batch_size=batch_size,
                flush_interval=flush_interval,
                max_queue_size=max_queue_size,
                max_retries=max_retries,
                backoff_base=backoff_base,
                backoff_max=backoff_max,
                timeout=timeout,
                gzip_min_bytes=gzip_min_bytes,
                shutdown_timeout=shutdown_timeout,
                on_error=on_error,
                on_warning=on_warning,
            ),
        )
        self._stats = Stats()
        self._queue = Queue(self._options, self._stats)
        self._reporter = Reporter(self._options, self._stats)
        self._thread: Optional[threading.Thread] = None
        self._deadline: Optional[float] = None
        self._stopped = False
        _register_exit(self)

    def _start(self) -> None:
        with self._queue.lock:
            if self._thread is not None or self._queue.closed:
                return
            self._thread = threading.Thread(target=self._run, name="conversation-analytics", daemon=True)
            self._thread.start()

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends what is queued now and waits until it is sent or given up; False if `timeout` (seconds)
        ran out first."""
        queue = self._queue
        with queue.lock:
            target = queue.seq
            if queue.done_seq >= target:
                return True
            queue.flush_wanted = max(queue.flush_wanted, target)
            queue.lock.notify_all()
        self._start()
        deadline = None if timeout is None else time.monotonic() + timeout
        with queue.lock:
            while queue.done_seq < target:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                queue.lock.wait(left)
        return True

    def shutdown(self, timeout: Optional[float] = None) -> bool:
        """Stops taking messages, sends what is queued (retrying for at most `timeout` seconds, default
        shutdown_timeout; what is still unsent then is given up and counted as failed) and stops the thread.
        True when everything was sent or given up by the service's answer in time."""
        timeout = self._options.shutdown_timeout if timeout is None else timeout
        queue = self._queue
        with queue.lock:
            if self._stopped:
                return queue.done_seq >= queue.seq
            self._stopped = True
            queue.closed = True
            self._deadline = time.monotonic() + timeout
            thread = self._thread
            queue.lock.notify_all()
        if thread is None:
            if queue.calls:
                # Never started (or exiting): send from here.
                self._drain()
            return True
        thread.join(timeout + 1.0)
        return not thread.is_alive() and queue.done_seq >= queue.seq

    def _exit(self) -> None:
        self.shutdown()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- the sender --------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._drain()
        except Exception:  # pragma: no cover - a bug; never lose the thread silently
            logger.exception("the conversation_analytics sender stopped")

    def _drain(self) -> None:
        queue = self._queue
        while True:
            with queue.lock:
                while not queue.ready():
                    if queue.closed and not queue.calls:
                        return
                    queue.lock.wait(queue.wait_time())
                calls = queue.take()
            for request in plan_requests(calls):
                self._deliver(request)
            if calls:
                queue.done(calls[-1].seq)

    def _deliver(self, request: Request) -> None:
        while True:
            if self._past_deadline():
                finish(self._reporter, request, Outcome(status=None), "the client shut down before it was sent")
                return
            request.attempts += 1
            outcome = attempt(self._options, request)
            self._reporter.answered(outcome)
            delay = decide(self._options, request, outcome)
            if delay is None:
                finish(self._reporter, request, outcome)
                return
            self._reporter.retrying(request, outcome, delay)
            if not self._sleep(delay):
                finish(self._reporter, request, outcome, f"{outcome.error}; the client shut down before a retry")
                return

    def _past_deadline(self) -> bool:
        with self._queue.lock:
            return self._deadline is not None and time.monotonic() >= self._deadline

    def _sleep(self, delay: float) -> bool:
        """Waits `delay` seconds, or less when shutdown's deadline comes first (then False)."""
        end = time.monotonic() + delay
        queue = self._queue
        with queue.lock:
            while True:
                now = time.monotonic()
                if self._deadline is not None and now >= self._deadline:
                    return False
                if now >= end:
                    return True
                until = end if self._deadline is None else min(end, self._deadline)
                queue.lock.wait(until - now)


_clients: weakref.WeakSet[_Base] = weakref.WeakSet()
_exit_lock = threading.Lock()
_exit_registered = False


def _register_exit(client: _Base) -> None:
    global _exit_registered
    with _exit_lock:
        _clients.add(client)
        if not _exit_registered:
            atexit.register(_flush_at_exit)
            _exit_registered = True


def _flush_at_exit() -> None:
    for client in list(_clients):
        try:
            client._exit()
        except Exception:  # pragma: no cover
            logger.exception("flushing at exit failed")
