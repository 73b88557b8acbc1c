/* Atomics on one element of a symmetric array: int32, int64, uint32 and
 * uint64 for every operation; float32 and float64 for fetch, set and swap. */
#include "core.h"

enum amo_op {
    AMO_FETCH, AMO_SET, AMO_SWAP, AMO_COMPARE_SWAP, AMO_FETCH_ADD, AMO_ADD, AMO_INC, AMO_FETCH_INC,
    AMO_FETCH_AND, AMO_AND, AMO_FETCH_OR, AMO_OR, AMO_FETCH_XOR, AMO_XOR,
};

static const char *const amo_names[] = {
    "shoal.atomic_fetch", "shoal.atomic_set", "shoal.atomic_swap", "shoal.atomic_compare_swap",
    "shoal.atomic_fetch_add", "shoal.atomic_add", "shoal.atomic_inc", "shoal.atomic_fetch_inc",
    "shoal.atomic_fetch_and", "shoal.atomic_and", "shoal.atomic_fetch_or", "shoal.atomic_or",
    "shoal.atomic_fetch_xor", "shoal.atomic_xor",
};

/* How many values (after dest) each operation takes. */
static int amo_values(enum amo_op op)
{
    switch (op) {
    case AMO_FETCH: case AMO_INC: case AMO_FETCH_INC: return 0;
    case AMO_COMPARE_SWAP: return 2;
    default: return 1;
    }
}

static int amo_returns(enum amo_op op)
{
    switch (op) {
    case AMO_SET: case AMO_ADD: case AMO_INC: case AMO_AND: case AMO_OR: case AMO_XOR: return 0;
    default: return 1;
    }
}

/* A Python int as an element of the given width, range-checked. */
static int int_value(const char *call, PyObject *obj, int is_signed, int bits, unsigned long long *out)
{
    if (is_signed) {
        long long v = PyLong_AsLongLong(obj);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (bits == 32 && (v < INT32_MIN || v > INT32_MAX)) goto range;
        *out = (unsigned long long)v;
    } else {
        if (PyLong_Check(obj) && _PyLong_Sign(obj) < 0) goto range;
        unsigned long long v = PyLong_AsUnsignedLongLong(obj);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        if (bits == 32 && v > UINT32_MAX) goto range;
        *out = v;
    }
    return 0;
range:
    PyErr_Format(py_err_base, "%s: value %R does not fit a%s %d-bit element", call, obj, is_signed ? "n int" : " uint",
                 bits);
    return -1;
}

/* One integer type: every operation through its typed libshoal call. */
#define AMO_INT(NAME, T, IS_SIGNED, BITS, TO_PY)                                                                   \
    static PyObject *amo_##NAME(enum amo_op op, shmem_ctx_t ctx, T *e, PyObject *a, PyObject *b, int pe)         \
    {                                                                                                            \
        const char *call = amo_names[op];                                                                        \
        unsigned long long va = 0, vb = 0;                                                                       \
        if (a && int_value(call, a, IS_SIGNED, BITS, &va) != 0) return NULL;                                     \
        if (b && int_value(call, b, IS_SIGNED, BITS, &vb) != 0) return NULL;                                     \
        T x = (T)va, y = (T)vb, r = 0;                                                                           \
        switch (op) {                                                                                            \
        case AMO_FETCH: r = shmem_ctx_##NAME##_atomic_fetch(ctx, e, pe); break;                                  \
        case AMO_SET: shmem_ctx_##NAME##_atomic_set(ctx, e, x, pe); break;                                      \
        case AMO_SWAP: r = shmem_ctx_##NAME##_atomic_swap(ctx, e, x, pe); break;                                 \
        case AMO_COMPARE_SWAP: r = shmem_ctx_##NAME##_atomic_compare_swap(ctx, e, x, y, pe); break;              \
        case AMO_FETCH_ADD: r = shmem_ctx_##NAME##_atomic_fetch_add(ctx, e, x, pe); break;                       \
        case AMO_ADD: shmem_ctx_##NAME##_atomic_add(ctx, e, x, pe); break;                                      \
        case AMO_INC: shmem_ctx_##NAME##_atomic_inc(ctx, e, pe); break;                                         \
        case AMO_FETCH_INC: r = shmem_ctx_##NAME##_atomic_fetch_inc(ctx, e, pe); break;                          \
        case AMO_FETCH_AND: r = shmem_ctx_##NAME##_atomic_fetch_and(ctx, e, x, pe); break;                       \
        case AMO_AND: shmem_ctx_##NAME##_atomic_and(ctx, e, x, pe); break;                                      \
        case AMO_FETCH_OR: r = shmem_ctx_##NAME##_atomic_fetch_or(ctx, e, x, pe); break;                         \
        case AMO_OR: shmem_ctx_##NAME##_atomic_or(ctx, e, x, pe); break;                                        \
        case AMO_FETCH_XOR: r = shmem_ctx_##NAME##_atomic_fetch_xor(ctx, e, x, pe); break;                       \
        case AMO_XOR: shmem_ctx_##NAME##_atomic_xor(ctx, e, x, pe); break;                                      \
        }                                                                                                        \
        if (!amo_returns(op)) Py_RETURN_NONE;                                                                    \
        return TO_PY(r);                                                                                         \
    }

