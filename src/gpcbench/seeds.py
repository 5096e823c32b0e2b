"""Every random number comes from the config's seed, via a stable derivation per job."""

import hashlib


def derive_seed(base_seed: int, *parts) -> int:
    """A 31-bit seed determined by ``base_seed`` and the job's identifiers (stable across runs,
    machines and Python versions, unlike ``hash()``)."""
    key = "/".join([str(int(base_seed)), *map(str, parts)]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") & 0x7FFFFFFF
