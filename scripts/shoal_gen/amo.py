"""Atomic memory operations (OpenSHMEM 1.5 tables 6-10): the typed and ctx
atomic_fetch, set, swap, compare_swap, fetch_inc, inc, fetch_add, add, and, or, xor,
their fetching and non-blocking forms and the deprecated 1.4 names (fadd, finc,
cswap, ...) (include/shoal/amo_gen.h), defined in src/api/amo_*_gen.c as calls of
shoal_api_amo (src/api/amo_api.h)."""

from collections import namedtuple

from .render import Fn, paragraph, param_names, render_header, subst
from .types import AMO, BIT, EXT, types_of

# Every one is a call of shoal_api_amo with sizeof(T): the parameters name
# what is passed. dest is the target ("source" for fetch, passed as dest with
# const cast away); "value" is the operand (inc and fetch_inc pass a 1);
# "cond" the compare value of compare_swap; the old value goes to "fetch"
# (nbi forms) or is returned (forms that return T) or is not asked for.
AmoOp = namedtuple("AmoOp", "family ret params op")

_VAL = "T *dest, T value, int pe"
_FVAL = "T *fetch, T *dest, T value, int pe"
AMO_OPS = {
    "fetch": AmoOp(EXT, "T", "const T *source, int pe", "FETCH"),
    "set": AmoOp(EXT, "void", _VAL, "SET"),
    "swap": AmoOp(EXT, "T", _VAL, "SWAP"),
    "compare_swap": AmoOp(AMO, "T", "T *dest, T cond, T value, int pe", "CSWAP"),
    "fetch_inc": AmoOp(AMO, "T", "T *dest, int pe", "ADD"),
    "inc": AmoOp(AMO, "void", "T *dest, int pe", "ADD"),
    "fetch_add": AmoOp(AMO, "T", _VAL, "ADD"),
    "add": AmoOp(AMO, "void", _VAL, "ADD"),
    "fetch_and": AmoOp(BIT, "T", _VAL, "AND"),
    "and": AmoOp(BIT, "void", _VAL, "AND"),
    "fetch_or": AmoOp(BIT, "T", _VAL, "OR"),
    "or": AmoOp(BIT, "void", _VAL, "OR"),
    "fetch_xor": AmoOp(BIT, "T", _VAL, "XOR"),
    "xor": AmoOp(BIT, "void", _VAL, "XOR"),
    # Non-blocking fetching forms: the old value lands in *fetch.
    "fetch_nbi": AmoOp(EXT, "void", "T *fetch, const T *source, int pe", "FETCH"),
    "swap_nbi": AmoOp(EXT, "void", _FVAL, "SWAP"),
    "compare_swap_nbi": AmoOp(AMO, "void", "T *fetch, T *dest, T cond, T value, int pe", "CSWAP"),
    "fetch_inc_nbi": AmoOp(AMO, "void", "T *fetch, T *dest, int pe", "ADD"),
    "fetch_add_nbi": AmoOp(AMO, "void", _FVAL, "ADD"),
    "fetch_and_nbi": AmoOp(BIT, "void", _FVAL, "AND"),
    "fetch_or_nbi": AmoOp(BIT, "void", _FVAL, "OR"),
    "fetch_xor_nbi": AmoOp(BIT, "void", _FVAL, "XOR"),
}

# Deprecated (OpenSHMEM 1.4) names: shmem_TYPENAME_<old>, no ctx form, over
# the type set of the atomic_<new> they are the old name of.
DEPRECATED_AMO = [("fetch", "fetch"), ("set", "set"), ("swap", "swap"), ("cswap", "compare_swap"),
                  ("finc", "fetch_inc"), ("inc", "inc"), ("fadd", "fetch_add"), ("add", "add")]


def amo_body(op):
    names = param_names(op.params)
    target = "(void *)source" if "source" in names else "dest"
    fetched = "fetch" if "fetch" in names else "&fetched" if op.ret == "T" else "NULL"
    operand = "&value" if "value" in names else "&one" if op.op == "ADD" else "NULL"
    cond = "&cond" if "cond" in names else "NULL"
    body = []
    if operand == "&one":
        body.append("const T one = 1;")
    if fetched == "&fetched":
        body.append("T fetched;")
    body.append("shoal_api_amo(CTX, SHOAL_AMO_%s, %s, %s, %s, %s, ELEM, pe, CALL);"
                % (op.op, target, fetched, operand, cond))
    if fetched == "&fetched":
        body.append("return fetched;")
    return body


