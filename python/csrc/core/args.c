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

int py_get_array(const char *call, const char *what, PyObject *obj, int writable, int symmetric,
                 struct py_arg *out)
{
    out->held = 0;
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
    if (!PyBuffer_IsContiguous(&out->view, 'C')) {
        PyErr_Format(py_err_contiguous,
                     "%s: %s is not contiguous (strides do not follow its shape); pass a contiguous array, "
                     "e.g. numpy.ascontiguousarray(a) for a source",
                     call, what);
        py_release(out);
        return -1;
    }
    out->dtype = dtype_of(out->view.format, out->view.itemsize);
    if (symmetric) {
        const char *base = out->view.buf;
        int me = shmem_my_pe();
        size_t len = (size_t)out->view.len;
        if (!shmem_addr_accessible(base, me) || (len > 0 && !shmem_addr_accessible(base + len - 1, me))) {
            PyErr_Format(py_err_symmetric,
                         "%s: %s (%zu bytes at %p) is not on the symmetric heap; allocate it with "
                         "shoal.zeros/shoal.empty",
                         call, what, len, (const void *)base);
            py_release(out);
            return -1;
        }
    }
    return 0;
}

int py_check_pe(const char *call, long pe, int n_pes)
{
    if (pe >= 0 && pe < n_pes) return 0;
    PyErr_Format(py_err_pe, "%s: PE %ld is out of range (0..%d)", call, pe, n_pes - 1);
    return -1;
}

int py_check_same(const char *call, const struct py_arg *a, const struct py_arg *b)
{
    const char *fa = native_format(a->view.format), *fb = native_format(b->view.format);
    if (fa == NULL || fb == NULL || strcmp(fa, fb) != 0 || a->view.itemsize != b->view.itemsize) {
        PyErr_Format(py_err_dtype, "%s: element types differ (%s, itemsize %zd against %s, itemsize %zd)", call,
                     a->view.format ? a->view.format : "B", a->view.itemsize, b->view.format ? b->view.format : "B",
                     b->view.itemsize);
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
