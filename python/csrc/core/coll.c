/* Collectives on arrays over a team: broadcast, collect/fcollect, alltoall,
 * reductions and sum scans. Both arrays must be symmetric, contiguous and
 * of one element type; sizes are checked against the team's size first. */
#include "core.h"

#include <string.h>

typedef int (*reduce_fn)(shmem_team_t team, void *dest, const void *source, size_t nelems);

enum reduce_op { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR, OP_INSCAN, OP_EXSCAN, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"sum", "prod", "min", "max", "and", "or", "xor", "inscan", "exscan"};

/* Typed libshoal reductions behind one signature. */
#define RED(NAME, T, OP, SUFFIX)                                                                  \
    static int red_##NAME##_##OP(shmem_team_t team, void *dest, const void *source, size_t n)     \
    {                                                                                             \
        return shmem_##NAME##_##OP##_##SUFFIX(team, (T *)dest, (const T *)source, n);             \
    }
#define RED_BITS(NAME, T) RED(NAME, T, and, reduce) RED(NAME, T, or, reduce) RED(NAME, T, xor, reduce)
/* The scans are sum scans: named inscan/exscan in the table. */
#define RED_ARITH(NAME, T)                                                                        \
    RED(NAME, T, sum, reduce) RED(NAME, T, prod, reduce) RED(NAME, T, min, reduce)                \
    RED(NAME, T, max, reduce)                                                                     \
    static int red_##NAME##_inscan(shmem_team_t team, void *dest, const void *source, size_t n)   \
    {                                                                                             \
        return shmem_##NAME##_sum_inscan(team, (T *)dest, (const T *)source, n);                  \
    }                                                                                             \
    static int red_##NAME##_exscan(shmem_team_t team, void *dest, const void *source, size_t n)   \
    {                                                                                             \
        return shmem_##NAME##_sum_exscan(team, (T *)dest, (const T *)source, n);                  \
    }
#define RED_INT(NAME, T) RED_ARITH(NAME, T) RED_BITS(NAME, T)

RED_INT(int8, int8_t)
RED_INT(int16, int16_t)
RED_INT(int32, int32_t)
RED_INT(int64, int64_t)
RED_INT(uint8, uint8_t)
RED_INT(uint16, uint16_t)
RED_INT(uint32, uint32_t)
RED_INT(uint64, uint64_t)
RED_ARITH(float, float)
RED_ARITH(double, double)