AMO_INT(int32, int32_t, 1, 32, PyLong_FromLongLong)
AMO_INT(int64, int64_t, 1, 64, PyLong_FromLongLong)
AMO_INT(uint32, uint32_t, 0, 32, PyLong_FromUnsignedLongLong)
AMO_INT(uint64, uint64_t, 0, 64, PyLong_FromUnsignedLongLong)

#define AMO_FLOAT(NAME, T)                                                                                       \
    static PyObject *amo_##NAME(enum amo_op op, shmem_ctx_t ctx, T *e, PyObject *a, int pe)                      \
    {                                                                                                            \
        double v = 0;                                                                                            \
        if (a) {                                                                                                 \
            v = PyFloat_AsDouble(a);                                                                             \
            if (v == -1.0 && PyErr_Occurred()) return NULL;                                                      \
        }                                                                                                        \
        T r = 0;                                                                                                 \
        switch (op) {                                                                                            \
        case AMO_FETCH: r = shmem_ctx_##NAME##_atomic_fetch(ctx, e, pe); break;                                  \
        case AMO_SET: shmem_ctx_##NAME##_atomic_set(ctx, e, (T)v, pe); Py_RETURN_NONE;                          \
        default: r = shmem_ctx_##NAME##_atomic_swap(ctx, e, (T)v, pe); break;                                    \
        }                                                                                                        \
        return PyFloat_FromDouble((double)r);                                                                    \
    }

AMO_FLOAT(float, float)
AMO_FLOAT(double, double)

static PyObject *amo(enum amo_op op, PyObject *args, PyObject *kwargs)
{
    const char *call = amo_names[op];
    int nvalues = amo_values(op);
    static char *kw0[] = {"dest", "pe", "index", "ctx", NULL};
    static char *kw1[] = {"dest", "value", "pe", "index", "ctx", NULL};
    static char *kw2[] = {"dest", "cond", "value", "pe", "index", "ctx", NULL};
    PyObject *obj, *a = NULL, *b = NULL, *ctx_obj = Py_None;
    long pe;
    Py_ssize_t index = 0;
    int ok;
    if (nvalues == 0)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "Ol|nO", kw0, &obj, &pe, &index, &ctx_obj);
    else if (nvalues == 1)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "OOl|nO", kw1, &obj, &a, &pe, &index, &ctx_obj);
    else
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "OOOl|nO", kw2, &obj, &a, &b, &pe, &index, &ctx_obj);
    if (!ok) return NULL;
    shmem_ctx_t ctx;
    if (py_check_ready(call) != 0 || py_ctx_from(ctx_obj, &ctx) != 0) return NULL;
    struct py_arg d;
    void *elem;
    if (py_get_array(call, "dest", obj, 1, 1, &d) != 0) return NULL;
    PyObject *result = NULL;
    int n_pes = shmem_n_pes();
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_team_t team;
        if (shmem_ctx_get_team(ctx, &team) == 0 && team != SHMEM_TEAM_INVALID) n_pes = shmem_team_n_pes(team);
    }
    if (py_check_index(call, &d, index, &elem) != 0 || py_check_pe(call, pe, n_pes) != 0) goto out;
    int is_float = d.dtype == DT_FLOAT32 || d.dtype == DT_FLOAT64;
    if (is_float && op != AMO_FETCH && op != AMO_SET && op != AMO_SWAP) {
        PyErr_Format(py_err_dtype, "%s: %s elements take only atomic_fetch, atomic_set and atomic_swap", call,
                     py_dtype_name(d.dtype));
        goto out;
    }
    switch (d.dtype) {
    case DT_INT32: result = amo_int32(op, ctx, elem, a, b, (int)pe); break;
    case DT_INT64: result = amo_int64(op, ctx, elem, a, b, (int)pe); break;
    case DT_UINT32: result = amo_uint32(op, ctx, elem, a, b, (int)pe); break;
    case DT_UINT64: result = amo_uint64(op, ctx, elem, a, b, (int)pe); break;
    case DT_FLOAT32: result = amo_float(op, ctx, elem, a, (int)pe); break;
    case DT_FLOAT64: result = amo_double(op, ctx, elem, a, (int)pe); break;
    default:
        PyErr_Format(py_err_dtype, "%s: atomics take int32, int64, uint32, uint64 (or float32/float64 for "
                     "fetch, set, swap) elements, not %s", call, py_dtype_name(d.dtype));
    }
