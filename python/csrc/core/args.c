/* Argument checks shared by every call: arrays (contiguous, symmetric,
 * element type), PEs, contexts and teams. Each failure raises one
 * shoal.Error subclass whose message names the call, the value and the
 * limit; libshoal is never reached with bad input. */
#include "core.h"

#include <string.h>

PyObject *py_err_base, *py_err_pe, *py_err_symmetric, *py_err_contiguous, *py_err_dtype, *py_err_size,
    *py_err_state, *py_err_index;

int py_initialized;

static const char *const dtype_names[DT_COUNT] = {
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
};

const char *py_dtype_name(enum py_dtype dtype)
{
    return dtype >= 0 && dtype < DT_COUNT ? dtype_names[dtype] : "other";
}

int py_check_ready(const char *call)
{
    if (py_initialized == 1) return 0;
    PyErr_Format(py_err_state, "%s: Shoal is %s (call shoal.init() first)", call,
                 py_initialized == 0 ? "not initialized" : "finalized");
    return -1;
}

/* The struct-module format without a native byte-order prefix; NULL when
 * the bytes are not in this machine's order. */
static const char *native_format(const char *fmt)
{
    if (fmt == NULL) return "B";
    if (fmt[0] == '@' || fmt[0] == '=') return fmt + 1;
#if PY_LITTLE_ENDIAN
    if (fmt[0] == '<') return fmt + 1;
    if (fmt[0] == '>' || fmt[0] == '!') return NULL;
#else
    if (fmt[0] == '>' || fmt[0] == '!') return fmt + 1;
    if (fmt[0] == '<') return NULL;
#endif
    return fmt;
}

static enum py_dtype dtype_of(const char *fmt, Py_ssize_t itemsize)
{
    fmt = native_format(fmt);
    if (fmt == NULL || fmt[0] == '\0' || fmt[1] != '\0') return DT_OTHER;
    int is_signed;
    switch (fmt[0]) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': is_signed = 1; break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': is_signed = 0; break;
    case 'f': return itemsize == 4 ? DT_FLOAT32 : DT_OTHER;
    case 'd': return itemsize == 8 ? DT_FLOAT64 : DT_OTHER;
    default: return DT_OTHER;
    }
    switch (itemsize) {
    case 1: return is_signed ? DT_INT8 : DT_UINT8;
    case 2: return is_signed ? DT_INT16 : DT_UINT16;
    case 4: return is_signed ? DT_INT32 : DT_UINT32;
    case 8: return is_signed ? DT_INT64 : DT_UINT64;
    default: return DT_OTHER;
    }
}

void py_release(struct py_arg *arg)
{
    if (arg->held) PyBuffer_Release(&arg->view);
    arg->held = 0;
}

static enum py_dtype dtype_of_descr(const PyArray_Descr *d)
{
    if (!PyArray_ISNBO(d->byteorder)) return DT_OTHER;
    switch (d->kind) {
    case 'i':
        return d->elsize == 1 ? DT_INT8 : d->elsize == 2 ? DT_INT16 : d->elsize == 4 ? DT_INT32
             : d->elsize == 8 ? DT_INT64 : DT_OTHER;
    case 'u':
        return d->elsize == 1 ? DT_UINT8 : d->elsize == 2 ? DT_UINT16 : d->elsize == 4 ? DT_UINT32
             : d->elsize == 8 ? DT_UINT64 : DT_OTHER;
    case 'f': return d->elsize == 4 ? DT_FLOAT32 : d->elsize == 8 ? DT_FLOAT64 : DT_OTHER;
    default: return DT_OTHER;
    }
}

static int check_symmetric(const char *call, const char *what, struct py_arg *out)
{
    const char *base = out->view.buf;
    int me = shmem_my_pe();
    size_t len = (size_t)out->view.len;
    if (shmem_addr_accessible(base, me) && (len == 0 || shmem_addr_accessible(base + len - 1, me))) return 0;
    PyErr_Format(py_err_symmetric,
                 "%s: %s (%zu bytes at %p) is not on the symmetric heap; allocate it with shoal.zeros/shoal.empty",
                 call, what, len, (const void *)base);
    py_release(out);
    return -1;
}

static int not_contiguous(const char *call, const char *what, struct py_arg *out)
{
    PyErr_Format(py_err_contiguous,
                 "%s: %s is not contiguous (strides do not follow its shape); pass a contiguous array, "
                 "e.g. numpy.ascontiguousarray(a) for a source",
                 call, what);
    py_release(out);
    return -1;
}

