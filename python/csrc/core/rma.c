/* RMA on arrays: put/get (blocking and _nbi), put with signal, the waits,
 * fence, quiet and the barriers. put and get are the per-call fast path:
 * vectorcall, two buffer exports, the checks, one libshoal call. */
#include "core.h"

/* The PE count a context's PE numbers refer to (its team's size). */
static int pes_of_ctx(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_DEFAULT) return shmem_n_pes();
    shmem_team_t team;
    if (shmem_ctx_get_team(ctx, &team) != 0 || team == SHMEM_TEAM_INVALID) return shmem_n_pes();
    return shmem_team_n_pes(team);
}

/* (dest, source, pe[, ctx]) with ctx also by keyword. */
static int parse_rma(const char *call, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     PyObject **dest, PyObject **source, long *pe, shmem_ctx_t *ctx)
{
    PyObject *ctx_obj = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw < 3 || nargs + nkw > 4 || nargs < 3) {
        PyErr_Format(PyExc_TypeError, "%s(dest, source, pe, ctx=None) takes 3 or 4 arguments", call);
        return -1;
    }
    if (nargs == 4) ctx_obj = args[3];
    if (nkw == 1) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "ctx") != 0) {
            PyErr_Format(PyExc_TypeError, "%s: the only keyword is ctx", call);
            return -1;
        }
        ctx_obj = args[nargs];
    }
    *dest = args[0];
    *source = args[1];
    *pe = PyLong_AsLong(args[2]);
    if (*pe == -1 && PyErr_Occurred()) return -1;
    if (py_check_ready(call) != 0) return -1;
    return py_ctx_from(ctx_obj, ctx);
}

enum rma_kind { RMA_PUT, RMA_GET, RMA_PUT_NBI, RMA_GET_NBI };

static PyObject *rma(enum rma_kind kind, const char *call, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    PyObject *dest_obj, *source_obj;
    long pe;
    shmem_ctx_t ctx;
    if (parse_rma(call, args, nargs, kwnames, &dest_obj, &source_obj, &pe, &ctx) != 0) return NULL;
    int is_put = kind == RMA_PUT || kind == RMA_PUT_NBI;
    struct py_arg dest, source;
    /* The remote side must be symmetric; the local side may be any array. */
    if (py_get_array(call, "dest", dest_obj, !is_put, is_put, &dest) != 0) return NULL;
    if (py_get_array(call, "source", source_obj, 0, !is_put, &source) != 0) {
        py_release(&dest);
        return NULL;
    }
    PyObject *result = NULL;
    if (py_check_same(call, &dest, &source) != 0 || py_check_pe(call, pe, pes_of_ctx(ctx)) != 0) goto out;
    void *d = dest.view.buf;
    const void *s = source.view.buf;
    size_t n = (size_t)dest.view.len;
    if (n >= PY_NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        switch (kind) {
        case RMA_PUT: shmem_ctx_putmem(ctx, d, s, n, (int)pe); break;
        case RMA_GET: shmem_ctx_getmem(ctx, d, s, n, (int)pe); break;
        case RMA_PUT_NBI: shmem_ctx_putmem_nbi(ctx, d, s, n, (int)pe); break;
        case RMA_GET_NBI: shmem_ctx_getmem_nbi(ctx, d, s, n, (int)pe); break;
        }
        Py_END_ALLOW_THREADS
    } else {
        switch (kind) {
        case RMA_PUT: shmem_ctx_putmem(ctx, d, s, n, (int)pe); break;
        case RMA_GET: shmem_ctx_getmem(ctx, d, s, n, (int)pe); break;
        case RMA_PUT_NBI: shmem_ctx_putmem_nbi(ctx, d, s, n, (int)pe); break;
        case RMA_GET_NBI: shmem_ctx_getmem_nbi(ctx, d, s, n, (int)pe); break;
        }
    }
    result = Py_NewRef(Py_None);
out:
    py_release(&dest);
    py_release(&source);
    return result;
}

static PyObject *py_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return rma(RMA_PUT, "shoal.put", args, nargs, kwnames);
}

static PyObject *py_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return rma(RMA_GET, "shoal.get", args, nargs, kwnames);
}

static PyObject *py_put_nbi(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return rma(RMA_PUT_NBI, "shoal.put_nbi", args, nargs, kwnames);
}

static PyObject *py_get_nbi(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return rma(RMA_GET_NBI, "shoal.get_nbi", args, nargs, kwnames);
}

/* A uint64 element of a symmetric array: the signal word. */
static int signal_word(const char *call, PyObject *obj, Py_ssize_t index, struct py_arg *arg, uint64_t **word)
{
    if (py_get_array(call, "signal", obj, 1, 1, arg) != 0) return -1;
    if (arg->dtype != DT_UINT64) {
        PyErr_Format(py_err_dtype, "%s: the signal array must be uint64, not %s", call, py_dtype_name(arg->dtype));
        py_release(arg);
        return -1;
    }
    void *elem;
    if (py_check_index(call, arg, index, &elem) != 0) {
        py_release(arg);
        return -1;
    }
    *word = elem;
    return 0;
}

