"""Collectives (OpenSHMEM 1.5 section 9.9, 1.6 scans): the team data collectives
broadcast, collect, fcollect, alltoall, alltoalls (typed and mem) and their deprecated
active-set forms (include/shoal/coll_gen.h); the team reductions, the sum scans and the
deprecated TYPENAME_OP_to_all (include/shoal/reduce_gen.h). Defined in
src/api/coll_*_gen.c as calls of src/api/coll_api.h."""

from collections import namedtuple

from .render import Fn, paragraph, render_header, subst
from .types import RED_BIT, RED_MINMAX, RED_SUM, RMA, TO_ALL, types_of

# Team forms return the entry point's int, the deprecated active-set forms
# (PE_start, logPE_stride, PE_size, pSync) call its *_set form. Reductions and
# scans pass the element type as an enum shoal_dtype (DTYPE), the data
# collectives its size (ELEM).

# The reduction operators and the type family of each.
REDUCE_OPS = [("and", RED_BIT), ("or", RED_BIT), ("xor", RED_BIT), ("max", RED_MINMAX),
              ("min", RED_MINMAX), ("sum", RED_SUM), ("prod", RED_SUM)]

# Sum scans (OpenSHMEM 1.6): the name and whether it is inclusive.
SCAN_OPS = [("inscan", 1), ("exscan", 0)]

# Data collectives: team parameters and call, active-set parameters and call.
CollOp = namedtuple("CollOp", "params body set_params set_body")
_SET_TAIL = "int PE_start, int logPE_stride, int PE_size, long *pSync"
_SET_ARGS = "PE_start, logPE_stride, PE_size, pSync, CALL"
COLL_OPS = {
    "broadcast": CollOp(
        "shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root",
        "return shoal_api_broadcast(team, dest, source, nelems, ELEM, PE_root, CALL);",
        "T *dest, const T *source, size_t nelems, int PE_root, " + _SET_TAIL,
        "shoal_api_broadcast_set(dest, source, nelems, ELEM, PE_root, " + _SET_ARGS + ");"),
    "collect": CollOp(
        "shmem_team_t team, T *dest, const T *source, size_t nelems",
        "return shoal_api_collect(team, dest, source, nelems, ELEM, CALL);",
        "T *dest, const T *source, size_t nelems, " + _SET_TAIL,
        "shoal_api_collect_set(dest, source, nelems, ELEM, " + _SET_ARGS + ");"),
    "fcollect": CollOp(
        "shmem_team_t team, T *dest, const T *source, size_t nelems",
        "return shoal_api_fcollect(team, dest, source, nelems, ELEM, CALL);",
        "T *dest, const T *source, size_t nelems, " + _SET_TAIL,
        "shoal_api_fcollect_set(dest, source, nelems, ELEM, " + _SET_ARGS + ");"),
    "alltoall": CollOp(
        "shmem_team_t team, T *dest, const T *source, size_t nelems",
        "return shoal_api_alltoall(team, dest, source, nelems, ELEM, CALL);",
        "T *dest, const T *source, size_t nelems, " + _SET_TAIL,
        "shoal_api_alltoall_set(dest, source, nelems, ELEM, " + _SET_ARGS + ");"),
    "alltoalls": CollOp(
        "shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems",
        "return shoal_api_alltoalls(team, dest, source, dst, sst, nelems, ELEM, CALL);",
        "T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, " + _SET_TAIL,
        "shoal_api_alltoalls_set(dest, source, dst, sst, nelems, ELEM, " + _SET_ARGS + ");"),
}

# The deprecated active-set data collectives exist for 32- and 64-bit elements.
COLL_SET_BITS = [32, 64]

_FLOAT_DTYPES = {"float": "SHOAL_DT_FLOAT", "double": "SHOAL_DT_DOUBLE", "longdouble": "SHOAL_DT_LONGDOUBLE",
                 "complexf": "SHOAL_DT_COMPLEXF", "complexd": "SHOAL_DT_COMPLEXD"}


