"""RMA: the typed, sized and mem put, get, p, g, put_nbi, get_nbi (include/shoal/rma_gen.h)
and the strided iput, iget, ibput, ibget (include/shoal/rma_strided_gen.h), each with its
ctx form, and their definitions in src/api/rma_*_gen.c, calls of src/api/rma_api.h."""

from collections import namedtuple

from .render import Fn, render_header, subst
from .types import RMA, SIZED_BITS, types_of

# A family shape (see render.subst for the template words): the name is
# shmem_[ctx_]TYPENAME_<base><suffix>, or shmem_[ctx_]<base><bits|mem><suffix>
# for the sized and mem forms, which typed_only families lack.
Op = namedtuple("Op", "base suffix ret params body typed_only")

_RMA = "T *dest, const T *source, size_t nelems, int pe"
_STRIDED = "T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe"
_BLOCKED = "T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe"

RMA_OPS = {
    "put": Op("put", "", "void", _RMA,
              ["shoal_api_put(CTX, dest, source, nelems, ELEM, pe, CALL);"], False),
    "put_nbi": Op("put", "_nbi", "void", _RMA,
                  ["shoal_api_put_nbi(CTX, dest, source, nelems, ELEM, pe, CALL);"], False),
    "p": Op("p", "", "void", "T *dest, T value, int pe",
            ["shoal_api_p(CTX, dest, &value, ELEM, pe, CALL);"], True),
    "get": Op("get", "", "void", _RMA,
              ["shoal_api_get(CTX, dest, source, nelems, ELEM, pe, CALL);"], False),
    "get_nbi": Op("get", "_nbi", "void", _RMA,
                  ["shoal_api_get_nbi(CTX, dest, source, nelems, ELEM, pe, CALL);"], False),
    "g": Op("g", "", "T", "const T *source, int pe",
            ["T value;", "shoal_api_g(CTX, &value, source, ELEM, pe, CALL);", "return value;"], True),
    "iput": Op("iput", "", "void", _STRIDED,
               ["shoal_api_iput(CTX, dest, source, dst, sst, nelems, ELEM, pe, CALL);"], False),
    "iget": Op("iget", "", "void", _STRIDED,
               ["shoal_api_iget(CTX, dest, source, dst, sst, nelems, ELEM, pe, CALL);"], False),
    "ibput": Op("ibput", "", "void", _BLOCKED,
                ["shoal_api_ibput(CTX, dest, source, dst, sst, bsize, nblocks, ELEM, pe, CALL);"], False),
    "ibget": Op("ibget", "", "void", _BLOCKED,
                ["shoal_api_ibget(CTX, dest, source, dst, sst, bsize, nblocks, ELEM, pe, CALL);"], False),
}

# The mem forms exist for these only.
MEM_OPS = ["put", "get", "put_nbi", "get_nbi"]

# The families of each header.
CONTIGUOUS = ["put", "put_nbi", "p", "get", "get_nbi", "g"]
STRIDED = ["iput", "iget", "ibput", "ibget"]


def rma_fn(op, ctype, elem, name, with_ctx):
    params = ("shmem_ctx_t ctx, " if with_ctx else "") + op.params
    ctx = "ctx" if with_ctx else "SHMEM_CTX_DEFAULT"
    call = '"' + name + '"'
    return Fn(name, subst(op.ret, ctype), subst(params, ctype),
              [subst(line, ctype, elem, ctx, call) for line in op.body])


def rma_typed_name(t, key, with_ctx, ops=RMA_OPS):
    op = ops[key]
    return "shmem_" + ("ctx_" if with_ctx else "") + t.name + "_" + op.base + op.suffix


def rma_typed(keys, ops=RMA_OPS):
    out = []
    for key in keys:
        for with_ctx in (False, True):
            for t in types_of(RMA):
                out.append(rma_fn(ops[key], t.ctype, "sizeof(" + t.ctype + ")",
                                  rma_typed_name(t, key, with_ctx, ops), with_ctx))
    return out


def rma_sized(ops=RMA_OPS, mem_ops=MEM_OPS):
    out = []
    for key, op in ops.items():
        if op.typed_only:
            continue
        for with_ctx in (False, True):
            prefix = "shmem_" + ("ctx_" if with_ctx else "") + op.base
            for bits in SIZED_BITS:
                out.append(rma_fn(op, "void", str(bits // 8), prefix + str(bits) + op.suffix, with_ctx))
            if key in mem_ops:
                out.append(rma_fn(op, "void", "1", prefix + "mem" + op.suffix, with_ctx))
    return out


def _ops(keys):
    return {k: RMA_OPS[k] for k in keys}


# The generated .c files (each under ~800 lines): path, summary, the entry
# points' header, the functions.
SOURCES = [
    ("src/api/rma_put_gen.c", "Typed contiguous puts: put, put_nbi.",
     "api/rma_api.h", lambda: rma_typed(["put", "put_nbi"])),
    ("src/api/rma_get_gen.c", "Typed contiguous gets: get, get_nbi.",
     "api/rma_api.h", lambda: rma_typed(["get", "get_nbi"])),
    ("src/api/rma_scalar_gen.c", "Typed single elements: p, g.",
     "api/rma_api.h", lambda: rma_typed(["p", "g"])),
    ("src/api/rma_strided_gen.c", "Typed strided puts and gets: iput, iget.",
     "api/rma_api.h", lambda: rma_typed(["iput", "iget"])),
    ("src/api/rma_blocked_gen.c", "Typed block-strided puts and gets (OpenSHMEM 1.6): ibput, ibget.",
     "api/rma_api.h", lambda: rma_typed(["ibput", "ibget"])),
    ("src/api/rma_sized_gen.c", "Sized (8..128 bits) and mem (bytes) puts and gets.",
     "api/rma_api.h", rma_sized),
]


def rma_header():
    groups = [("Contiguous puts.", rma_typed(["put", "put_nbi", "p"])),
              ("Contiguous gets.", rma_typed(["get", "get_nbi", "g"])),
              ("Sized forms move bits/8-byte elements; mem forms move bytes.", rma_sized(_ops(CONTIGUOUS)))]
    return render_header("SHOAL_RMA_GEN_H", "Typed, sized and mem contiguous RMA: put, get, p, g, put_nbi, "
                         "get_nbi and their ctx forms;\n * the strided forms are in rma_strided_gen.h.",
                         ["stddef.h", "stdint.h"], groups)


def rma_strided_header():
    groups = [("Strided: element i goes from source[i*sst] to dest[i*dst].", rma_typed(["iput", "iget"])),
              ("Block-strided (OpenSHMEM 1.6): block b of bsize elements goes from source + b*sst "
               "to dest + b*dst.", rma_typed(["ibput", "ibget"])),
              ("Sized forms move bits/8-byte elements.", rma_sized(_ops(STRIDED)))]
    summary = ("Typed and sized strided RMA: iput, iget, the block-strided ibput, ibget (OpenSHMEM 1.6)\n"
               " * and their ctx forms; the contiguous forms are in rma_gen.h.")
    return render_header("SHOAL_RMA_STRIDED_GEN_H", summary, ["stddef.h", "stdint.h"], groups)