int py_get_array(const char *call, const char *what, PyObject *obj, int writable, int symmetric,
                 struct py_arg *out)
{
    out->held = 0;
    out->descr = NULL;
    if (PyArray_Check(obj)) {
        /* The fast path: the array's fields, no buffer export. */
        PyArrayObject *a = (PyArrayObject *)obj;
        if (writable && !PyArray_ISWRITEABLE(a)) {
            PyErr_Format(py_err_base, "%s: %s is read-only", call, what);
            return -1;
        }
        out->descr = PyArray_DESCR(a);
        out->view.buf = PyArray_DATA(a);
        out->view.itemsize = PyArray_ITEMSIZE(a);
        out->view.len = PyArray_NBYTES(a);
        out->view.format = NULL;
        out->dtype = dtype_of_descr(out->descr);
        if (!PyArray_IS_C_CONTIGUOUS(a)) return not_contiguous(call, what, out);
        return symmetric ? check_symmetric(call, what, out) : 0;
    }
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(py_err_dtype, "%s: %s must be an array (numpy or another buffer), not %.80s", call, what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &out->view, flags) != 0) {
        PyErr_Clear();
        PyErr_Format(writable ? (PyObject *)py_err_base : py_err_contiguous, "%s: %s %s", call, what,
                     writable ? "is read-only" : "cannot be exported as one buffer");
        return -1;
    }
    out->held = 1;
    if (!PyBuffer_IsContiguous(&out->view, 'C')) return not_contiguous(call, what, out);
    out->dtype = dtype_of(out->view.format, out->view.itemsize);
    return symmetric ? check_symmetric(call, what, out) : 0;
}

int py_check_pe(const char *call, long pe, int n_pes)
{
    if (pe >= 0 && pe < n_pes) return 0;
    PyErr_Format(py_err_pe, "%s: PE %ld is out of range (0..%d)", call, pe, n_pes - 1);
    return -1;
}

/* The struct-module format of an argument: the buffer's, or a numpy
 * dtype's one-letter code (with '<'/'>' when not in native order). */
static const char *format_of(const struct py_arg *a, char buf[3])
{
    if (a->descr == NULL) return a->view.format ? a->view.format : "B";
    int native = PyArray_ISNBO(a->descr->byteorder);
    buf[0] = native ? a->descr->type : (PY_LITTLE_ENDIAN ? '>' : '<');
    buf[1] = native ? '\0' : a->descr->type;
    buf[2] = '\0';
    return buf;
}

int py_check_same(const char *call, const struct py_arg *a, const struct py_arg *b)
{
    int same;
    char fa_buf[3], fb_buf[3];
    const char *fa = format_of(a, fa_buf), *fb = format_of(b, fb_buf);
    if (a->descr && b->descr) {
        same = a->descr == b->descr || PyArray_EquivTypes(a->descr, b->descr);
    } else if (a->dtype != DT_OTHER || b->dtype != DT_OTHER) {
        same = a->dtype == b->dtype; /* 'l' and 'q' are both int64 here */
    } else {
        const char *na = native_format(fa), *nb = native_format(fb);
        same = na != NULL && nb != NULL && strcmp(na, nb) == 0 && a->view.itemsize == b->view.itemsize;
    }
    if (!same) {
        PyErr_Format(py_err_dtype, "%s: element types differ (%s, itemsize %zd against %s, itemsize %zd)", call, fa,
                     a->view.itemsize, fb, b->view.itemsize);
        return -1;
    }
    if (a->view.len != b->view.len) {
        PyErr_Format(py_err_size, "%s: sizes differ (%zd bytes against %zd bytes)", call, a->view.len, b->view.len);
        return -1;
    }
    return 0;
}

int py_check_index(const char *call, const struct py_arg *arg, Py_ssize_t index, void **elem)
{
    Py_ssize_t n = arg->view.itemsize > 0 ? arg->view.len / arg->view.itemsize : 0;
    if (index < 0) index += n;
    if (index < 0 || index >= n) {
        PyErr_Format(py_err_index, "%s: index %zd is out of range for %zd elements", call, index, n);
        return -1;
    }
    *elem = (char *)arg->view.buf + index * arg->view.itemsize;
    return 0;
}

/* Ctx and Team objects (shoal/_objects.py) carry their C handle in
 * _handle, None once destroyed. */
static int handle_of(const char *call, const char *kind, PyObject *obj, void **out)
{
    PyObject *h = PyObject_GetAttrString(obj, "_handle");
    if (h == NULL) {
        PyErr_Clear();
        PyErr_Format(py_err_dtype, "%s: expected a shoal.%s, not %.80s", call, kind, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (h == Py_None) {
        Py_DECREF(h);
        PyErr_Format(py_err_state, "%s: this shoal.%s was destroyed", call, kind);
        return -1;
    }
    *out = PyLong_AsVoidPtr(h);
    Py_DECREF(h);
    return PyErr_Occurred() ? -1 : 0;
}

int py_ctx_from(PyObject *obj, shmem_ctx_t *ctx)
{
    if (obj == NULL || obj == Py_None) {
        *ctx = SHMEM_CTX_DEFAULT;
        return 0;
    }
    void *h;
    if (handle_of("ctx", "Ctx", obj, &h) != 0) return -1;
    *ctx = (shmem_ctx_t)h;
    return 0;
}

int py_team_from(const char *call, PyObject *obj, shmem_team_t *team)
{
    if (obj == NULL || obj == Py_None) {
        *team = SHMEM_TEAM_WORLD;
        return 0;
    }
    void *h;
    if (handle_of(call, "Team", obj, &h) != 0) return -1;
    *team = (shmem_team_t)h;
    return 0;
}