out:
    py_release(&d);
    return result;
}

#define AMO_ENTRY(NAME, OP, DOC)                                                                                  \
    static PyObject *py_atomic_##NAME(PyObject *self, PyObject *args, PyObject *kwargs)                          \
    {                                                                                                            \
        (void)self;                                                                                              \
        return amo(OP, args, kwargs);                                                                            \
    }
AMO_ENTRY(fetch, AMO_FETCH, "")
AMO_ENTRY(set, AMO_SET, "")
AMO_ENTRY(swap, AMO_SWAP, "")
AMO_ENTRY(compare_swap, AMO_COMPARE_SWAP, "")
AMO_ENTRY(fetch_add, AMO_FETCH_ADD, "")
AMO_ENTRY(add, AMO_ADD, "")
AMO_ENTRY(inc, AMO_INC, "")
AMO_ENTRY(fetch_inc, AMO_FETCH_INC, "")
AMO_ENTRY(fetch_and, AMO_FETCH_AND, "")
AMO_ENTRY(and, AMO_AND, "")
AMO_ENTRY(fetch_or, AMO_FETCH_OR, "")
AMO_ENTRY(or, AMO_OR, "")
AMO_ENTRY(fetch_xor, AMO_FETCH_XOR, "")
AMO_ENTRY(xor, AMO_XOR, "")

#define AMO_DEF(NAME, SIG) \
    {"atomic_" #NAME, (PyCFunction)(void (*)(void))py_atomic_##NAME, METH_VARARGS | METH_KEYWORDS, SIG}
PyMethodDef py_amo_methods[] = {
    AMO_DEF(fetch, "atomic_fetch(dest, pe, index=0, ctx=None) -> value"),
    AMO_DEF(set, "atomic_set(dest, value, pe, index=0, ctx=None)"),
    AMO_DEF(swap, "atomic_swap(dest, value, pe, index=0, ctx=None) -> old"),
    AMO_DEF(compare_swap, "atomic_compare_swap(dest, cond, value, pe, index=0, ctx=None) -> old"),
    AMO_DEF(fetch_add, "atomic_fetch_add(dest, value, pe, index=0, ctx=None) -> old"),
    AMO_DEF(add, "atomic_add(dest, value, pe, index=0, ctx=None)"),
    AMO_DEF(inc, "atomic_inc(dest, pe, index=0, ctx=None)"),
    AMO_DEF(fetch_inc, "atomic_fetch_inc(dest, pe, index=0, ctx=None) -> old"),
    AMO_DEF(fetch_and, "atomic_fetch_and(dest, value, pe, index=0, ctx=None) -> old"),
    AMO_DEF(and, "atomic_and(dest, value, pe, index=0, ctx=None)"),
    AMO_DEF(fetch_or, "atomic_fetch_or(dest, value, pe, index=0, ctx=None) -> old"),
    AMO_DEF(or, "atomic_or(dest, value, pe, index=0, ctx=None)"),
    AMO_DEF(fetch_xor, "atomic_fetch_xor(dest, value, pe, index=0, ctx=None) -> old"),
    AMO_DEF(xor, "atomic_xor(dest, value, pe, index=0, ctx=None)"),
    {NULL, NULL, 0, NULL},
};
