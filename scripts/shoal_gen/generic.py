"""The C11 _Generic macros: shmem_put, shmem_wait_until, ... (include/shoal/generic_gen.h),
shmem_atomic_fetch_add, shmem_fadd, ... (generic_amo_gen.h), shmem_put_signal
(generic_signal_gen.h), shmem_sum_reduce, shmem_broadcast, ... (generic_coll_gen.h).
Each picks the typed function of its family from the type of one pointer argument."""

from collections import namedtuple

from .amo import AMO_OPS, DEPRECATED_AMO, amo_typed_name, amo_deprecated_name
from .coll import COLL_OPS, REDUCE_OPS, coll_name, reduce_name
from .render import WIDTH, banner, paragraph, param_names
from .rma import RMA_OPS, rma_typed_name
from .signal import SIGNAL_OPS
from .sync import DEPRECATED_WAIT, TEST_OPS, WAIT_OPS, sync_name
from .types import RMA, SYNC, WAIT, generic_types, types_of

# Each entry: the generic name, the generic forms (parameter names, index of
# the parameter that selects the type, the qualifiers the selecting pointer
# may carry besides none, and the typed function for a Type). A "volatile "
# pointer calls the same function with volatile cast away
# (SHOAL_GENERIC_UNVOLATILE): old programs declare their flags volatile.
Generic = namedtuple("Generic", "name params select quals typed")


def generic_rma(ops=RMA_OPS):
    out = []
    for key, op in ops.items():
        params = param_names(op.params)
        sel = params.index("source" if key == "g" else "dest")
        quals = ("", "const ") if key == "g" else ("",)
        forms = [
            Generic(op.base + op.suffix, params, sel, quals,
                    lambda t, k=key: rma_typed_name(t, k, False, ops)),
            Generic(op.base + op.suffix, ["ctx"] + params, sel + 1, quals,
                    lambda t, k=key: rma_typed_name(t, k, True, ops)),
        ]
        out.append((forms, [t for t in types_of(RMA) if t.generic]))
    return out


def generic_sync():
    out = []
    vol = ("", "volatile ")
    for op in WAIT_OPS + TEST_OPS:
        out.append(([Generic(op.name, param_names(op.params), 0, vol, lambda t, o=op: sync_name(t, o))],
                    generic_types(SYNC)))
    out.append(([Generic("wait", param_names(DEPRECATED_WAIT.params), 0, vol,
                         lambda t: sync_name(t, DEPRECATED_WAIT))], generic_types(WAIT)))
    return out


def amo_select(params):
    """The parameter whose type picks the function, and its extra qualifiers."""
    for name in ("dest", "fetch"):
        if name in params:
            return params.index(name), ("",)
    return params.index("source"), ("", "const ")


def generic_amo():
    out = []
    for key, op in AMO_OPS.items():
        params = param_names(op.params)
        sel, quals = amo_select(params)
        forms = [Generic("atomic_" + key, params, sel, quals, lambda t, k=key: amo_typed_name(t, k, False)),
                 Generic("atomic_" + key, ["ctx"] + params, sel + 1, quals,
                         lambda t, k=key: amo_typed_name(t, k, True))]
        out.append((forms, generic_types(op.family)))
    return out


def generic_amo_deprecated():
    out = []
    for old, key in DEPRECATED_AMO:
        op = AMO_OPS[key]
        params = param_names(op.params)
        sel, quals = amo_select(params)
        out.append(([Generic(old, params, sel, quals, lambda t, o=old: amo_deprecated_name(t, o))],
                    generic_types(op.family)))
    return out


def generic_reduce():
    out = []
    for op, family in REDUCE_OPS:
        out.append(([Generic(op + "_reduce", ["team", "dest", "source", "nreduce"], 1, ("",),
                             lambda t, o=op: reduce_name(t, o))], generic_types(family)))
    return out


def generic_coll():
    out = []
    for key, op in COLL_OPS.items():
        out.append(([Generic(key, param_names(op.params), 1, ("",), lambda t, k=key: coll_name(t, k))],
                    [t for t in types_of(RMA) if t.generic]))
    return out


def all_generic_families():
    return (generic_rma() + generic_sync() + generic_amo() + generic_amo_deprecated()
            + generic_rma(SIGNAL_OPS) + generic_reduce() + generic_coll())


def generic_body(form, types):
    """_Generic((sel), T *: shmem_T_op, ...)(args) as a multi-line macro body."""
    sel = form.params[form.select]
    lines = ["    _Generic((%s)," % sel]
    for t in types:
        for q in form.quals:
            lines.append("        %s%s *: %s," % (q, t.ctype, form.typed(t)))
    lines[-1] = lines[-1].rstrip(",") + ")"
    params = list(form.params)
    if "volatile " in form.quals:
        params[form.select] = "SHOAL_GENERIC_UNVOLATILE(%s)" % sel
    args = "(%s)" % ", ".join(params)
    if len(lines[-1] + args) <= WIDTH:
        lines[-1] += args
    else:
        lines.append("    " + args)
    return lines


def macro(head, body_lines):
    lines = [head] + body_lines
    width = max(len(line) for line in lines[:-1]) + 1
    return "\n".join(line.ljust(width) + "\\" for line in lines[:-1]) + "\n" + lines[-1] + "\n"


