"""Private set intersection by commutative Diffie–Hellman blinding (Meadows, 1986; the
ECDH-PSI of MindSpore Federated's vertical FL), on X25519 from ``cryptography``.

Each party holds a secret X25519 scalar.  An identifier is hashed (SHA-256, with a domain
tag) to a 32-byte u-coordinate, and blinding is X25519 scalar multiplication, which
commutes: ``a·(b·H(x)) = b·(a·H(x))``.  The messages:

1. the initiator sends its blinded identifiers ``a·H(x)``, in a random order;
2. the responder returns them blinded again (``b·a·H(x)``, same order) and sends its own
   ``b·H(y)``, in a random order;
3. the initiator blinds those (``a·b·H(y)``), matches, and tells the responder which of its
   positions matched, listed in the order of the doubly blinded values.

Both learn the intersection and nothing else (beyond the other set's size), and both list
it in the same order — by the doubly blinded values, which neither can link to an
identifier outside the intersection.  Hashing onto X25519's u-line lands on the curve or its
twist; Curve25519 is twist-secure, so blinding stays hard to invert on both.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Sequence

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

DOMAIN = b"mskernel-federated/psi/v1:"
POINT_BYTES = 32


class PsiError(ValueError):
    """A malformed PSI message (wrong sizes, a point that cannot be blinded)."""


def _hash(identifier: str | bytes) -> bytes:
    raw = identifier.encode() if isinstance(identifier, str) else bytes(identifier)
    return hashlib.sha256(DOMAIN + raw).digest()


class PsiParty:
    """One side of the intersection; ``ids`` are the party's identifiers (str or bytes,
    distinct)."""

    def __init__(self, ids: Sequence[str | bytes]) -> None:
        if len(set(ids)) != len(ids):
            raise PsiError("PSI: the identifiers must be distinct")
        self.ids = list(ids)
        self._key = X25519PrivateKey.generate()
        self._order: list[int] = []
        self._matched: list[int] = []

    def _blind(self, points: Sequence[bytes]) -> list[bytes]:
        out = []
        for point in points:
            if len(point) != POINT_BYTES:
                raise PsiError(f"PSI: a point has {len(point)} bytes, expected {POINT_BYTES}")
            try:
                out.append(self._key.exchange(X25519PublicKey.from_public_bytes(point)))
            except ValueError as exc:  # a low-order point: all-zero result
                raise PsiError(f"PSI: cannot blind a point ({exc})") from None
        return out

    def _shuffled_blinded_ids(self) -> list[bytes]:
        self._order = list(range(len(self.ids)))
        secrets.SystemRandom().shuffle(self._order)
        return self._blind([_hash(self.ids[i]) for i in self._order])

    # -- initiator ----------------------------------------------------------------------------

    def request(self) -> list[bytes]:
        """Message 1 (initiator): the blinded identifiers, shuffled."""
        return self._shuffled_blinded_ids()

    def finish(self, doubly_blinded: Sequence[bytes], their_blinded: Sequence[bytes]
               ) -> list[int]:
        """Message 3 (initiator): from the responder's reply, the positions of
        ``their_blinded`` in the intersection, in the common order.  The initiator's own
        rows in that order are then :meth:`intersection`."""
        if len(doubly_blinded) != len(self._order):
            raise PsiError(f"PSI: the reply blinds {len(doubly_blinded)} points, "
                           f"{len(self._order)} were sent")
        mine = {point: self._order[pos] for pos, point in enumerate(doubly_blinded)}
        theirs = self._blind(their_blinded)
        common = sorted((point, pos) for pos, point in enumerate(theirs) if point in mine)
        self._matched = [mine[point] for point, _ in common]
        return [pos for _, pos in common]

    # -- responder ----------------------------------------------------------------------------

    def respond(self, blinded: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
        """Message 2 (responder): the initiator's points blinded again (same order), and
        this party's blinded identifiers, shuffled."""
        return self._blind(blinded), self._shuffled_blinded_ids()

    def accept(self, positions: Sequence[int]) -> None:
        """The responder learns its rows in the intersection from message 3."""
        if any(not 0 <= p < len(self._order) for p in positions) or \
                len(set(positions)) != len(positions):
            raise PsiError("PSI: message 3 names positions that were not sent")
        self._matched = [self._order[p] for p in positions]

    # -- both -----------------------------------------------------------------------------------

    def rows(self) -> list[int]:
        """This party's row indices of the intersection, in the order both parties share."""
        return list(self._matched)

    def intersection(self) -> list[str | bytes]:
        """The identifiers in the intersection, in the shared order."""
        return [self.ids[i] for i in self._matched]


def intersect(initiator: PsiParty, responder: PsiParty) -> tuple[list[int], list[int]]:
    """Run the three messages between two parties; each party's row indices of the
    intersection, aligned (row ``k`` of both is the same identifier)."""
    doubly, theirs = responder.respond(initiator.request())
    responder.accept(initiator.finish(doubly, theirs))
    return initiator.rows(), responder.rows()
