"""tests/names/names_*_gen.c: programs that reference every generated name (typed,
sized, mem and C11 generic) and the hand-written lock, signal, team, context and
barrier names from a program that includes shmem.h, inside a branch never taken
(argc > 1000), so they compile, link and run without communicating."""

import re

from .catalog import all_functions, functions_of
from .generic import (generic_amo, generic_amo_deprecated, generic_coll, generic_reduce, generic_rma,
                      generic_sync)
from .render import Fn, banner, param_names, wrap_call, wrap_comment
from .signal import SIGNAL_OPS
from .types import TYPES

# Team, context and barrier names written by hand in shmem.h: each with the
# arguments names_team_gen.c passes (variables of NAMES_VARS).
HAND_TEAM = [
    ("shmem_team_my_pe", "int", "SHMEM_TEAM_WORLD"),
    ("shmem_team_n_pes", "int", "SHMEM_TEAM_WORLD"),
    ("shmem_team_get_config", "int", "SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &v_config"),
    ("shmem_team_translate_pe", "int", "SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_SHARED"),
    ("shmem_team_split_strided", "int", "SHMEM_TEAM_WORLD, 0, 1, 1, &v_config, 0, &v_team"),
    ("shmem_team_split_2d", "int", "SHMEM_TEAM_WORLD, 1, &v_config, 0, &v_team, &v_config, 0, &v_team"),
    ("shmem_team_destroy", "void", "v_team"),
    ("shmem_team_ptr", "void *", "SHMEM_TEAM_WORLD, v_long, 0"),
    ("shmem_team_sync", "int", "SHMEM_TEAM_WORLD"),
    ("shmem_team_create_ctx", "int", "SHMEM_TEAM_WORLD, 0, &v_ctx"),
    ("shmem_ctx_create", "int", "0, &v_ctx"),
    ("shmem_ctx_destroy", "void", "v_ctx"),
    ("shmem_ctx_get_team", "int", "v_ctx, &v_team"),
    ("shmem_ctx_session_start", "void", "v_ctx, SHMEM_CTX_SESSION_BATCH, &v_session, SHMEM_CTX_SESSION_TOTAL_OPS"),
    ("shmem_ctx_session_stop", "void", "v_ctx"),
    ("shmem_ctx_fence", "void", "v_ctx"),
    ("shmem_ctx_quiet", "void", "v_ctx"),
    ("shmem_ctx_pe_quiet", "void", "v_ctx, v_int, 1"),
    ("shmem_sync", "void", "0, 0, 1, v_psync"),
    ("shmem_barrier", "void", "0, 0, 1, v_psync"),
    ("shmem_sync_all", "void", ""),
    ("shmem_barrier_all", "void", ""),
]
# The C11 overloads of the hand-written names, by argument count (shmem.h):
# shmem_sync(team) beside the deprecated four-argument shmem_sync above.
HAND_TEAM_C11 = [
    ("shmem_sync", "int", "SHMEM_TEAM_WORLD"),
]

# Variables of the names programs other than the v_TYPENAME arrays, declared
# where referenced.
NAMES_VARS = [
    ("v_psync", "static long v_psync[SHMEM_SYNC_SIZE];"),
    ("v_team", "static shmem_team_t v_team;"),
    ("v_ctx", "static shmem_ctx_t v_ctx;"),
    ("v_config", "static shmem_team_config_t v_config;"),
    ("v_session", "static shmem_ctx_session_config_t v_session;"),
]


def hand_team_stmts(calls=HAND_TEAM):
    out = []
    for name, ret, args in calls:
        call = "%s(%s)" % (name, args)
        out.append(call + ";" if ret == "void" else
                   "n += (size_t)" + call + ";" if ret == "int" else "n += %s != NULL;" % call)
    return out


