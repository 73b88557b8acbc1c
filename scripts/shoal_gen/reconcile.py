"""--names: reconciles the generated and hand-written names with a list of standard
names (one per line): by family, what is generated, written by hand and referenced
by the names tests, declared by hand only, or declared nowhere; with a library, the
declared functions it does not define. Generates no file."""

import os
import re
import subprocess
import textwrap

from .amo import AMO_OPS, DEPRECATED_AMO
from .catalog import all_functions
from .coll import COLL_OPS, REDUCE_OPS
from .generic import all_generic_families
from .names import HAND_TEAM, HAND_WRITTEN
from .render import WIDTH
from .rma import RMA_OPS
from .signal import SIGNAL_OPS
from .sync import DEPRECATED_WAIT, TEST_OPS, WAIT_OPS
from .types import TYPES


def family_patterns():
    """Regular expressions of the families, in the order category() tries them."""
    verbs = [op.base + op.suffix for op in list(RMA_OPS.values()) + list(SIGNAL_OPS.values())]
    verbs += [op.name for op in WAIT_OPS + TEST_OPS] + [DEPRECATED_WAIT.name]
    typenames = "|".join(t.name for t in TYPES)
    verbs_re = "|".join(sorted(set(verbs), key=len, reverse=True))
    amo_re = "|".join(["atomic_" + k for k in AMO_OPS] + [old for old, _ in DEPRECATED_AMO])
    red_re = "|".join(op for op, _ in REDUCE_OPS)
    coll_re = "|".join(COLL_OPS)
    return [
        ("collective", re.compile(r"^shmem_((%s)_)?((%s)(32|64|mem)?|(%s)_(reduce|to_all)|"
                                  r"sum_(inscan|exscan))$" % (typenames, coll_re, red_re))),
        ("team/ctx/barrier", re.compile(r"^shmem_(team_[a-z0-9_]+|ctx_(create|destroy|get_team|"
                                        r"session_start|session_stop|fence|quiet|pe_quiet)|"
                                        r"sync|sync_all|barrier|barrier_all)$")),
        ("lock", re.compile(r"^shmem_[a-z_]*lock$")),
        ("signal", re.compile(r"^shmem_[a-z0-9_]*signal[a-z0-9_]*$")),
        ("AMO", re.compile(r"^shmem_(ctx_)?((%s)_)?(%s)$" % (typenames, amo_re))),
        ("RMA/sync", re.compile(r"^shmem_(ctx_)?((%s)_)?(%s)$|^shmem_(ctx_)?(put|get|iput|iget|ibput|ibget)"
                                r"(8|16|32|64|128|mem)(_nbi)?$" % (typenames, verbs_re))),
    ]


CATEGORIES = ["RMA/sync", "AMO", "signal", "lock", "collective", "team/ctx/barrier", "other"]


def category(name, patterns):
    for cat, pattern in patterns:
        if pattern.match(name):
            return cat
    return "other"


def declared_names(root):
    """shmem_* names that the public headers under root declare or define as macros."""
    names = set()
    for d in ("include", os.path.join("include", "shoal")):
        for fname in sorted(os.listdir(os.path.join(root, d))):
            if not fname.endswith(".h"):
                continue
            with open(os.path.join(root, d, fname), encoding="utf-8") as f:
                text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", f.read(), flags=re.S)
            names |= set(re.findall(r"\b(shmem_\w+)\s*\(", text))
            names |= set(re.findall(r"#\s*define\s+(shmem_\w+)", text))
    return names


def defined_names(lib):
    """shmem_* functions a library (shared or static) defines, from nm."""
    dyn = ["-D"] if ".so" in os.path.basename(lib) else []
    out = subprocess.run(["nm"] + dyn + ["--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    return {m.group(1) for m in re.finditer(r"^\S*\s+[TWtw]\s+(shmem_\w+)$", out, re.M)}


def show(label, names):
    names = sorted(names)
    text = "  %s (%d): %s" % (label, len(names), " ".join(names) or "none")
    print(textwrap.fill(text, WIDTH, subsequent_indent="    ", break_on_hyphens=False))


def reconcile(root, names_path, lib=None):
    """Every name of the list by family: generated here, written by hand and
    referenced by the names tests, declared by hand only, or nowhere; with
    lib, also the functions the library does not define. 1 when a name of
    the list is declared nowhere."""
    with open(names_path) as f:
        standard = {line.strip() for line in f if line.strip()}
    typed = set(all_functions())
    generic = {"shmem_" + forms[0].name for forms, _ in all_generic_families()}
    hand = {fn.name for fn, _ in HAND_WRITTEN} | {name for name, _, _ in HAND_TEAM}
    ours = typed | generic
    declared = declared_names(root)
    defined = defined_names(lib) if lib else None
    patterns = family_patterns()
    print("generated %d typed/sized/mem names and %d generic names; %d hand-written names referenced"
          % (len(typed), len(generic), len(hand)))
    for cat in CATEGORIES:
        listed = {n for n in standard if category(n, patterns) == cat}
        mine = {n for n in ours | hand if category(n, patterns) == cat}
        print("%s: %d in the list, %d generated, %d hand-written and referenced by the names tests"
              % (cat, len(listed), len(listed & ours), len(listed & hand)))
        if listed - ours - hand:
            show("declared by hand, not referenced by the names tests", (listed - ours - hand) & declared)
        show("in the list, declared nowhere", listed - ours - declared)
        show("hand-written names referenced but not declared", (mine & hand) - declared)
        show("generated or referenced, not in the list", mine - standard)
        if defined is not None:
            show("in the list, a function not defined by " + os.path.basename(lib),
                 (listed & declared) - generic - defined)
    return 1 if standard - ours - declared else 0
