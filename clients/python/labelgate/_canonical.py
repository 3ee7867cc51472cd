"""Canonical JSON exactly as labelgate's server writes it (packages/chain/src/canonical-json.ts).

Object keys sorted by UTF-16 code units, no whitespace, strings and numbers as JavaScript's
``JSON.stringify`` prints them. For the values labelgate hashes this is RFC 8785 (JCS). Python's
:func:`json.dumps` differs in three places that matter for hashes, all handled here:

- numbers: JavaScript prints the shortest round-trip digits in ECMAScript's ``Number::toString`` layout
  (``1e-7``, ``1e+21``, ``100``), Python's ``repr`` uses another (``1e-07``, ``1e+21``, ``100.0``);
- key order: UTF-16 code units, not code points (they differ above U+FFFF);
- lone surrogates: escaped as ``\\udXXX`` (well-formed ``JSON.stringify``), never encoded raw.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, cast

__all__ = ["canonical_json", "js_number"]

_MAX_SAFE = 2**53
_ESCAPE = re.compile(r'[\x00-\x1f"\\\ud800-\udfff]')
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group(0)
    return _SHORT.get(c) or f"\\u{ord(c):04x}"


def _js_string(s: str) -> str:
    return '"' + _ESCAPE.sub(_escape_char, s) + '"'


def js_number(value: int | float) -> str:
    """``String(value)`` / ``JSON.stringify(value)`` of JavaScript for a finite number.

    Integers beyond 2**53 are first rounded to a double, as JavaScript's ``JSON.parse`` would have.
    Raises TypeError for NaN and infinities (JSON has no spelling for them).
    """
    if isinstance(value, int) and abs(value) < _MAX_SAFE:
        return str(value)
    x = float(value)
    if not math.isfinite(x):
        raise TypeError("non-finite number in canonical JSON")
    if x == 0:
        return "0"  # -0 prints as 0
    sign = "-" if x < 0 else ""
    # repr gives the shortest digits that round-trip, the same digits ECMAScript's Number::toString picks
    d = Decimal(repr(abs(x))).normalize()
    _, digits_t, exp = d.as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digits_t))
    k = len(digits)
    n = exp + k  # value = 0.digits * 10^n
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        out = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + out


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def canonical_json(value: Any) -> str:
    """Canonical JSON text of ``value`` (None, bool, int, float, str, lists/tuples, mappings with str keys).

    Raises TypeError for anything else, for non-str keys and for non-finite numbers.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        items = cast("list[Any] | tuple[Any, ...]", value)
        return "[" + ",".join(canonical_json(v) for v in items) + "]"
    if isinstance(value, Mapping):
        obj = cast("Mapping[Any, Any]", value)
        keys: list[str] = []
        for k in obj:
            if not isinstance(k, str):
                raise TypeError(f"object key {k!r} is not a string")
            keys.append(k)
        keys.sort(key=_utf16_key)
        return "{" + ",".join(_js_string(k) + ":" + canonical_json(obj[k]) for k in keys) + "}"
    raise TypeError(f"cannot encode {type(value).__name__} in canonical JSON")
