"""api_types.py is what scripts/generate_types.py makes from the repository's OpenAPI document."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SDK = Path(__file__).resolve().parent.parent


def test_the_generated_types_are_current():
    done = subprocess.run(
        [sys.executable, str(SDK / "scripts" / "generate_types.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_types_are_importable_at_run_time():
    from conversation_analytics import CaptureMessage, CaptureRequest, CaptureResponse, ErrorResponse

    message: CaptureMessage = {"id": "m-1", "role": "user", "content": "hi"}
    request: CaptureRequest = {"conversationId": "c", "messages": [message]}
    assert request["messages"][0]["role"] == "user"
    assert {"ok", "conversationId", "messagesStored", "warnings"} <= set(CaptureResponse.__annotations__)
    assert set(ErrorResponse.__annotations__) == {"ok", "error"}
