"""Keccak-256 in pure Python: the hash of Ethereum and of labelgate's settlement Merkle trees.

This is the original Keccak submission (padding byte ``0x01``), NOT FIPS 202 SHA3-256 (padding byte
``0x06``), which is what :func:`hashlib.sha3_256` computes: the two give different digests for every input.

Source: the Keccak reference, "The Keccak reference, version 3.0" (Bertoni, Daemen, Peeters, Van Assche,
2011), Keccak-f[1600] with rate 1088 bits (136 bytes) and capacity 512 bits; round constants and rotation
offsets from https://keccak.team/keccak_specs_summary.html. Checked against the published vectors
(``keccak256(b"") = c5d2...a470``, ``keccak256(b"abc") = 4e03...6c45``) in tests/test_keccak.py.
"""

from __future__ import annotations

__all__ = ["keccak256"]

_RATE = 136  # bytes: 1600-bit state, 512-bit capacity
_MASK = (1 << 64) - 1

_ROUND_CONSTANTS = (
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
)  # fmt: skip

# rotation offsets r[x][y], lane index x + 5 * y
_ROTATIONS = (
    0, 1, 62, 28, 27,
    36, 44, 6, 55, 20,
    3, 10, 43, 25, 39,
    41, 45, 15, 21, 8,
    18, 2, 61, 56, 14,
)  # fmt: skip

# pi step: lane (x, y) moves to (y, 2x + 3y); for each destination, its source lane and rotation
_PI_RHO = tuple(
    (x + 5 * y, _ROTATIONS[x + 5 * y], y + 5 * ((2 * x + 3 * y) % 5)) for x in range(5) for y in range(5)
)


def _keccak_f(a: list[int]) -> None:
    """Keccak-f[1600] on 25 64-bit lanes (index x + 5y), in place."""
    for rc in _ROUND_CONSTANTS:
        # theta
        c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        for x in range(5):
            d = c[(x - 1) % 5] ^ (((c[(x + 1) % 5] << 1) | (c[(x + 1) % 5] >> 63)) & _MASK)
            for y in range(0, 25, 5):
                a[x + y] ^= d
        # rho and pi
        b = [0] * 25
        for src, rot, dst in _PI_RHO:
            v = a[src]
            b[dst] = ((v << rot) | (v >> (64 - rot))) & _MASK if rot else v
        # chi
        for y in range(0, 25, 5):
            b0, b1, b2, b3, b4 = b[y], b[y + 1], b[y + 2], b[y + 3], b[y + 4]
            a[y] = b0 ^ (~b1 & b2)
            a[y + 1] = b1 ^ (~b2 & b3)
            a[y + 2] = b2 ^ (~b3 & b4)
            a[y + 3] = b3 ^ (~b4 & b0)
            a[y + 4] = b4 ^ (~b0 & b1)
        # iota
        a[0] ^= rc


def keccak256(*parts: bytes) -> bytes:
    """Keccak-256 (32 bytes) of the concatenation of ``parts`` (bytes-like objects).

    ``keccak256(b"\\x00", leaf)`` hashes ``0x00 || leaf`` without building the joined buffer first.
    Raises TypeError for an argument that is not bytes-like.
    """
    data = b"".join(bytes(p) for p in parts)
    # pad10*1 with Keccak's domain byte 0x01 (SHA-3 would use 0x06)
    padded = bytearray(data)
    pad = _RATE - len(padded) % _RATE
    padded += b"\x00" * pad
    padded[len(data)] ^= 0x01
    padded[-1] ^= 0x80
    state = [0] * 25
    for off in range(0, len(padded), _RATE):
        block = padded[off : off + _RATE]
        for i in range(_RATE // 8):
            state[i] ^= int.from_bytes(block[8 * i : 8 * i + 8], "little")
        _keccak_f(state)
    return b"".join(state[i].to_bytes(8, "little") for i in range(4))
