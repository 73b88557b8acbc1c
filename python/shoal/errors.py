"""Exceptions raised for bad input, before libshoal is called (the job goes on)."""


class Error(Exception):
    """Base of every error shoal raises."""


class InvalidArgument(Error, ValueError):
    """A bad value: an unknown op or cmp, a read-only dest, a bad team split."""


class PEError(InvalidArgument):
    """A PE number outside 0..n_pes-1 (of the world, the team or the context's team)."""


class NotSymmetricError(InvalidArgument):
    """An array that must be on the symmetric heap is not (use shoal.zeros/shoal.empty)."""


class NotContiguousError(InvalidArgument):
    """A non-contiguous array (a strided view): pass numpy.ascontiguousarray(a)."""


class DTypeError(Error, TypeError):
    """Element types that differ, or one a call does not take."""


class SizeError(InvalidArgument):
    """Sizes that do not match (dest against source, or against the team's size)."""


class StateError(Error, RuntimeError):
    """Shoal not initialized (or finalized), or a destroyed team/context or freed array."""


class ElementIndexError(Error, IndexError):
    """An element index outside the array (atomics, waits, signals)."""