def dtype_of(t):
    """The enum shoal_dtype of t, as a constant expression."""
    if t.name in _FLOAT_DTYPES:
        return _FLOAT_DTYPES[t.name]
    signed = "(char)-1 < 0" if t.signed is None else "1" if t.signed else "0"
    return "SHOAL_DTYPE_INT(sizeof(%s), %s)" % (t.ctype, signed)


def coll_fn(name, ret, params, body, ctype, elem="", dtype=""):
    call = '"' + name + '"'
    return Fn(name, ret, subst(params, ctype),
              [subst(line, ctype, elem, call=call).replace("DTYPE", dtype) for line in body])


def reduce_name(t, op):
    return "shmem_%s_%s_reduce" % (t.name, op)


def reduce_typed(ops):
    out = []
    for op, family in REDUCE_OPS:
        if op not in ops:
            continue
        for t in types_of(family):
            out.append(coll_fn(reduce_name(t, op), "int",
                               "shmem_team_t team, T *dest, const T *source, size_t nreduce",
                               ["return shoal_api_reduce(team, dest, source, nreduce, DTYPE, SHOAL_RED_%s, "
                                "CALL);" % op.upper()], t.ctype, dtype=dtype_of(t)))
    return out


def scan_name(t, op):
    return "shmem_%s_sum_%s" % (t.name, op)


def scan_typed():
    out = []
    for op, inclusive in SCAN_OPS:
        for t in types_of(RED_SUM):
            out.append(coll_fn(scan_name(t, op), "int",
                               "shmem_team_t team, T *dest, const T *source, size_t nelems",
                               ["return shoal_api_scan(team, dest, source, nelems, DTYPE, %d, CALL);"
                                % inclusive],
                               t.ctype, dtype=dtype_of(t)))
    return out


def to_all_name(t, op):
    return "shmem_%s_%s_to_all" % (t.name, op)


def to_all_typed():
    """The deprecated active-set reductions. nreduce is an int there: a
    negative one becomes a size the entry point rejects."""
    out = []
    for op, family in REDUCE_OPS:
        for t in types_of(family):
            if TO_ALL not in t.families:
                continue
            out.append(coll_fn(to_all_name(t, op), "void",
                               "T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, "
                               "int PE_size, T *pWrk, long *pSync",
                               ["shoal_api_reduce_set(dest, source, (size_t)nreduce, DTYPE, SHOAL_RED_%s, "
                                "PE_start, logPE_stride, PE_size, pWrk, pSync, CALL);" % op.upper()],
                               t.ctype, dtype=dtype_of(t)))
    return out


def coll_name(t, key):
    return "shmem_%s_%s" % (t.name, key)


def coll_typed(keys):
    """Team data collectives over the RMA types, then the mem (byte) forms."""
    out = []
    for key in keys:
        op = COLL_OPS[key]
        for t in types_of(RMA):
            out.append(coll_fn(coll_name(t, key), "int", op.params, [op.body], t.ctype,
                               "sizeof(" + t.ctype + ")"))
    for key in keys:
        op = COLL_OPS[key]
        out.append(coll_fn("shmem_%smem" % key, "int", op.params, [op.body], "void", "1"))
    return out


