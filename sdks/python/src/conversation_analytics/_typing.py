"""`NotRequired` for the generated TypedDicts (api_types.py) without typing_extensions at run time.

Python 3.11 has it in `typing`. Before that, type checkers take typing_extensions' (always at hand for them),
and at run time, where api_types.py's class annotations stay strings (PEP 563), `NotRequired[X]` is `X`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if sys.version_info >= (3, 11):
    from typing import NotRequired
elif TYPE_CHECKING:
    from typing_extensions import NotRequired
else:

    class NotRequired:
        def __class_getitem__(cls, item: object) -> object:
            return item


__all__ = ["NotRequired"]