def amo_fn(op, t, name, with_ctx):
    params = ("shmem_ctx_t ctx, " if with_ctx else "") + op.params
    ctx = "ctx" if with_ctx else "SHMEM_CTX_DEFAULT"
    elem = "sizeof(" + t.ctype + ")"
    return Fn(name, subst(op.ret, t.ctype), subst(params, t.ctype),
              [subst(line, t.ctype, elem, ctx, '"' + name + '"') for line in amo_body(op)])


def amo_typed_name(t, key, with_ctx):
    return "shmem_" + ("ctx_" if with_ctx else "") + t.name + "_atomic_" + key


def amo_typed(keys):
    out = []
    for key in keys:
        op = AMO_OPS[key]
        for with_ctx in (False, True):
            for t in types_of(op.family):
                out.append(amo_fn(op, t, amo_typed_name(t, key, with_ctx), with_ctx))
    return out


def amo_deprecated_name(t, old):
    return "shmem_" + t.name + "_" + old


def amo_deprecated(names=DEPRECATED_AMO):
    out = []
    for old, key in names:
        op = AMO_OPS[key]
        for t in types_of(op.family):
            out.append(amo_fn(op, t, amo_deprecated_name(t, old), False))
    return out


AMO_NBI = [k for k in AMO_OPS if k.endswith("_nbi")]

SOURCES = [
    ("src/api/amo_fetch_gen.c", "Typed AMOs: fetch, set, swap.",
     "api/amo_api.h", lambda: amo_typed(["fetch", "set", "swap"])),
    ("src/api/amo_cswap_gen.c", "Typed AMOs: compare_swap, compare_swap_nbi.",
     "api/amo_api.h", lambda: amo_typed(["compare_swap", "compare_swap_nbi"])),
    ("src/api/amo_inc_gen.c", "Typed AMOs: fetch_inc, inc.",
     "api/amo_api.h", lambda: amo_typed(["fetch_inc", "inc"])),
    ("src/api/amo_add_gen.c", "Typed AMOs: fetch_add, add.",
     "api/amo_api.h", lambda: amo_typed(["fetch_add", "add"])),
    ("src/api/amo_bitwise_gen.c", "Typed bitwise AMOs: fetch_and, and, fetch_or, or, fetch_xor, xor.",
     "api/amo_api.h", lambda: amo_typed(["fetch_and", "and", "fetch_or", "or", "fetch_xor", "xor"])),
    ("src/api/amo_nbi_gen.c", "Typed non-blocking fetching AMOs: fetch_nbi, swap_nbi, fetch_inc_nbi, "
     "fetch_add_nbi.", "api/amo_api.h",
     lambda: amo_typed(["fetch_nbi", "swap_nbi", "fetch_inc_nbi", "fetch_add_nbi"])),
    ("src/api/amo_bitwise_nbi_gen.c", "Typed non-blocking fetching bitwise AMOs: fetch_and_nbi, "
     "fetch_or_nbi, fetch_xor_nbi.", "api/amo_api.h",
     lambda: amo_typed(["fetch_and_nbi", "fetch_or_nbi", "fetch_xor_nbi"])),
    ("src/api/amo_deprecated_gen.c", "Deprecated AMO names (OpenSHMEM 1.4): fetch, set, swap, cswap.",
     "api/amo_api.h", lambda: amo_deprecated(DEPRECATED_AMO[:4])),
    ("src/api/amo_deprecated_add_gen.c", "Deprecated AMO names (OpenSHMEM 1.4): finc, inc, fadd, add.",
     "api/amo_api.h", lambda: amo_deprecated(DEPRECATED_AMO[4:])),
]


def amo_header():
    groups = [("Fetch, set, swap and compare-and-swap; fetch and swap return the old value.",
               amo_typed(["fetch", "set", "swap", "compare_swap"])),
              ("Increment and add; the fetch forms return the old value.",
               amo_typed(["fetch_inc", "inc", "fetch_add", "add"])),
              ("Bitwise; the fetch forms return the old value.",
               amo_typed(["fetch_and", "and", "fetch_or", "or", "fetch_xor", "xor"])),
              ("Non-blocking fetching forms: the old value lands in *fetch by the next quiet.",
               amo_typed(AMO_NBI)),
              ("Deprecated (OpenSHMEM 1.4) names.", amo_deprecated())]
    summary = paragraph("Atomic memory operations: typed and ctx atomic_fetch, set, swap, compare_swap, "
                        "fetch_inc, inc, fetch_add, add, and, or, xor, their fetching and non-blocking "
                        "forms, and the deprecated names (fadd, finc, cswap, ...).")
    return render_header("SHOAL_AMO_GEN_H", summary, ["stddef.h", "stdint.h"], groups,
                         ["/* C11 generic names: shmem_atomic_fetch_add, shmem_fadd, ... */\n"
                          "#include <shoal/generic_amo_gen.h>"])
