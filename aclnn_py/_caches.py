"""Every cache aclnn_py keeps, in one registry: what it holds, what bounds it, how it empties.

A module that keeps a cache registers it when it is imported. :func:`aclnn_py.empty_cache`
empties them all through :func:`empty`, in stage order: what holds device memory first
(cached launches keep workspaces), then host-side tables, then the memory pools, which
can only give back what the others let go. The doctor lists their sizes (:func:`sizes`).
Pure Python with no imports from the package, so every layer can register.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

K = TypeVar("K")
V = TypeVar("V")

HOLDS_DEVICE_MEMORY, HOST_TABLE, POOL = 0, 1, 2  # stages, emptied in this order


@dataclass(frozen=True)
class Cache:
    """One registered cache."""

    name: str
    holds: str                                  # what one entry is
    bound: str                                  # what keeps it from growing without end
    size: Callable[[], int]                     # its current size, in ``unit``
    empty: Callable[[int | None], int] | None   # empties it (for one device, or all);
    #                                             returns the device bytes given back
    stage: int = HOST_TABLE
    unit: str = "entries"


_registry: dict[str, Cache] = {}


def register(name: str, *, holds: str, bound: str, size: Callable[[], int],
             empty: Callable[[int | None], int] | None, stage: int = HOST_TABLE,
             unit: str = "entries") -> None:
    """Add a cache to the registry (a second registration of ``name`` replaces the first)."""
    _registry[name] = Cache(name, holds, bound, size, empty, stage, unit)


def caches() -> list[Cache]:
    """The registered caches, in the order :func:`empty` empties them."""
    return sorted(_registry.values(), key=lambda cache: cache.stage)


def empty(device: int | None = None) -> int:
    """Empty every cache that can be (for ``device``, where a cache is per device);
    returns the device bytes given back to CANN."""
    return sum(cache.empty(device) for cache in caches() if cache.empty is not None)


def sizes() -> dict[str, dict[str, Any]]:
    """Each cache's size, unit, what it holds and what bounds it, by name."""
    return {cache.name: {"size": cache.size(), "unit": cache.unit, "holds": cache.holds,
                         "bound": cache.bound} for cache in caches()}


def emptied(clear: Callable[[], object]) -> Callable[[int | None], int]:
    """An ``empty`` for a host-side cache: ``clear()``, whatever the device; no device bytes."""
    def empty_it(device: int | None) -> int:
        clear()
        return 0
    return empty_it


class Bounded(dict[K, V]):
    """A cache of at most ``maxsize`` entries: a dict (its ``get`` and ``[]`` are the dict's
    own, as fast), filled through :meth:`put`, which empties it when full. The one eviction
    policy of the host-side tables: their entries are cheap to make again, and emptying
    costs nothing per entry, where keeping an order would cost on every hit."""

    __slots__ = ("maxsize",)

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def put(self, key: K, value: V) -> V:
        """Store ``value`` for ``key`` (emptying the cache first when full) and return the
        value stored: another thread's, when it stored one for ``key`` first."""
        if len(self) >= self.maxsize:
            self.clear()
        return self.setdefault(key, value)


def bounded(name: str, maxsize: int, *, holds: str, of: str = "entries",
            note: str = "") -> Bounded[Any, Any]:
    """A new :class:`Bounded` cache of ``maxsize`` ``of`` (what its keys are), registered
    under ``name`` as a host-side table that :func:`empty` clears."""
    cache: Bounded[Any, Any] = Bounded(maxsize)
    register(name, holds=holds, bound=f"{maxsize} {of}, then cleared{note}",
             size=cache.__len__, empty=emptied(cache.clear))
    return cache
