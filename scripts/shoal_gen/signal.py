"""Put with signal: the typed, sized and mem put_signal and put_signal_nbi and their
ctx forms (include/shoal/signal_gen.h), defined in src/api/signal*_gen.c as calls of
src/api/signal_api.h. The shapes are the RMA ones (rma.Op)."""

from .render import render_header
from .rma import Op, rma_sized, rma_typed

# The same shapes as RMA over the standard RMA types, sized and mem forms
# included. The data go first, then the signal (src/api/signal_api.h).
_SIG = "T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe"
_SIG_BODY = ["shoal_api_put_signal(CTX, dest, source, nelems, ELEM, sig_addr, signal, sig_op, pe, CALL);"]
SIGNAL_OPS = {
    "put_signal": Op("put", "_signal", "void", _SIG, _SIG_BODY, False),
    "put_signal_nbi": Op("put", "_signal_nbi", "void", _SIG, _SIG_BODY, False),
}
SIGNAL_MEM_OPS = list(SIGNAL_OPS)


def signal_typed():
    return rma_typed(list(SIGNAL_OPS), SIGNAL_OPS)


def signal_sized():
    return rma_sized(SIGNAL_OPS, SIGNAL_MEM_OPS)


SOURCES = [
    ("src/api/signal_gen.c", "Typed puts with signal: put_signal, put_signal_nbi.",
     "api/signal_api.h", signal_typed),
    ("src/api/signal_sized_gen.c", "Sized (8..128 bits) and mem (bytes) puts with signal.",
     "api/signal_api.h", signal_sized),
]


def signal_header():
    groups = [("Put with signal: the data, then *sig_addr set to or added with signal (sig_op is "
               "SHMEM_SIGNAL_SET\n * or SHMEM_SIGNAL_ADD) on the same pe.", signal_typed()),
              ("Sized forms move bits/8-byte elements; mem forms move bytes.", signal_sized())]
    return render_header("SHOAL_SIGNAL_GEN_H", "Typed, sized and mem puts with signal: put_signal, "
                         "put_signal_nbi and their ctx forms.", ["stddef.h", "stdint.h"], groups,
                         ["/* C11 generic names: shmem_put_signal, shmem_put_signal_nbi. */\n"
                          "#include <shoal/generic_signal_gen.h>"])
