"""Python SDK for Conversation Analytics: capture your chatbot's conversations from a background thread
(Client) or an asyncio task (AsyncClient), batched, retried, and flushed at exit."""

from ._async import AsyncClient
from ._client import Client
from ._core import CaptureError, CaptureWarning, Stats
from ._version import __version__
from .api_types import CaptureMessage, CaptureRequest, CaptureResponse, ErrorResponse

__all__ = [
    "AsyncClient",
    "CaptureError",
    "CaptureMessage",
    "CaptureRequest",
    "CaptureResponse",
    "CaptureWarning",
    "Client",
    "ErrorResponse",
    "Stats",
    "__version__",
]
