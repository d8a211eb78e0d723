"""What the standalone HTML pages inline, and how it is made safe to inline.

Every page evalkit writes (the run's report.html, the exported ``evalkit report``) is one offline file: its
data, scripts and styles sit inside it. Three pieces make that safe, shared by every page:

* :func:`script_safe_json`: data as JSON that can sit inside ``<script type="application/json">`` verbatim
  (no value can close the element or open a comment); :func:`script_safe_bytes`, the same as UTF-8 bytes,
  written by orjson (several times faster, for the pages' item data).
* :func:`csp_hash`: the ``'sha256-...'`` source of an inline script or style for the page's
  Content-Security-Policy, so only the page's own code runs.
* :func:`asset`: the pages' static CSS and JavaScript, kept as plain files under ``evalkit/reporting/assets/``
  (package data) rather than as strings in Python, so editors and linters see them for what they are.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from importlib.resources import files
from typing import Any

try:  # a faster encoder for the pages' data (the text means the same without it)
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the page is still written without it
    _orjson = None

_SCRIPT_ESCAPES = (
    ("&", "\\u0026"),
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def script_safe_json(value: Any) -> str:
    """``value`` as compact JSON that can sit inside a ``<script>`` element verbatim.

    ``<``, ``>`` and ``&`` (which could close the element or start ``<!--``) and U+2028 / U+2029 (line
    terminators in older JavaScript) are written as ``\\uXXXX`` escapes; they only ever occur inside strings,
    where the escape means the same character, so ``json.loads`` gives back exactly the original value. NaN and
    infinities are refused (they are not JSON); callers turn them into ``null`` first.
    """
    text = json.dumps(
        value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_numpy_scalar
    )
    for raw, escaped in _SCRIPT_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def _numpy_scalar(value: Any) -> Any:
    """A numpy scalar as its Python number (orjson writes them too); anything else is not JSON."""
    if hasattr(value, "item") and hasattr(value, "dtype"):
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def csp_hash(source: str | bytes) -> str:
    """The Content-Security-Policy source (``'sha256-<base64>'``) that allows exactly this inline code (text,
    or its UTF-8 bytes)."""
    digest = hashlib.sha256(source if isinstance(source, bytes) else source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def asset(name: str) -> str:
    """The text of ``evalkit/reporting/assets/<name>`` (a page's CSS or JavaScript), as shipped in the package."""
    return (files("evalkit.reporting") / "assets" / name).read_text(encoding="utf-8")


def plotly_js() -> str:
    """plotly.js as bundled with the installed plotly package (the version its figure JSON is written for),
    as text: :func:`plotly_js_bytes` decoded."""
    return plotly_js_bytes().decode("utf-8")


@lru_cache(maxsize=1)
def plotly_js_bytes() -> bytes:
    """plotly.js as inlined into a page, as UTF-8 bytes, read once per process.

    It is 4.8 MB, most of a page's code: a page hands these bytes to its writer as they are
    (:func:`evalkit.reporting.page.emit_data`) instead of rendering them through the template as text and
    encoding them again, which made several 5 MB copies per page. The bytes are the file
    ``plotly.offline.get_plotlyjs()`` decodes (so the same text). A literal ``</script`` inside would end the
    element early; ``<\\/`` means the same inside JavaScript strings.
    """
    import pkgutil

    raw = pkgutil.get_data("plotly", "package_data/plotly.min.js")
    if raw is None:  # pragma: no cover - a loader without get_data: plotly's own function reads it then
        from plotly.offline import get_plotlyjs

        raw = get_plotlyjs().encode("utf-8")
    return raw.replace(b"</script", b"<\\/script") if b"</script" in raw else raw


@lru_cache(maxsize=1)
def plotly_js_hash() -> str:
    """:func:`csp_hash` of :func:`plotly_js_bytes`, computed once per process."""
    return csp_hash(plotly_js_bytes())


_BYTE_ESCAPES = tuple((raw.encode("utf-8"), escaped.encode("ascii")) for raw, escaped in _SCRIPT_ESCAPES)


def script_safe_bytes(value: Any) -> bytes:
    """:func:`script_safe_json` as UTF-8 bytes, written by orjson where it can (a page's item data is most of a
    100,000-row report.html, and orjson writes it several times faster than :mod:`json`).

    The escapes are the same (``<``, ``>``, ``&``, U+2028, U+2029 only ever occur inside strings, and UTF-8 never
    has one character's bytes inside another's, so replacing the bytes is exact). What orjson refuses (a lone
    surrogate, an integer past 64 bits, a type it does not know) goes through :func:`script_safe_json`, whose lone
    surrogates become ``\\udcXX`` escapes, as :func:`evalkit.reporting.page.write_page` writes them. Without
    orjson installed, that is the only path. As for :func:`script_safe_json`, callers turn NaN and infinities
    into ``null`` first (orjson would write ``null`` itself, :mod:`json` refuses them).
    """
    if _orjson is not None:
        try:
            raw = _orjson.dumps(value, option=_orjson.OPT_SERIALIZE_NUMPY)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            raw = None
        if raw is not None:
            for plain, escaped in _BYTE_ESCAPES:
                if plain in raw:
                    raw = raw.replace(plain, escaped)
            return raw
    return script_safe_json(value).encode("utf-8", "backslashreplace")
