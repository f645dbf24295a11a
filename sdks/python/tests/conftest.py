"""Fixtures for the tests against the real service, which `npm test` starts (test/sdk-python.test.ts):

- CAS_TEST_URL: the service; each test signs in as one account (made once) and makes its own chatbots;
- CAS_TEST_CONTROL_URL: POST /crash kills the service (SIGKILL), POST /start starts it again, same data;
- CAS_TEST_RATE_LIMIT: the service's CAPTURE_RATE_LIMIT_PER_MINUTE.

Without CAS_TEST_URL the tests fail (they are never skipped): run them through `npm test`, or start the
service yourself and set the variables.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import socket
import time
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Optional

import pytest


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through `npm test` (test/sdk-python.test.ts)")
    return value


class Service:
    """The service's HTTP API as a signed-in account, and its restart controls."""

    def __init__(self) -> None:
        self.url = _env("CAS_TEST_URL").rstrip("/")
        self.control_url = _env("CAS_TEST_CONTROL_URL").rstrip("/")
        self.rate_limit = int(_env("CAS_TEST_RATE_LIMIT"))
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        email = f"sdk-python-{uuid.uuid4().hex[:8]}@example.com"
        self.call(
            "POST",
            "/api/v1/auth/signup",
            {"email": email, "password": "correct horse battery staple", "organizationName": "SDK tests"},
        )

    def call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("content-type", "application/json")
        with self._opener.open(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def chatbot(self, settings: Optional[Dict[str, Any]] = None) -> Dict[str, str]:
        """A new chatbot: {"id", "api_key"}."""
        body: Dict[str, Any] = {"name": f"bot {uuid.uuid4().hex[:6]}"}
        if settings is not None:
            body["settings"] = settings
        created = self.call("POST", "/api/v1/chatbots", body)
        return {"id": created["chatbot"]["id"], "api_key": created["apiKey"]}

    def conversations(self, chatbot_id: str) -> Dict[str, Dict[str, Any]]:
        """The chatbot's conversations by the caller's conversation id."""
        found: Dict[str, Dict[str, Any]] = {}
        cursor: Optional[str] = None
        while True:
            query = f"/api/v1/conversations?chatbotId={chatbot_id}&limit=100"
            page = self.call("GET", query + (f"&cursor={cursor}" if cursor else ""))
            for conversation in page["conversations"]:
                found[conversation["conversationId"]] = conversation
            cursor = page.get("nextCursor")
            if not cursor:
                return found

    def messages(self, chatbot_id: str, expected: Dict[str, int], timeout: float = 180.0) -> Dict[str, List[str]]:
        """Waits until the chatbot has (at least) the expected number of messages in each conversation, then
        returns each conversation's message ids as the API reads them."""
        deadline = time.monotonic() + timeout
        while True:
            listed = self.conversations(chatbot_id)
            counts = {cid: listed[cid]["messageCount"] for cid in expected if cid in listed}
            if all(counts.get(cid, 0) >= n for cid, n in expected.items()):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"the service has {counts}, expected {expected}; it has {sorted(listed)}")
            time.sleep(0.5)
        result: Dict[str, List[str]] = {}
        for cid, conversation in listed.items():
            detail = self.call("GET", f"/api/v1/conversations/{conversation['id']}")
            result[cid] = [m["id"] for m in detail["conversation"]["messages"]]
        return result

    def crash(self) -> None:
        self._control("/crash")

    def start(self) -> None:
        self._control("/start")

    def _control(self, path: str) -> None:
        request = urllib.request.Request(self.control_url + path, data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=600) as response:
            assert response.status == 204


@pytest.fixture(scope="session")
def service() -> Service:
    return Service()


@pytest.fixture
def chatbot(service: Service) -> Callable[..., Dict[str, str]]:
    return service.chatbot


@pytest.fixture
def dead_url() -> str:
    """A URL nothing answers at: a port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
