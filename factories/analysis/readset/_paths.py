"""Placing reads on the test's path: undecided blocks, the blocks a test prepared, one access
per name.

A block is an ``if`` arm or a loop body the test's values do not decide.  ``BlockIds`` numbers
them; the numbers are only ever compared for equality (``provisioned``, ``Walker.placed``), so
which walk met a block first does not change any result.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

import attrs

from factories.analysis.readset._model import AttributeAccess, ChainRead


class BlockIds:
    """A stable number for each block, shared by every walk of that code, and the pairing of
    an ``if``'s two arms.  Keyed by the identity of AST nodes that the parsed tree keeps alive
    for the analyzer's lifetime, so the content is a function of the source alone."""

    def __init__(self) -> None:
        self._ids: dict[tuple[int, int], int] = {}  # (id of the AST node, arm) -> block id
        self.siblings: dict[int, int] = {}  # the other arm of an ``if`` arm's block
        self.typed: set[int] = set()  # the arms of an ``if`` that tests a value's type
        # The straight lines past an ``if`` an arm of which may leave (``rest_after``).
        self.rests: set[int] = set()

    def of(self, node: object, arm: int) -> int:
        """One arm (0, 1) of an ``if`` (keyed by its statement list) or a loop's body (0,
        keyed by the loop)."""
        return self._ids.setdefault((id(node), arm), len(self._ids))

    def arms(self, body: object, orelse: object) -> tuple[int, int]:
        """The two arms of one ``if``, recorded as siblings."""
        ids = (self.of(body, 0), self.of(orelse, 1))
        self.siblings.update({ids[0]: ids[1], ids[1]: ids[0]})
        return ids

    def rest_after(self, body: object) -> int:
        """The block of the straight line past an undecided ``if`` (keyed by its ``body``)
        an arm of which may leave the call or the loop body: no test prepares it (a test may
        take the early exit on purpose), so ``provisioned`` never counts it ready; it only
        places the reads ``Walker.uncover`` finds on every path."""
        rest = self.of(body, 2)
        self.rests.add(rest)
        return rest

    def type_tested(self, body: object, orelse: object) -> None:
        """Record that the ``if`` of these arms tests a type (``isinstance(q, tuple)``) the
        test's values do not decide: which arm runs is the type of what the test passes,
        which the fields it set do not tell (see ``provisioned``)."""
        self.typed.update(self.arms(body, orelse))


def provisioned(
    required: Sequence[AttributeAccess],
    reads: Iterable[AttributeAccess],
    provided: frozenset[str],
    siblings: Mapping[int, int],
    typed: Collection[int] = frozenset(),
    rests: Collection[int] = frozenset(),
) -> list[AttributeAccess]:
    """Required reads made certain because the test prepared the block they sit in.

    A test that sets stub fields which the call reads only inside one undecided block (an
    ``if`` arm, a loop body) means that block to run: why else set them.  A read on that
    block's straight line (from its entry, before any further undecided split, exit or jump)
    is then as certain as the block itself.  A block is *provisioned* when some field the
    test set is read inside it and nowhere outside it on the call's path; a read is certain
    when every block it sits in is provisioned.  ``siblings`` pairs the two arms of an
    ``if``.  ``typed`` are the arms of an ``if`` on a type test the test's values do not
    decide: a field read in one arm only says the object has it, not that the test passes
    the type that arm takes (``if isinstance(q, tuple): ... self.workspace_specs`` with a
    tensor ``q``), so such an arm is never provisioned, as a ``hasattr`` guard decides
    nothing about a field the test did not set.  ``rests``: the straight lines past an early
    exit (``BlockIds.rest_after``): a read there is in no block a test prepares, as past any
    exit."""
    if not provided:
        return list(required)
    inside: dict[str, frozenset[int]] = {}
    for access in reads:
        if access.name not in provided:
            continue
        blocks = frozenset(access.blocks or ()) if not access.certain else frozenset()
        if not blocks.isdisjoint(rests):
            blocks = frozenset()
        inside[access.name] = inside.get(access.name, blocks) & blocks
    ready = frozenset().union(*inside.values())
    # Both arms of one ``if`` prepared: the test (or a helper shared by tests) set up for
    # either way, so neither is singled out.
    ready = frozenset(b for b in ready if siblings.get(b) not in ready and b not in typed)
    return [
        attrs.evolve(a, certain=True)
        if not a.certain and a.blocks and set(a.blocks) <= ready
        else a
        for a in required
    ]


def chain_links(chains: Iterable[ChainRead]) -> Iterator[ChainRead]:
    """Each chain read as a read of every object it passes (``self.cfg.on.x`` reads
    ``self.cfg``, ``self.cfg.on``, ``self.cfg.on.x`` there): the reads ``provisioned`` matches
    against the chains a test provided (a held link is read when a longer chain through it
    is, ``metadata.prefill.shape``).  Made as ``provisioned`` asks: not at all where the test
    provided no chain (most calls)."""
    return (attrs.evolve(c, path=prefix) for c in chains for prefix in c.prefixes)


def first_by_name(items: Iterable[AttributeAccess]) -> tuple[AttributeAccess, ...]:
    """One access per name: the first certain one, else the first."""
    seen: dict[str, AttributeAccess] = {}
    for item in items:
        if item.name not in seen or (item.certain and not seen[item.name].certain):
            seen[item.name] = item
    return tuple(seen.values())


def first_unguarded_by_name(items: Iterable[ChainRead]) -> tuple[ChainRead, ...]:
    """One read per chain and tolerance: the first certain one among the reads that allow the
    same links to be missing (``guarded``, ``optional``).  A chain read plainly anywhere is
    needed there, whatever else probes it: a ``getattr`` with a default on the test's path
    does not hide a plain read of the same chain further on (on some runs only, a note)."""
    seen: dict[tuple[str, tuple[str, ...], bool, int], ChainRead] = {}
    for item in items:
        key = (item.root, item.path, item.guarded, item.optional)
        old = seen.get(key)
        if old is None or (item.certain and not old.certain):
            seen[key] = item
    return tuple(seen.values())