# Names written by hand in shmem.h (and implemented by hand) that the names
# tests reference all the same: each with the TYPENAME of its arguments.
HAND_WRITTEN = [
    (Fn("shmem_set_lock", "void", "long *lock", None), "long"),
    (Fn("shmem_clear_lock", "void", "long *lock", None), "long"),
    (Fn("shmem_test_lock", "int", "long *lock", None), "long"),
    (Fn("shmem_signal_fetch", "uint64_t", "const uint64_t *sig_addr", None), "uint64"),
    (Fn("shmem_signal_add", "void", "uint64_t *sig_addr, uint64_t signal, int pe", None), "uint64"),
    (Fn("shmem_signal_set", "void", "uint64_t *sig_addr, uint64_t signal, int pe", None), "uint64"),
    (Fn("shmem_ctx_signal_add", "void", "shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe", None),
     "uint64"),
    (Fn("shmem_ctx_signal_set", "void", "shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe", None),
     "uint64"),
    (Fn("shmem_signal_wait_until", "uint64_t", "uint64_t *sig_addr, int cmp, uint64_t cmp_value", None),
     "uint64"),
]


def call_args(fn, t):
    """Arguments of a suitable type for each parameter of fn."""
    var = "v_" + t.name if t is not None else "v_bytes"
    args = []
    for pname in param_names(fn.params):
        args.append({
            "ctx": "SHMEM_CTX_DEFAULT", "dest": var, "source": var, "ivar": var, "ivars": var,
            "cmp_values": var, "value": var + "[0]", "cmp_value": var + "[0]", "nelems": "1",
            "bsize": "1", "nblocks": "1", "dst": "1", "sst": "1", "pe": "0", "cmp": "SHMEM_CMP_EQ",
            "status": "status", "indices": "indices", "fetch": var, "cond": var + "[0]", "lock": var,
            "sig_addr": "v_uint64", "signal": "v_uint64[0]", "sig_op": "SHMEM_SIGNAL_SET",
            "team": "SHMEM_TEAM_WORLD", "nreduce": "1", "PE_root": "0", "PE_start": "0", "logPE_stride": "0",
            "PE_size": "1", "pWrk": var, "pSync": "v_psync",
        }[pname])
    return args


def call_stmt(fn_name, ret, args, t):
    call = "%s(%s)" % (fn_name, ", ".join(args))
    if ret == "void":
        return call + ";"
    if ret in ("int", "size_t"):
        return "n += (size_t)" + call + ";"
    return "v_%s[0] = %s;" % (t.name, call)  # a value of the type: store it back


def typed_stmts(fns):
    type_of = {t.name: t for t in TYPES}
    out = []
    for fn in fns:
        m = re.match(r"shmem_(?:ctx_)?([a-z0-9]+)_", fn.name)
        t = type_of.get(m.group(1)) if m else None  # None: sized and mem forms
        out.append(call_stmt(fn.name, fn.ret, call_args(fn, t), t))
    return out


def hand_stmts():
    type_of = {t.name: t for t in TYPES}
    return [call_stmt(fn.name, fn.ret, call_args(fn, type_of[tn]), type_of[tn]) for fn, tn in HAND_WRITTEN]


def generic_stmts(families):
    """Each distinct C type through each form, and through each qualified
    pointer the form accepts."""
    fns = all_functions()
    out = []
    for forms, types in families:
        for form in forms:
            for t in types:
                fn = fns[form.typed(t)]
                args = call_args(fn, t)
                name = "shmem_" + form.name
                out.append(call_stmt(name, fn.ret, args, t))
                for q in form.quals[1:]:
                    cargs = list(args)
                    cargs[form.select] = "(%s%s *)%s" % (q, t.ctype, args[form.select])
                    out.append(call_stmt(name, fn.ret, cargs, t))
    return out


