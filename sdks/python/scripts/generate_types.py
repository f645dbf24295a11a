"""Generates src/conversation_analytics/api_types.py from the service's OpenAPI document.

The capture operation's request body, its 200 response and its error body become TypedDicts, made by
datamodel-code-generator (PyPI) from those schemas alone. Run from anywhere:

    python sdks/python/scripts/generate_types.py            # writes the file
    python sdks/python/scripts/generate_types.py --check    # exit 1 when the checked-in file is stale

The document is the repository's openapi/openapi.json (`npm run openapi:export` writes it), or --openapi.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SDK = Path(__file__).resolve().parent.parent
REPO = SDK.parent.parent
DEFAULT_DOCUMENT = REPO / "openapi" / "openapi.json"
OUTPUT = SDK / "src" / "conversation_analytics" / "api_types.py"
CAPTURE = ("/api/v1/capture", "post")

HEADER = '''"""Types of POST /api/v1/capture, generated from the OpenAPI document: do not edit.

Regenerate with `python sdks/python/scripts/generate_types.py` (tests/test_api_types.py fails while this
file differs from what the document makes).
"""

'''


def _resolve(node: Any, document: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """The schema with every local $ref replaced by what it points at."""
    if isinstance(node, list):
        return [_resolve(item, document, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if ref in seen:
            raise ValueError(f"recursive schema at {ref}: not supported")
        target: Any = document
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _resolve({**copy.deepcopy(target), **rest}, document, (*seen, ref))
    return {key: _resolve(value, document, seen) for key, value in node.items()}


def _json_schema(response_or_body: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(response_or_body["content"]["application/json"]["schema"])


def _strip(schema: Any) -> Any:
    """Drops what TypedDicts cannot say (patterns, bounds, examples) so the output only follows the shapes."""
    if isinstance(schema, list):
        return [_strip(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    dropped = {"pattern", "examples", "example", "minimum", "maximum", "format", "propertyNames"}
    return {key: _strip(value) for key, value in schema.items() if key not in dropped}


def capture_schemas(document: dict[str, Any]) -> dict[str, Any]:
    """The components the generator is given: CaptureRequest, CaptureMessage, CaptureResponse, ErrorResponse."""
    path, method = CAPTURE
    operation = _resolve(document["paths"][path][method], document)
    request = _strip(_json_schema(operation["requestBody"]))
    message = request["properties"]["messages"]["items"]
    request["properties"]["messages"]["items"] = {"$ref": "#/components/schemas/CaptureMessage"}
    response = _strip(_json_schema(operation["responses"]["200"]))
    error_codes = sorted(code for code in operation["responses"] if not code.startswith("2"))
    error = _strip(_json_schema(operation["responses"][error_codes[0]]))
    return {"CaptureRequest": request, "CaptureMessage": message, "CaptureResponse": response, "ErrorResponse": error}


def generate(document_path: Path) -> str:
    document = json.loads(document_path.read_text(encoding="utf-8"))
    subset = {
        "openapi": "3.1.0",
        "info": {"title": "capture", "version": str(document.get("info", {}).get("version", "0"))},
        "paths": {},
        "components": {"schemas": capture_schemas(document)},
    }
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "capture.json"
        target = Path(scratch) / "api_types.py"
        source.write_text(json.dumps(subset, indent=2, sort_keys=True), encoding="utf-8")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "datamodel_code_generator",
                "--input",
                str(source),
                "--input-file-type",
                "openapi",
                "--output",
                str(target),
                "--output-model-type",
                "typing.TypedDict",
                "--target-python-version",
                "3.10",
                "--use-schema-description",
                "--use-field-description",
                "--disable-timestamp",
                "--enum-field-as-literal",
                "all",
                "--use-standard-collections",
                "--use-double-quotes",
                "--no-use-closed-typed-dict",
                "--formatters",
                "black",
                "isort",
                # typing_extensions is no dependency of the SDK: NotRequired comes from the SDK's own shim.
                "--import-overrides",
                json.dumps({"NotRequired": "conversation_analytics._typing", "TypedDict": "typing"}),
            ],
            check=True,
            # The generator's notices about its own future defaults are not ours to act on here.
            env={**os.environ, "PYTHONWARNINGS": "ignore::FutureWarning"},
        )
        generated = target.read_text(encoding="utf-8")
    lines = [line for line in generated.splitlines() if not line.startswith("#   filename:")]
    return HEADER + "\n".join(lines).lstrip("\n").rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--openapi", type=Path, default=DEFAULT_DOCUMENT, help="the OpenAPI document (JSON)")
    parser.add_argument("--check", action="store_true", help="fail when the checked-in file is stale")
    args = parser.parse_args()
    text = generate(args.openapi)
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if args.check:
        if text != current:
            print(f"{OUTPUT.relative_to(REPO)} is stale: run python sdks/python/scripts/generate_types.py")
            return 1
        print(f"{OUTPUT.relative_to(REPO)}: current")
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"{OUTPUT.relative_to(REPO)}: {'already current' if text == current else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
