"""The one type table of the generated API: every TYPENAME of shmem_TYPENAME_*,
its C type, and the families (RMA, sync, AMO, reductions, ...) that take it.
Generates nothing itself; every other module reads its types from here."""

from collections import namedtuple

# ---------------------------------------------------------------------------
# name     TYPENAME in shmem_TYPENAME_*
# ctype    the C type
# size     bytes when the standard fixes it, None when the platform does; the
#          generated code always passes sizeof(ctype)
# signed   signedness, for SHOAL_KIND(sizeof(ctype), signed)
# families "rma": standard RMA types (put/get/p/g/iput/iget/ibput/ibget/nbi)
#          "sync": point-to-point synchronisation types (wait_until/test)
#          "wait": the deprecated shmem_TYPENAME_wait(ivar, cmp_value)
#          "amo": standard AMO types (fetch_inc, inc, fetch_add, add, compare_swap)
#          "amo_ext": extended AMO types (fetch, set, swap)
#          "amo_bit": bitwise AMO types (and, or, xor and their fetch forms)
#          "red_bit": team reductions and, or, xor (OpenSHMEM 1.5 reduction table)
#          "red_minmax": team reductions max, min
#          "red_sum": team reductions sum, prod, and the sum scans (1.6 inscan, exscan)
#          "to_all": the deprecated active-set reductions shmem_TYPENAME_OP_to_all, each
#                    over this set and the set of its team reduction
#          The team data collectives (broadcast, collect, fcollect, alltoall,
#          alltoalls) take the "rma" types.
# generic  True for the distinct C types that the _Generic lists map; typedefs
#          (int32_t, size_t, ...) are one of these and must not repeat in a list
# ---------------------------------------------------------------------------
Type = namedtuple("Type", "name ctype size signed families generic")

RMA, SYNC, WAIT, AMO, EXT, BIT = "rma", "sync", "wait", "amo", "amo_ext", "amo_bit"
RED_BIT, RED_MINMAX, RED_SUM, TO_ALL = "red_bit", "red_minmax", "red_sum", "to_all"

_RED = {RED_MINMAX, RED_SUM}  # min/max/sum/prod reductions, sum scans
_RED_INT = _RED | {RED_BIT}  # and the bitwise reductions

TYPES = [
    Type("float", "float", 4, True, {RMA, EXT, TO_ALL} | _RED, True),
    Type("double", "double", 8, True, {RMA, EXT, TO_ALL} | _RED, True),
    Type("longdouble", "long double", None, True, {RMA, TO_ALL} | _RED, True),
    Type("char", "char", 1, None, {RMA} | _RED, True),
    Type("schar", "signed char", 1, True, {RMA} | _RED, True),
    Type("short", "short", None, True, {RMA, SYNC, WAIT, TO_ALL} | _RED_INT, True),
    Type("int", "int", None, True, {RMA, SYNC, WAIT, AMO, EXT, TO_ALL} | _RED_INT, True),
    Type("long", "long", None, True, {RMA, SYNC, WAIT, AMO, EXT, TO_ALL} | _RED_INT, True),
    Type("longlong", "long long", None, True, {RMA, SYNC, WAIT, AMO, EXT, TO_ALL} | _RED_INT, True),
    Type("uchar", "unsigned char", 1, False, {RMA} | _RED_INT, True),
    Type("ushort", "unsigned short", None, False, {RMA, SYNC} | _RED_INT, True),
    Type("uint", "unsigned int", None, False, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, True),
    Type("ulong", "unsigned long", None, False, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, True),
    Type("ulonglong", "unsigned long long", None, False, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, True),
    Type("int8", "int8_t", 1, True, {RMA} | _RED_INT, False),
    Type("int16", "int16_t", 2, True, {RMA} | _RED_INT, False),
    Type("int32", "int32_t", 4, True, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, False),
    Type("int64", "int64_t", 8, True, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, False),
    Type("uint8", "uint8_t", 1, False, {RMA} | _RED_INT, False),
    Type("uint16", "uint16_t", 2, False, {RMA} | _RED_INT, False),
    Type("uint32", "uint32_t", 4, False, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, False),
    Type("uint64", "uint64_t", 8, False, {RMA, SYNC, AMO, EXT, BIT} | _RED_INT, False),
    Type("size", "size_t", None, False, {RMA, SYNC, AMO, EXT} | _RED_INT, False),
    Type("ptrdiff", "ptrdiff_t", None, True, {RMA, SYNC, AMO, EXT} | _RED, False),
    # Complex types: sum and prod only. C++ declares them over std::complex
    # (same layout; only pointers are passed): see render.CXX_COMPLEX.
    Type("complexf", "float _Complex", 8, True, {RED_SUM, TO_ALL}, True),
    Type("complexd", "double _Complex", 16, True, {RED_SUM, TO_ALL}, True),
]

# Sized RMA: shmem_put8 ... shmem_put128 move elements of bits/8 bytes.
SIZED_BITS = [8, 16, 32, 64, 128]


# Typedefs that may join a _Generic list all the same: in the bitwise list
# (unsigned int, unsigned long, unsigned long long) the signed int32_t and
# int64_t are compatible with none of the others, whatever the platform.
# Likewise int8_t (signed char, which the bitwise reduction list lacks).
GENERIC_EXTRA = {BIT: ["int32", "int64"], RED_BIT: ["int8"]}


def types_of(family):
    return [t for t in TYPES if family in t.families]


def generic_types(family):
    extra = GENERIC_EXTRA.get(family, [])
    return [t for t in TYPES if family in t.families and (t.generic or t.name in extra)]