static int check_sig_op(const char *call, int sig_op)
{
    if (sig_op == SHMEM_SIGNAL_SET || sig_op == SHMEM_SIGNAL_ADD) return 0;
    PyErr_Format(py_err_base, "%s: sig_op %d is neither SIGNAL_SET (%d) nor SIGNAL_ADD (%d)", call, sig_op,
                 SHMEM_SIGNAL_SET, SHMEM_SIGNAL_ADD);
    return -1;
}

static int check_cmp(const char *call, int cmp)
{
    if (cmp >= SHMEM_CMP_EQ && cmp <= SHMEM_CMP_LE) return 0;
    PyErr_Format(py_err_base, "%s: cmp %d is not one of CMP_EQ..CMP_LE (0..5)", call, cmp);
    return -1;
}

static PyObject *put_signal(int nbi, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"dest", "source", "signal", "value", "sig_op", "pe", "index", "ctx", NULL};
    const char *call = nbi ? "shoal.put_signal_nbi" : "shoal.put_signal";
    PyObject *dest_obj, *source_obj, *sig_obj, *ctx_obj = Py_None;
    unsigned long long value;
    int sig_op;
    long pe;
    Py_ssize_t index = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOKil|nO", kwlist, &dest_obj, &source_obj, &sig_obj, &value,
                                     &sig_op, &pe, &index, &ctx_obj))
        return NULL;
    shmem_ctx_t ctx;
    if (py_check_ready(call) != 0 || py_ctx_from(ctx_obj, &ctx) != 0 || check_sig_op(call, sig_op) != 0) return NULL;
    struct py_arg dest, source, sig;
    uint64_t *word;
    if (py_get_array(call, "dest", dest_obj, 0, 1, &dest) != 0) return NULL;
    if (py_get_array(call, "source", source_obj, 0, 0, &source) != 0) {
        py_release(&dest);
        return NULL;
    }
    PyObject *result = NULL;
    if (signal_word(call, sig_obj, index, &sig, &word) != 0) goto out;
    if (py_check_same(call, &dest, &source) == 0 && py_check_pe(call, pe, pes_of_ctx(ctx)) == 0) {
        void *d = dest.view.buf;
        const void *s = source.view.buf;
        size_t n = (size_t)dest.view.len;
        Py_BEGIN_ALLOW_THREADS
        if (nbi)
            shmem_ctx_putmem_signal_nbi(ctx, d, s, n, word, value, sig_op, (int)pe);
        else
            shmem_ctx_putmem_signal(ctx, d, s, n, word, value, sig_op, (int)pe);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    py_release(&sig);
out:
    py_release(&dest);
    py_release(&source);
    return result;
}

static PyObject *py_put_signal(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return put_signal(0, args, kwargs);
}

static PyObject *py_put_signal_nbi(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return put_signal(1, args, kwargs);
}

/* signal_wait_until(signal, cmp, value, index=0) -> the value that satisfied it. */
static PyObject *py_signal_wait_until(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"signal", "cmp", "value", "index", NULL};
    const char *call = "shoal.signal_wait_until";
    PyObject *sig_obj;
    int cmp;
    unsigned long long value;
    Py_ssize_t index = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OiK|n", kwlist, &sig_obj, &cmp, &value, &index)) return NULL;
    if (py_check_ready(call) != 0 || check_cmp(call, cmp) != 0) return NULL;
    struct py_arg sig;
    uint64_t *word, got;
    if (signal_word(call, sig_obj, index, &sig, &word) != 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    got = shmem_signal_wait_until(word, cmp, value);
    Py_END_ALLOW_THREADS
    py_release(&sig);
    return PyLong_FromUnsignedLongLong(got);
}

static PyObject *py_signal_fetch(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"signal", "index", NULL};
    PyObject *sig_obj;
    Py_ssize_t index = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|n", kwlist, &sig_obj, &index)) return NULL;
    if (py_check_ready("shoal.signal_fetch") != 0) return NULL;
    struct py_arg sig;
    uint64_t *word;
    if (signal_word("shoal.signal_fetch", sig_obj, index, &sig, &word) != 0) return NULL;
    uint64_t got = shmem_signal_fetch(word);
    py_release(&sig);
    return PyLong_FromUnsignedLongLong(got);
}

