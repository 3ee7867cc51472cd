"""keccak-256 against published vectors and the TypeScript stack's @noble/hashes digests."""

from __future__ import annotations

import hashlib
import unittest

from labelgate._keccak import keccak256

# Published Keccak-256 vectors (the Ethereum hash; e.g. the Keccak team's and Ethereum's test suites)
PUBLISHED = {
    b"": "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
    b"abc": "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45",
    b"The quick brown fox jumps over the lazy dog": "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15",
    b"The quick brown fox jumps over the lazy dog.": "578951e24efd62a3d63a86f7cd19aaa53c898fe287d2552133220370240b572d",
    b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq": "45d3b367a6904e6e8d502ee04999a7c27647f91fa845d456525fd352ae3d7371",
    # the Anchored event's topic 0, as every Ethereum tool computes it
    b"Anchored(bytes32,uint64,uint64)": "665a214d59c3b0d9e6c4975fba280be5e19b9b0862cff85b71d42433191945cf",
    b"Transfer(address,address,uint256)": "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
}

# keccak_256 of @noble/hashes (what packages/chain hashes with) of bytes (i * 31 + 7) & 255, i < n:
# lengths around the 136-byte rate, where padding bugs live
NOBLE = {
    1: "ee2a4bc7db81da2b7164e56b3649b1e2a09c58c455b15dabddd9146c7582cebc",
    55: "97c45d97c802da7b3a6584d91c34ee4ea5cd8d8b052856234405bf5b76c0b043",
    56: "cb7edb32d44760cf91e5a2ef1a3c300ceff8a95b33eb1157de878a6764859cc2",
    135: "adee8145bb33dc0320ad44945eeeb391e4668f0f7c69ccbbf6550a7cba245e52",
    136: "eaccfc5aa7bf6bf1941809ef7cc9ee6a2fa306a7dd1de3f2e8504849b0a5e3c4",
    137: "ea0e0b9657469f0b4f53604f1068ab4bd4a5e7b0a458d24a78f1fe2ec7bd4db0",
    271: "407871b419dca15e033dd9777154af2116326a7849eacadbc46b1618055ee0a2",
    272: "c62d6a60780d4e03408834062e58004a549cff1c7487c0b9a130810621b0fcae",
    273: "b47ca693c8d675afa3b0b644da6dc96613f07c6f8971f9a0077ed6b7c994561d",
    1000: "c77d9bffcae9f0984e6dff7eea63cc14cad5f367f791e27b08a1953f192f30a5",
}


class KeccakTest(unittest.TestCase):
    def test_published_vectors(self) -> None:
        for data, digest in PUBLISHED.items():
            with self.subTest(data=data[:20]):
                self.assertEqual(keccak256(data).hex(), digest)

    def test_block_boundaries_match_noble(self) -> None:
        for n, digest in NOBLE.items():
            with self.subTest(n=n):
                self.assertEqual(keccak256(bytes((i * 31 + 7) & 255 for i in range(n))).hex(), digest)

    def test_parts_hash_as_their_concatenation(self) -> None:
        self.assertEqual(keccak256(b"\x00", b"ab", b"c"), keccak256(b"\x00abc"))

    def test_is_not_sha3_256(self) -> None:
        # FIPS 202 SHA3-256 pads with 0x06, Keccak with 0x01: never the same digest
        self.assertNotEqual(keccak256(b"").hex(), hashlib.sha3_256(b"").hexdigest())
        self.assertEqual(hashlib.sha3_256(b"").hexdigest(), "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a")


if __name__ == "__main__":
    unittest.main()
