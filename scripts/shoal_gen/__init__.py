"""Shoal's API generator, as modules of one concern each; scripts/gen_api.py is the entry point.

  types.py      the type table: every TYPENAME, its C type and the families it belongs to
  render.py     shared C rendering: function records, signatures, line wrapping, headers, .c files
  rma.py        put/get/p/g (rma_gen.h) and iput/iget/ibput/ibget (rma_strided_gen.h), typed and sized
  sync.py       wait_until/test and their all/any/some/vector forms, the deprecated wait (wait_gen.h)
  amo.py        atomic memory operations, ctx, non-blocking and deprecated names (amo_gen.h)
  signal.py     put with signal, typed, sized and mem (signal_gen.h)
  coll.py       team reductions, scans, data collectives, active-set forms (coll_gen.h, reduce_gen.h)
  catalog.py    which families go into which src/api/*_gen.c file
  generic.py    the C11 _Generic macros (generic*_gen.h)
  names.py      tests/names/names_*_gen.c, the programs that reference every name
  profiling.py  pshmem.h and shoal/pshmem_*_gen.h, the profiling interface's pshmem_ declarations
  reconcile.py  --names: the generated and hand-written names against a list of standard names

Python 3 standard library only.
"""
