"""Point-to-point synchronisation: wait_until and test with their all/any/some and
vector forms, and the deprecated shmem_TYPENAME_wait (include/shoal/wait_gen.h),
defined in src/api/wait_gen.c and test_gen.c as calls of src/api/wait_api.h."""

from collections import namedtuple

from .render import Fn, render_header, subst
from .types import SYNC, WAIT, types_of

SyncOp = namedtuple("SyncOp", "name ret params body")

_ONE = "T *ivar, int cmp, T cmp_value"
_ALL = "T *ivars, size_t nelems, const int *status, int cmp, T cmp_value"
_SOME = "T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T cmp_value"
_ALL_V = "T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values"
_SOME_V = "T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T *cmp_values"
_SET = "ivars, nelems, status, KIND, cmp, &cmp_value, NULL, CALL"
_SET_V = "ivars, nelems, status, KIND, cmp, NULL, cmp_values, CALL"
_SSET = "ivars, nelems, indices, status, KIND, cmp, &cmp_value, NULL, CALL"
_SSET_V = "ivars, nelems, indices, status, KIND, cmp, NULL, cmp_values, CALL"


def _sync_ops(verb, ret_all):
    """wait_until or test, in the order of the standard's tables."""
    one = "wait_until" if verb == "wait" else "test"
    ret_one = "void" if verb == "wait" else "int"
    r_one = "" if ret_one == "void" else "return "
    r_all = "" if ret_all == "void" else "return "
    fn = "shoal_api_" + one
    return [
        SyncOp(one, ret_one, _ONE, [r_one + fn + "(ivar, KIND, cmp, &cmp_value, CALL);"]),
        SyncOp(one + "_all", ret_all, _ALL, [r_all + fn + "_all(" + _SET + ");"]),
        SyncOp(one + "_any", "size_t", _ALL, ["return " + fn + "_any(" + _SET + ");"]),
        SyncOp(one + "_some", "size_t", _SOME, ["return " + fn + "_some(" + _SSET + ");"]),
        SyncOp(one + "_all_vector", ret_all, _ALL_V, [r_all + fn + "_all(" + _SET_V + ");"]),
        SyncOp(one + "_any_vector", "size_t", _ALL_V, ["return " + fn + "_any(" + _SET_V + ");"]),
        SyncOp(one + "_some_vector", "size_t", _SOME_V, ["return " + fn + "_some(" + _SSET_V + ");"]),
    ]


WAIT_OPS = _sync_ops("wait", "void")
TEST_OPS = _sync_ops("test", "int")
# Deprecated: shmem_TYPENAME_wait(ivar, cmp_value) waits until *ivar != cmp_value.
DEPRECATED_WAIT = SyncOp("wait", "void", "T *ivar, T cmp_value",
                         ["shoal_api_wait_until(ivar, KIND, SHMEM_CMP_NE, &cmp_value, CALL);"])


def kind_of(t):
    return "SHOAL_KIND(sizeof(%s), %d)" % (t.ctype, 1 if t.signed else 0)


def sync_name(t, op):
    return "shmem_" + t.name + "_" + op.name


def sync_fn(t, op):
    name = sync_name(t, op)
    return Fn(name, subst(op.ret, t.ctype), subst(op.params, t.ctype),
              [subst(line, t.ctype, call='"' + name + '"', kind=kind_of(t)) for line in op.body])


def sync_family(ops, deprecated=False):
    out = []
    for op in ops:
        for t in types_of(SYNC):
            out.append(sync_fn(t, op))
    if deprecated:
        for t in types_of(WAIT):
            out.append(sync_fn(t, DEPRECATED_WAIT))
    return out


SOURCES = [
    ("src/api/wait_gen.c", "Point-to-point waits: wait_until and its all/any/some/vector forms, "
     "and the deprecated wait.", "api/wait_api.h", lambda: sync_family(WAIT_OPS, deprecated=True)),
    ("src/api/test_gen.c", "Point-to-point tests: test and its all/any/some/vector forms.",
     "api/wait_api.h", lambda: sync_family(TEST_OPS)),
]


def wait_header():
    groups = [("Wait until a symmetric variable (or some of an array of them) satisfies cmp.",
               sync_family(WAIT_OPS, deprecated=False)),
              ("Deprecated: wait until *ivar != cmp_value.",
               [sync_fn(t, DEPRECATED_WAIT) for t in types_of(WAIT)]),
              ("Test without waiting.", sync_family(TEST_OPS))]
    return render_header("SHOAL_WAIT_GEN_H", "Point-to-point synchronisation: wait_until, test, their "
                         "all/any/some/vector forms, and\n * the deprecated wait.",
                         ["stddef.h", "stdint.h"], groups)
