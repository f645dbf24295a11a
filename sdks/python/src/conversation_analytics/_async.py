"""The asyncio client: capture() queues and returns at once; a task sends, each request's blocking urllib
call running in the loop's default executor."""

from __future__ import annotations

import asyncio
import time
from typing import Callable, List, Optional

from ._client import Client, _Base, _register_exit, options_from
from ._core import (
    Call,
    CaptureError,
    Outcome,
    Queue,
    Reporter,
    Request,
    Stats,
    attempt,
    decide,
    finish,
    logger,
    plan_requests,
)


class AsyncClient(_Base):
    """The asyncio twin of Client, with the same options and behaviour; flush() and shutdown() are
    coroutines, and `async with AsyncClient(...) as client:` shuts down on the way out.

    The sending task starts with the first capture() made inside a running loop. Whatever is still queued
    when the interpreter exits (the loop gone, e.g. after asyncio.run returned without a shutdown()) is sent
    from the atexit handler, synchronously, for at most shutdown_timeout seconds.
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
        self._queue.on_put = self._wake
        self._reporter = Reporter(self._options, self._stats)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._task: Optional[asyncio.Task[None]] = None
        self._wakeup: Optional[asyncio.Event] = None
        self._progress: Optional[asyncio.Event] = None
        self._deadline: Optional[float] = None
        self._stopped = False
        _register_exit(self)

    def _start(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not in a loop: sent by the next flush() or shutdown() in one, or at exit
        if self._task is not None and not self._task.done():
            return
        if self._queue.closed:
            return
        self._loop = loop
        self._wakeup = asyncio.Event()
        self._progress = asyncio.Event()
        self._task = loop.create_task(self._run(), name="conversation-analytics")

    def _wake(self) -> None:
        loop, event = self._loop, self._wakeup
        if loop is None or event is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # the loop closed meanwhile
            pass

    async def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends what is queued now and waits until it is sent or given up; False if `timeout` ran out."""
        queue = self._queue
        with queue.lock:
            target = queue.seq
            if queue.done_seq >= target:
                return True
            queue.flush_wanted = max(queue.flush_wanted, target)
        self._start()
        self._wake()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with queue.lock:
                if queue.done_seq >= target:
                    return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            progress = self._progress
            assert progress is not None
            try:
                await asyncio.wait_for(progress.wait(), timeout=left)
            except asyncio.TimeoutError:
                return False
            progress.clear()

    async def shutdown(self, timeout: Optional[float] = None) -> bool:
        """Stops taking messages, sends what is queued (for at most `timeout` seconds, default
        shutdown_timeout; what is left is given up and counted as failed) and ends the task."""
        timeout = self._options.shutdown_timeout if timeout is None else timeout
        queue = self._queue
        with queue.lock:
            if self._stopped:
                return queue.done_seq >= queue.seq
            pending = bool(queue.calls)
        self._start()
        with queue.lock:
            self._stopped = True
            queue.closed = True
            self._deadline = time.monotonic() + timeout
        self._wake()
        task = self._task
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout + 1.0)
            except asyncio.TimeoutError:
                task.cancel()
                return False
        elif pending:
            return False
        with queue.lock:
            return queue.done_seq >= queue.seq

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    # -- the sender --------------------------------------------------------------------------------------

    async def _run(self) -> None:
        queue = self._queue
        wakeup, progress = self._wakeup, self._progress
        assert wakeup is not None and progress is not None
        while True:
            with queue.lock:
                ready = queue.ready()
                if not ready and queue.closed and not queue.calls:
                    return
                calls: List[Call] = queue.take() if ready else []
                wait = None if ready else queue.wait_time()
            if not calls:
                wakeup.clear()
                try:
                    await asyncio.wait_for(wakeup.wait(), wait)
                except asyncio.TimeoutError:
                    pass
                continue
            try:
                for request in plan_requests(calls):
                    await self._deliver(request)
            except asyncio.CancelledError:
                # The loop is going away (asyncio.run ending without shutdown()): the batch goes back to
                # the queue, for the flush at exit. Ids make resending what the service already has harmless.
                queue.put_back(calls)
                raise
            queue.done(calls[-1].seq)
            progress.set()

    async def _deliver(self, request: Request) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if self._past_deadline():
                finish(self._reporter, request, Outcome(status=None), "the client shut down before it was sent")
                return
            request.attempts += 1
            outcome = await loop.run_in_executor(None, attempt, self._options, request)
            self._reporter.answered(outcome)
            delay = decide(self._options, request, outcome)
            if delay is None:
                finish(self._reporter, request, outcome)
                return
            self._reporter.retrying(request, outcome, delay)
            if not await self._sleep(delay):
                finish(self._reporter, request, outcome, f"{outcome.error}; the client shut down before a retry")
                return

    def _past_deadline(self) -> bool:
        with self._queue.lock:
            return self._deadline is not None and time.monotonic() >= self._deadline

    async def _sleep(self, delay: float) -> bool:
        end = time.monotonic() + delay
        wakeup = self._wakeup
        assert wakeup is not None
        while True:
            now = time.monotonic()
            with self._queue.lock:
                deadline = self._deadline
            if deadline is not None and now >= deadline:
                return False
            if now >= end:
                return True
            until = end if deadline is None else min(end, deadline)
            wakeup.clear()
            try:
                await asyncio.wait_for(wakeup.wait(), until - now)
            except asyncio.TimeoutError:
                pass

    def _exit(self) -> None:
        """At interpreter exit: what is still queued goes synchronously, as Client.shutdown() sends it."""
        with self._queue.lock:
            if not self._queue.calls:
                return
        logger.info("sending %d queued message(s) at exit", self._queue.messages)
        sender = Client.__new__(Client)
        sender._options = self._options
        sender._stats = self._stats
        sender._queue = self._queue
        sender._reporter = self._reporter
        sender._thread = None
        sender._deadline = None
        sender._stopped = False
        with self._queue.lock:
            self._queue.closed = False
        sender.shutdown()