def coll_set():
    """Deprecated active-set data collectives: shmem_broadcast32, ..."""
    out = []
    for key, op in COLL_OPS.items():
        for bits in COLL_SET_BITS:
            out.append(coll_fn("shmem_%s%d" % (key, bits), "void", op.set_params, [op.set_body], "void",
                               str(bits // 8)))
    return out


SOURCES = [
    ("src/api/coll_reduce_bitwise_gen.c", "Team reductions: and_reduce, or_reduce, xor_reduce.",
     "api/coll_api.h", lambda: reduce_typed(["and", "or", "xor"])),
    ("src/api/coll_reduce_minmax_gen.c", "Team reductions: max_reduce, min_reduce.",
     "api/coll_api.h", lambda: reduce_typed(["max", "min"])),
    ("src/api/coll_reduce_sum_gen.c", "Team reductions: sum_reduce, prod_reduce.",
     "api/coll_api.h", lambda: reduce_typed(["sum", "prod"])),
    ("src/api/coll_scan_gen.c", "Team sum scans (OpenSHMEM 1.6): sum_inscan, sum_exscan.",
     "api/coll_api.h", scan_typed),
    ("src/api/coll_bcast_gen.c", "Team data collectives: broadcast, collect, fcollect and their mem forms.",
     "api/coll_api.h", lambda: coll_typed(["broadcast", "collect", "fcollect"])),
    ("src/api/coll_alltoall_gen.c", "Team data collectives: alltoall, alltoalls and their mem forms.",
     "api/coll_api.h", lambda: coll_typed(["alltoall", "alltoalls"])),
    ("src/api/coll_active_set_gen.c", "Deprecated active-set collectives: broadcast32/64, collect32/64, "
     "fcollect32/64,\n * alltoall32/64, alltoalls32/64 and the TYPENAME_OP_to_all reductions.",
     "api/coll_api.h", lambda: coll_set() + to_all_typed()),
]


def coll_header():
    groups = [("Broadcast from PE_root of the team to every other member.", coll_typed(["broadcast"])),
              ("Concatenation of every member's source, in team order: collect takes nelems per "
               "member that may\n * differ, fcollect the same nelems everywhere.",
               coll_typed(["collect", "fcollect"])),
              ("All-to-all exchange of nelems per pair of members; alltoalls with element strides dst "
               "and sst.", coll_typed(["alltoall", "alltoalls"])),
              ("Deprecated active-set forms (members PE_start + i * 2^logPE_stride, i < PE_size; pSync "
               "of\n * SHMEM_*_SYNC_SIZE longs, all SHMEM_SYNC_VALUE) over 32- and 64-bit elements.",
               coll_set())]
    summary = paragraph("Collectives: the team data collectives broadcast, collect, fcollect, alltoall, "
                        "alltoalls (typed and mem) and their deprecated active-set forms (broadcast32, "
                        "...); the reductions and scans are in reduce_gen.h. Team forms return 0 on "
                        "success.")
    return render_header("SHOAL_COLL_GEN_H", summary, ["stddef.h", "stdint.h"], groups,
                         ["/* Reductions, scans and the deprecated TYPENAME_OP_to_all. */\n"
                          "#include <shoal/reduce_gen.h>",
                          "/* C11 generic names: shmem_broadcast, shmem_sum_reduce, ... */\n"
                          "#include <shoal/generic_coll_gen.h>"])


def reduce_header():
    groups = [("Bitwise team reductions: dest[i] = source[i] of every member combined, i < nreduce.",
               reduce_typed(["and", "or", "xor"])),
              ("Team reductions: maximum and minimum.", reduce_typed(["max", "min"])),
              ("Team reductions: sum and product.", reduce_typed(["sum", "prod"])),
              ("Team sum scans (OpenSHMEM 1.6): member k gets the sum over members 0..k (inscan) or "
               "0..k-1\n * (exscan).", scan_typed()),
              ("Deprecated active-set reductions (pWrk and pSync sized as the standard says, with\n * "
               "SHMEM_REDUCE_MIN_WRKDATA_SIZE and SHMEM_REDUCE_SYNC_SIZE).", to_all_typed())]
    summary = paragraph("Reductions: the team reductions TYPENAME_{and,or,xor,max,min,sum,prod}_reduce, "
                        "the 1.6 sum scans (TYPENAME_sum_inscan, TYPENAME_sum_exscan) and the deprecated "
                        "active-set TYPENAME_OP_to_all. Team forms return 0 on success.")
    return render_header("SHOAL_REDUCE_GEN_H", summary, ["stddef.h", "stdint.h"], groups)
