"""The generated .c files: which families go into which src/api/*_gen.c (each
under ~800 lines), in the order the names tests reference them, and lookups of
the generated functions by entry-point header or by name."""

from . import amo, coll, rma, signal, sync

# path, summary, the entry points' header (src/api/...), the functions.
SOURCES = rma.SOURCES + sync.SOURCES + amo.SOURCES + signal.SOURCES + coll.SOURCES


def functions_of(header):
    """The functions whose definitions call the entry points of header."""
    fns = []
    for _, _, hdr, make in SOURCES:
        if hdr == header:
            fns += make()
    return fns


def all_functions():
    return {fn.name: fn for _, _, _, make in SOURCES for fn in make()}
