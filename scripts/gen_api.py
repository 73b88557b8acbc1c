#!/usr/bin/env python3
"""Generate Shoal's typed OpenSHMEM API families from one type table.

docs/design.md, principle 3: one byte-based core, generated typed wrappers. The
package scripts/shoal_gen/ holds the type table (types.py) and the shape of
each family (rma.py, sync.py, amo.py, signal.py, coll.py, generic.py,
names.py); this script writes or checks what they render, plain C that a
reader can grep and a debugger can step into:

  include/shoal/rma_gen.h       declarations of the contiguous RMA families (put, get, p, g, nbi)
  include/shoal/rma_strided_gen.h
                                declarations of the strided RMA families (iput, iget, ibput, ibget)
  include/shoal/wait_gen.h      declarations of the point-to-point sync families
  include/shoal/amo_gen.h       declarations of the AMO families (typed, ctx, nbi, deprecated)
  include/shoal/signal_gen.h    declarations of the put-with-signal families
  include/shoal/coll_gen.h      declarations of the team data collectives and their
                                deprecated active-set forms (broadcast32, ...)
  include/shoal/reduce_gen.h    declarations of the team reductions, 1.6 sum scans and the
                                deprecated TYPENAME_OP_to_all
  include/shoal/generic*_gen.h  C11 _Generic macros (shmem_put, shmem_wait_until,
                                shmem_atomic_fetch_add, shmem_put_signal, shmem_sum_reduce,
                                shmem_broadcast, ...)
  include/pshmem.h, include/shoal/pshmem_*_gen.h
                                the profiling interface: pshmem_NAME for every function
                                shmem.h declares (by hand or through the headers above)
  src/api/*_gen.c               one short definition per name, calling src/api/rma_api.h,
                                wait_api.h, amo_api.h, signal_api.h or coll_api.h; each
                                defines pshmem_NAME with shmem_NAME its weak alias
  tests/names/names_*_gen.c     programs that reference every generated name (and the
                                hand-written lock, signal, team, context and barrier names)

Usage:
  python3 scripts/gen_api.py                rewrite the generated files
  python3 scripts/gen_api.py --check        exit 1 if any generated file is out of date
  python3 scripts/gen_api.py --names FILE [--lib LIB]
                                            reconcile with a list of standard names (one per
                                            line), e.g. the C names of the specification's index:
                                            by family, what is generated, hand-written, or
                                            declared nowhere; with LIB (libshoal.so), the
                                            declared functions it does not define

Python 3 standard library only.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from shoal_gen import amo, coll, generic, rma, signal, sync  # noqa: E402
from shoal_gen.catalog import SOURCES  # noqa: E402
from shoal_gen.names import names_tests  # noqa: E402
from shoal_gen.profiling import pshmem_headers  # noqa: E402
from shoal_gen.reconcile import reconcile  # noqa: E402
from shoal_gen.render import render_source  # noqa: E402


def generated_files():
    """Every generated file, by path relative to the repository root, and its text."""
    files = {
        "include/shoal/rma_gen.h": rma.rma_header(),
        "include/shoal/rma_strided_gen.h": rma.rma_strided_header(),
        "include/shoal/wait_gen.h": sync.wait_header(),
        "include/shoal/amo_gen.h": amo.amo_header(),
        "include/shoal/signal_gen.h": signal.signal_header(),
        "include/shoal/generic_gen.h": generic.generic_header(),
        "include/shoal/generic_amo_gen.h": generic.generic_amo_header(),
        "include/shoal/generic_signal_gen.h": generic.generic_signal_header(),
        "include/shoal/coll_gen.h": coll.coll_header(),
        "include/shoal/reduce_gen.h": coll.reduce_header(),
        "include/shoal/generic_coll_gen.h": generic.generic_coll_header(),
    }
    files.update(pshmem_headers(ROOT, files))
    for path, summary, header, make in SOURCES:
        files[path] = render_source(summary, header, make())
    files.update(names_tests())
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is out of date")
    ap.add_argument("--names", metavar="FILE", help="compare with a list of standard names")
    ap.add_argument("--lib", metavar="LIB", help="with --names: also list the functions LIB (libshoal.so "
                    "or .a) does not define (needs nm)")
    args = ap.parse_args()
    if args.names:
        return reconcile(ROOT, args.names, args.lib)
    stale = []
    for rel, text in generated_files().items():
        path = os.path.join(ROOT, rel)
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if args.check:
            stale.append(rel)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote " + rel)
    if stale:
        print("out of date (run python3 scripts/gen_api.py): " + " ".join(stale))
        return 1
    if args.check:
        print("generated files are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