def render_generic(forms, types):
    """One generic name: a plain macro for one form, or a dispatch on the
    argument count over several (the ctx forms have one more)."""
    if len(forms) == 1:
        form = forms[0]
        head = "\n#define shmem_%s(%s)" % (form.name, ", ".join(form.params))
        return macro(head, generic_body(form, types))
    name = forms[0].name
    line = "#define shmem_%s(...) SHOAL_GENERIC_DISPATCH(SHOAL_GENERIC_%s_, __VA_ARGS__)" % (name, name)
    if len(line) > WIDTH:
        line = ("#define shmem_%s(...) \\\n    SHOAL_GENERIC_DISPATCH(SHOAL_GENERIC_%s_, __VA_ARGS__)"
                % (name, name))
    out = ["\n" + line + "\n"]
    for form in forms:
        head = "#define SHOAL_GENERIC_%s_%d(%s)" % (name, len(form.params), ", ".join(form.params))
        out.append(macro(head, generic_body(form, types)))
    return "".join(out)


GENERIC_HELPERS = (
    "/* SHOAL_GENERIC_DISPATCH(prefix_, args...) expands to prefix_N(args...) for N arguments. */\n"
    "#ifndef SHOAL_GENERIC_DISPATCH\n"
    "#define SHOAL_GENERIC_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, n, ...) n\n"
    "#define SHOAL_GENERIC_NARG(...) SHOAL_GENERIC_NARG_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)\n"
    "#define SHOAL_GENERIC_CAT_(a, b) a##b\n"
    "#define SHOAL_GENERIC_CAT(a, b) SHOAL_GENERIC_CAT_(a, b)\n"
    "#define SHOAL_GENERIC_DISPATCH(prefix, ...) \\\n"
    "    SHOAL_GENERIC_CAT(prefix, SHOAL_GENERIC_NARG(__VA_ARGS__))(__VA_ARGS__)\n"
    "#endif\n")


def unvolatile_macro():
    """SHOAL_GENERIC_UNVOLATILE(p): p with volatile cast away from the pointed-to
    type, for the point-to-point types; any other p unchanged."""
    lines = ["    _Generic((p),"]
    lines += ["        volatile %s *: (%s *)(p)," % (t.ctype, t.ctype) for t in generic_types(SYNC)]
    lines.append("        default: (p))")
    return ("/* SHOAL_GENERIC_UNVOLATILE(p): p with volatile cast away (the wait/test forms accept "
            "volatile\n * ivars and call the same typed function). */\n"
            + macro("#define SHOAL_GENERIC_UNVOLATILE(p)", lines))


def render_generic_header(guard, summary, sections):
    out = [banner(summary), "#ifndef %s\n#define %s\n\n" % (guard, guard),
           "#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n\n",
           GENERIC_HELPERS]
    for title, prelude, families in sections:
        out.append("\n/* %s */\n" % title)
        if prelude:
            out.append("\n" + prelude)
        for forms, types in families:
            out.append(render_generic(forms, types))
    out.append("\n#endif /* C11 and not C++ */\n\n#endif /* %s */\n" % guard)
    return "".join(out)


_GENERIC_NOTE = ("the forms with a ctx are told apart by their argument count. Only the distinct C types "
                 "are listed: int32_t and the other typedefs are one of them. Not in C++ nor before C11.")


def generic_header():
    return render_generic_header(
        "SHOAL_GENERIC_GEN_H",
        paragraph("C11 type-generic names: shmem_put(dest, source, nelems, pe) picks shmem_TYPENAME_put "
                  "from the type of dest, shmem_put(ctx, dest, ...) picks shmem_ctx_TYPENAME_put, and so on; "
                  + _GENERIC_NOTE + " The wait/test names also take volatile ivars."),
        [("RMA.", "", generic_rma()),
         ("Point-to-point synchronisation.", unvolatile_macro(), generic_sync())])


def generic_amo_header():
    return render_generic_header(
        "SHOAL_GENERIC_AMO_GEN_H",
        paragraph("C11 type-generic AMO names: shmem_atomic_fetch_add(dest, value, pe) picks "
                  "shmem_TYPENAME_atomic_fetch_add from the type of dest (of fetch for the _nbi forms, of "
                  "source for fetch), shmem_atomic_fetch_add(ctx, dest, value, pe) its ctx form; "
                  + _GENERIC_NOTE + " The bitwise names also list int32_t and int64_t: no other type of "
                  "their list is signed."),
        [("Atomic memory operations.", "", generic_amo()),
         ("Deprecated (OpenSHMEM 1.4) names, no ctx forms.", "", generic_amo_deprecated())])


def generic_signal_header():
    return render_generic_header(
        "SHOAL_GENERIC_SIGNAL_GEN_H",
        paragraph("C11 type-generic put with signal: shmem_put_signal(dest, source, nelems, sig_addr, "
                  "signal, sig_op, pe) picks shmem_TYPENAME_put_signal from the type of dest; "
                  + _GENERIC_NOTE),
        [("Put with signal.", "", generic_rma(SIGNAL_OPS))])


def generic_coll_header():
    return render_generic_header(
        "SHOAL_GENERIC_COLL_GEN_H",
        paragraph("C11 type-generic collectives: shmem_sum_reduce(team, dest, source, nreduce) picks "
                  "shmem_TYPENAME_sum_reduce from the type of dest, shmem_broadcast(team, dest, source, "
                  "nelems, PE_root) shmem_TYPENAME_broadcast, and so on. Only the distinct C types are "
                  "listed: int32_t and the other typedefs are one of them; the bitwise reductions also list "
                  "int8_t (signed char is not of their types). Not in C++ nor before C11."),
        [("Team reductions.", "", generic_reduce()),
         ("Team data collectives.", "", generic_coll())])