#define ROW_INT(NAME)                                                                                   \
    {red_##NAME##_sum, red_##NAME##_prod, red_##NAME##_min, red_##NAME##_max, red_##NAME##_and,        \
     red_##NAME##_or, red_##NAME##_xor, red_##NAME##_inscan, red_##NAME##_exscan}
#define ROW_FLOAT(NAME)                                                                                 \
    {red_##NAME##_sum, red_##NAME##_prod, red_##NAME##_min, red_##NAME##_max, NULL, NULL, NULL,        \
     red_##NAME##_inscan, red_##NAME##_exscan}

static const reduce_fn reduce_table[DT_COUNT][OP_COUNT] = {
    [DT_INT8] = ROW_INT(int8),     [DT_INT16] = ROW_INT(int16),   [DT_INT32] = ROW_INT(int32),
    [DT_INT64] = ROW_INT(int64),   [DT_UINT8] = ROW_INT(uint8),   [DT_UINT16] = ROW_INT(uint16),
    [DT_UINT32] = ROW_INT(uint32), [DT_UINT64] = ROW_INT(uint64), [DT_FLOAT32] = ROW_FLOAT(float),
    [DT_FLOAT64] = ROW_FLOAT(double),
};

/* team (None: SHMEM_TEAM_WORLD), dest, source: both symmetric, one type. */
static int coll_args(const char *call, PyObject *team_obj, PyObject *dest_obj, PyObject *source_obj,
                     shmem_team_t *team, int *n_pes, struct py_arg *dest, struct py_arg *source)
{
    if (py_check_ready(call) != 0 || py_team_from(call, team_obj, team) != 0) return -1;
    *n_pes = shmem_team_n_pes(*team);
    if (*n_pes <= 0) {
        PyErr_Format(py_err_state, "%s: this PE is not a member of the team", call);
        return -1;
    }
    if (py_get_array(call, "dest", dest_obj, 1, 1, dest) != 0) return -1;
    if (py_get_array(call, "source", source_obj, 0, 1, source) != 0) {
        py_release(dest);
        return -1;
    }
    return 0;
}

static int same_type(const char *call, const struct py_arg *dest, const struct py_arg *source)
{
    if (dest->view.itemsize == source->view.itemsize && dest->dtype == source->dtype &&
        (dest->view.format == NULL) == (source->view.format == NULL) &&
        (dest->view.format == NULL || strcmp(dest->view.format, source->view.format) == 0))
        return 0;
    PyErr_Format(py_err_dtype, "%s: dest and source element types differ (%s against %s)", call,
                 dest->view.format ? dest->view.format : "B", source->view.format ? source->view.format : "B");
    return -1;
}

static PyObject *done(int rc, const char *call, struct py_arg *dest, struct py_arg *source)
{
    py_release(dest);
    py_release(source);
    if (rc != 0) {
        PyErr_Format(py_err_base, "%s: libshoal returned %d", call, rc);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_broadcast(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "shoal.broadcast";
    PyObject *t, *d, *s;
    long root;
    if (!PyArg_ParseTuple(args, "OOOl", &t, &d, &s, &root)) return NULL;
    shmem_team_t team;
    int n_pes;
    struct py_arg dest, source;
    if (coll_args(call, t, d, s, &team, &n_pes, &dest, &source) != 0) return NULL;
    if (py_check_same(call, &dest, &source) != 0 || py_check_pe(call, root, n_pes) != 0)
        return py_release(&dest), py_release(&source), NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = shmem_broadcastmem(team, dest.view.buf, source.view.buf, (size_t)source.view.len, (int)root);
    Py_END_ALLOW_THREADS
    return done(rc, call, &dest, &source);
}

/* fcollect: dest holds n_pes times source. collect: the sizes were
 * gathered and checked by shoal.collect before this call. */
static PyObject *gather(int fixed, PyObject *args)
{
    const char *call = fixed ? "shoal.fcollect" : "shoal.collect";
    PyObject *t, *d, *s;
    if (!PyArg_ParseTuple(args, "OOO", &t, &d, &s)) return NULL;
    shmem_team_t team;
    int n_pes;
    struct py_arg dest, source;
    if (coll_args(call, t, d, s, &team, &n_pes, &dest, &source) != 0) return NULL;
    if (same_type(call, &dest, &source) != 0) return py_release(&dest), py_release(&source), NULL;
    if (fixed && dest.view.len != source.view.len * n_pes) {
        PyErr_Format(py_err_size, "%s: dest has %zd bytes, not %d PEs x %zd bytes of source", call, dest.view.len,
                     n_pes, source.view.len);
        return py_release(&dest), py_release(&source), NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (fixed)
        rc = shmem_fcollectmem(team, dest.view.buf, source.view.buf, (size_t)source.view.len);
    else
        rc = shmem_collectmem(team, dest.view.buf, source.view.buf, (size_t)source.view.len);
    Py_END_ALLOW_THREADS
    return done(rc, call, &dest, &source);
}

static PyObject *py_fcollect(PyObject *self, PyObject *args)
{
    (void)self;
    return gather(1, args);
}

static PyObject *py_collect(PyObject *self, PyObject *args)
{
    (void)self;
    return gather(0, args);
}

static PyObject *py_alltoall(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "shoal.alltoall";
    PyObject *t, *d, *s;
    if (!PyArg_ParseTuple(args, "OOO", &t, &d, &s)) return NULL;
    shmem_team_t team;
    int n_pes;
    struct py_arg dest, source;
    if (coll_args(call, t, d, s, &team, &n_pes, &dest, &source) != 0) return NULL;
    if (py_check_same(call, &dest, &source) != 0) return py_release(&dest), py_release(&source), NULL;
    Py_ssize_t elems = source.view.len / (source.view.itemsize > 0 ? source.view.itemsize : 1);
    if (elems % n_pes != 0) {
        PyErr_Format(py_err_size, "%s: %zd elements do not split evenly over %d PEs", call, elems, n_pes);
        return py_release(&dest), py_release(&source), NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = shmem_alltoallmem(team, dest.view.buf, source.view.buf, (size_t)source.view.len / (size_t)n_pes);
    Py_END_ALLOW_THREADS
    return done(rc, call, &dest, &source);
}

/* reduce(team, dest, source, op): op is sum, prod, min, max, and, or, xor,
 * inscan or exscan (the last two: sum scans). */
static PyObject *py_reduce(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "shoal.reduce";
    PyObject *t, *d, *s;
    const char *op_name;
    if (!PyArg_ParseTuple(args, "OOOs", &t, &d, &s, &op_name)) return NULL;
    int op = -1;
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(op_name, op_names[i]) == 0) op = i;
    if (op < 0) {
        PyErr_Format(py_err_base, "%s: op '%s' is not one of sum, prod, min, max, and, or, xor", call, op_name);
        return NULL;
    }
    shmem_team_t team;
    int n_pes;
    struct py_arg dest, source;
    if (coll_args(call, t, d, s, &team, &n_pes, &dest, &source) != 0) return NULL;
    if (py_check_same(call, &dest, &source) != 0) return py_release(&dest), py_release(&source), NULL;
    reduce_fn fn = dest.dtype == DT_OTHER ? NULL : reduce_table[dest.dtype][op];
    if (fn == NULL) {
        PyErr_Format(py_err_dtype, "%s: no '%s' on %s elements (ints: every op; floats: sum, prod, min, max)", call,
                     op_names[op], py_dtype_name(dest.dtype));
        return py_release(&dest), py_release(&source), NULL;
    }
    size_t n = (size_t)(dest.view.len / dest.view.itemsize);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fn(team, dest.view.buf, source.view.buf, n);
    Py_END_ALLOW_THREADS
    return done(rc, call, &dest, &source);
}

PyMethodDef py_coll_methods[] = {
    {"broadcast", py_broadcast, METH_VARARGS, "broadcast(team, dest, source, root)"},
    {"fcollect", py_fcollect, METH_VARARGS, "fcollect(team, dest, source)"},
    {"collect", py_collect, METH_VARARGS, "collect(team, dest, source): sizes checked by the caller"},
    {"alltoall", py_alltoall, METH_VARARGS, "alltoall(team, dest, source)"},
    {"reduce", py_reduce, METH_VARARGS, "reduce(team, dest, source, op)"},
    {NULL, NULL, 0, NULL},
};
