"""The profiling interface's declarations (docs/design.md, "Profiling interface"):
include/pshmem.h and the include/shoal/pshmem_*_gen.h it includes. Each function
that shmem.h and the generated headers declare as shmem_NAME is declared again as
pshmem_NAME: Shoal defines the pshmem_ name and makes the shmem_ one its weak
alias, so a tool that defines shmem_NAME calls pshmem_NAME to reach Shoal. The
hand-written declarations are read from include/shmem.h and the generated ones
follow the headers that declare their shmem_ names, so the two sets cannot
disagree."""

import os
import re

from .catalog import all_functions
from .render import Fn, paragraph, profiled, render_header

# The generated headers of declarations (not the generic macros), by file name
# under include/shoal/; each gets a pshmem_ twin of the same name.
DECLARATION_HEADERS = ["rma_gen.h", "rma_strided_gen.h", "wait_gen.h", "amo_gen.h", "signal_gen.h",
                       "coll_gen.h", "reduce_gen.h"]

# One statement at file scope that declares a function: return type, shmem_
# name, parameters.
_DECL = re.compile(r"^((?:const\s+)?[A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*[\s*]+)(shmem_\w+)\s*\(([^()]*)\)$")


def hand_declared(root):
    """The functions include/shmem.h declares itself (not through the generated
    headers), in its order, as Fn records without bodies."""
    with open(os.path.join(root, "include", "shmem.h"), encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)  # directives, continued ones too
    text = re.sub(r'extern\s+"C"\s*\{', " ", text)
    text = re.sub(r"\{[^{}]*\}", ";", text)  # inline bodies and struct members
    fns = []
    for stmt in text.split(";"):
        m = _DECL.match(" ".join(stmt.split()))
        if not m or m.group(1).split()[0] in ("typedef", "extern", "static"):
            continue
        ret = re.sub(r"\s*\*", " *", m.group(1).strip())
        fns.append(Fn(m.group(2), ret, m.group(3), None))
    return fns


def pshmem_name(header):
    return "shoal/pshmem_" + header


def pshmem_headers(root, files):
    """include/pshmem.h and one include/shoal/pshmem_X for each generated header
    X of DECLARATION_HEADERS, whose text files holds by path."""
    generated = all_functions()
    out = {}
    for header in DECLARATION_HEADERS:
        names = re.findall(r"\b(shmem_\w+)\(", files["include/shoal/" + header])
        fns = [profiled(generated[n]) for n in dict.fromkeys(names) if n in generated]
        guard = "SHOAL_PSHMEM_" + header.replace(".", "_").upper()
        summary = "The pshmem_ twins of the functions shoal/%s declares (pshmem.h includes this)." % header
        out["include/" + pshmem_name(header)] = render_header(guard, summary, ["shmem.h"],
                                                              [("The functions of shoal/%s." % header, fns)])
    summary = paragraph(
        "The OpenSHMEM profiling interface: pshmem_NAME for every function shmem.h declares as "
        "shmem_NAME. Shoal defines the pshmem_ names; each shmem_ name is a weak alias of its twin, so a "
        "tool defines shmem_NAME, does its work and calls pshmem_NAME. The C11 generic macros (shmem_put, "
        "...) have no pshmem_ form: they resolve to typed shmem_ names, which a tool interposes. The "
        "shmemx_ extensions have no twins.")
    includes = "".join("\n#include <%s>" % pshmem_name(h) for h in DECLARATION_HEADERS)
    out["include/pshmem.h"] = render_header(
        "PSHMEM_H", summary, ["shmem.h"],
        [("Declared by hand in shmem.h.", [profiled(fn) for fn in hand_declared(root)])],
        ["/* The generated families. */" + includes])
    return out