def names_program(label, summary, typed, generic_families, c11_hand=()):
    """One names test program: typed calls, then the generic calls (C11):
    those of generic_families, then c11_hand (HAND_TEAM_C11 entries)."""
    generic = generic_stmts(generic_families) + hand_team_stmts(c11_hand)
    generic_names = sorted({"shmem_" + forms[0].name for forms, _ in generic_families} |
                           {name for name, _, _ in c11_hand})
    stmts = typed + generic
    out = [banner(summary + "\n * The calls sit in a branch never taken (argc > 1000), so the program "
                  "compiles, links against\n * libshoal and runs without communicating."),
           "#include <shmem.h>\n\n#include <stdio.h>\n\n"]
    text = "\n".join(stmts)
    for t in TYPES:
        if re.search(r"\bv_%s\b" % t.name, text):
            out.append("static %s v_%s[4];\n" % (t.ctype, t.name))
    if re.search(r"\bv_bytes\b", text):
        out.append("static unsigned char v_bytes[4 * 16];\n")
    for var, decl in NAMES_VARS:
        if re.search(r"\b%s\b" % var, text):
            out.append(decl + "\n")
    if re.search(r"\bstatus\b", text):
        out.append("static int status[4];\n")
    if re.search(r"\bindices\b", text):
        out.append("static size_t indices[4];\n")
    out.append("static size_t n;\n")
    calls = []
    if typed:
        out.append("\n/* %d functions. */\nstatic void typed_names(void)\n{\n" % len(typed))
        out += [wrap_call("    " + s) + "\n" for s in typed]
        out.append("}\n")
        calls.append("typed_names();")
    if generic:
        out.append("\n#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n")
        out.append(wrap_comment("/* %d generic calls: %s. */\nstatic void generic_names(void)\n{\n"
                                % (len(generic), ", ".join(generic_names))))
        out += [wrap_call("    " + s) + "\n" for s in generic]
        out.append("}\n#else\nstatic void generic_names(void) {}\n#endif\n")
        calls.append("generic_names();")
    out.append("\nint main(int argc, char **argv)\n{\n    (void)argv;\n    if (argc > 1000) {\n")
    out += ["        %s\n" % c for c in calls]
    out.append("    }\n")
    out.append('    printf("%s: %d functions, %d generic calls referenced\\n");\n'
               % (label, len(typed), len(generic)))
    out.append("    return n == 0 ? 0 : 1;\n}\n")
    return "".join(out)


def names_tests():
    return {
        "tests/names/names_rma_gen.c": names_program(
            "names_rma", "Every typed, sized and mem RMA function referenced from a program that includes "
            "shmem.h.", typed_stmts(functions_of("api/rma_api.h")), []),
        "tests/names/names_sync_gen.c": names_program(
            "names_sync", "Every typed point-to-point synchronisation function referenced from a program "
            "that includes\n * shmem.h.", typed_stmts(functions_of("api/wait_api.h")), []),
        "tests/names/names_generic_gen.c": names_program(
            "names_generic", "Every C11 generic form of RMA and point-to-point synchronisation (volatile "
            "ivars included)\n * referenced from a program that includes shmem.h.", [],
            generic_rma() + generic_sync()),
        "tests/names/names_amo_gen.c": names_program(
            "names_amo", "Every typed, ctx, non-blocking and deprecated AMO function referenced from a "
            "program that\n * includes shmem.h.", typed_stmts(functions_of("api/amo_api.h")), []),
        "tests/names/names_amo_generic_gen.c": names_program(
            "names_amo_generic", "Every C11 generic AMO form, the deprecated ones included, referenced from "
            "a program that\n * includes shmem.h.", [], generic_amo() + generic_amo_deprecated()),
        "tests/names/names_signal_gen.c": names_program(
            "names_signal", "Every typed, sized and mem put with signal and its C11 generic forms, and the "
            "hand-written\n * signal and lock calls (signal_fetch, signal_add, signal_set, "
            "signal_wait_until, set_lock, ...),\n * referenced from a program that includes shmem.h.",
            typed_stmts(functions_of("api/signal_api.h")) + hand_stmts(), generic_rma(SIGNAL_OPS)),
        "tests/names/names_coll_gen.c": names_program(
            "names_coll", "Every team reduction, sum scan, team data collective (typed and mem) and "
            "deprecated active-set\n * collective (broadcast32, ..., TYPENAME_OP_to_all) referenced from a "
            "program that includes shmem.h.", typed_stmts(functions_of("api/coll_api.h")), []),
        "tests/names/names_coll_generic_gen.c": names_program(
            "names_coll_generic", "Every C11 generic reduction and data collective referenced from a program "
            "that includes\n * shmem.h.", [], generic_reduce() + generic_coll()),
        "tests/names/names_team_gen.c": names_program(
            "names_team", "The hand-written team, context and barrier calls (team_my_pe, team_split_strided, "
            "ctx_create,\n * ctx_get_team, team_sync, sync, barrier, barrier_all, ...) referenced from a "
            "program that includes\n * shmem.h, and the C11 one-argument shmem_sync(team).", hand_team_stmts(), [],
            HAND_TEAM_C11),
    }