/* wait_until / test on one element of a symmetric integer array. */
static PyObject *wait_or_test(int test, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"ivar", "cmp", "value", "index", NULL};
    const char *call = test ? "shoal.test" : "shoal.wait_until";
    PyObject *obj, *value_obj;
    int cmp;
    Py_ssize_t index = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OiO|n", kwlist, &obj, &cmp, &value_obj, &index)) return NULL;
    if (py_check_ready(call) != 0 || check_cmp(call, cmp) != 0) return NULL;
    struct py_arg a;
    void *elem;
    if (py_get_array(call, "ivar", obj, 1, 1, &a) != 0) return NULL;
    if (py_check_index(call, &a, index, &elem) != 0) {
        py_release(&a);
        return NULL;
    }
    long long sv = 0;
    unsigned long long uv = 0;
    int is_unsigned = a.dtype == DT_UINT32 || a.dtype == DT_UINT64;
    if (a.dtype != DT_INT32 && a.dtype != DT_INT64 && !is_unsigned) {
        PyErr_Format(py_err_dtype, "%s: ivar must be int32, int64, uint32 or uint64, not %s", call,
                     py_dtype_name(a.dtype));
        py_release(&a);
        return NULL;
    }
    if (is_unsigned)
        uv = PyLong_AsUnsignedLongLong(value_obj);
    else
        sv = PyLong_AsLongLong(value_obj);
    if (PyErr_Occurred()) {
        py_release(&a);
        return NULL;
    }
    int hit = 1;
    if (test) {
        switch (a.dtype) {
        case DT_INT32: hit = shmem_int32_test(elem, cmp, (int32_t)sv); break;
        case DT_INT64: hit = shmem_int64_test(elem, cmp, (int64_t)sv); break;
        case DT_UINT32: hit = shmem_uint32_test(elem, cmp, (uint32_t)uv); break;
        default: hit = shmem_uint64_test(elem, cmp, (uint64_t)uv); break;
        }
    } else {
        enum py_dtype dt = a.dtype;
        Py_BEGIN_ALLOW_THREADS
        switch (dt) {
        case DT_INT32: shmem_int32_wait_until(elem, cmp, (int32_t)sv); break;
        case DT_INT64: shmem_int64_wait_until(elem, cmp, (int64_t)sv); break;
        case DT_UINT32: shmem_uint32_wait_until(elem, cmp, (uint32_t)uv); break;
        default: shmem_uint64_wait_until(elem, cmp, (uint64_t)uv); break;
        }
        Py_END_ALLOW_THREADS
    }
    py_release(&a);
    if (test) return PyBool_FromLong(hit);
    Py_RETURN_NONE;
}

static PyObject *py_wait_until(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return wait_or_test(0, args, kwargs);
}

static PyObject *py_test(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return wait_or_test(1, args, kwargs);
}

/* fence/quiet on a context (None: the default one). */
static PyObject *order(int quiet, PyObject *args)
{
    PyObject *ctx_obj = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &ctx_obj)) return NULL;
    shmem_ctx_t ctx;
    if (py_check_ready(quiet ? "shoal.quiet" : "shoal.fence") != 0 || py_ctx_from(ctx_obj, &ctx) != 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    if (quiet)
        shmem_ctx_quiet(ctx);
    else
        shmem_ctx_fence(ctx);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_fence(PyObject *self, PyObject *args)
{
    (void)self;
    return order(0, args);
}

static PyObject *py_quiet(PyObject *self, PyObject *args)
{
    (void)self;
    return order(1, args);
}

static PyObject *py_barrier_all(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (py_check_ready("shoal.barrier_all") != 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    shmem_barrier_all();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_sync_all(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (py_check_ready("shoal.sync_all") != 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    shmem_sync_all();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)
#define VARKW (METH_VARARGS | METH_KEYWORDS)
PyMethodDef py_rma_methods[] = {
    {"put", (PyCFunction)(void (*)(void))py_put, FASTKW, "put(dest, source, pe, ctx=None)"},
    {"get", (PyCFunction)(void (*)(void))py_get, FASTKW, "get(dest, source, pe, ctx=None)"},
    {"put_nbi", (PyCFunction)(void (*)(void))py_put_nbi, FASTKW, "put_nbi(dest, source, pe, ctx=None)"},
    {"get_nbi", (PyCFunction)(void (*)(void))py_get_nbi, FASTKW, "get_nbi(dest, source, pe, ctx=None)"},
    {"put_signal", (PyCFunction)(void (*)(void))py_put_signal, VARKW,
     "put_signal(dest, source, signal, value, sig_op, pe, index=0, ctx=None)"},
    {"put_signal_nbi", (PyCFunction)(void (*)(void))py_put_signal_nbi, VARKW,
     "put_signal_nbi(dest, source, signal, value, sig_op, pe, index=0, ctx=None)"},
    {"signal_wait_until", (PyCFunction)(void (*)(void))py_signal_wait_until, VARKW,
     "signal_wait_until(signal, cmp, value, index=0) -> value"},
    {"signal_fetch", (PyCFunction)(void (*)(void))py_signal_fetch, VARKW, "signal_fetch(signal, index=0)"},
    {"wait_until", (PyCFunction)(void (*)(void))py_wait_until, VARKW, "wait_until(ivar, cmp, value, index=0)"},
    {"test", (PyCFunction)(void (*)(void))py_test, VARKW, "test(ivar, cmp, value, index=0) -> bool"},
    {"fence", py_fence, METH_VARARGS, "fence(ctx=None)"},
    {"quiet", py_quiet, METH_VARARGS, "quiet(ctx=None)"},
    {"barrier_all", py_barrier_all, METH_NOARGS, "shmem_barrier_all"},
    {"sync_all", py_sync_all, METH_NOARGS, "shmem_sync_all"},
    {NULL, NULL, 0, NULL},
};
