/* shoal._core: the CPython extension over libshoal's public C API.
 * Every argument is checked here, before libshoal is called, so bad input
 * raises a shoal.Error subclass instead of ending the job. */
#ifndef SHOAL_PY_CORE_H
#define SHOAL_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <shmem.h>
#include <stdint.h>

/* Element types the typed calls (atomics, waits, reductions) take. */
enum py_dtype {
    DT_INT8, DT_INT16, DT_INT32, DT_INT64,
    DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64,
    DT_FLOAT32, DT_FLOAT64,
    DT_COUNT,
    DT_OTHER = -1
};

/* Transfers at least this large run without the GIL. */
#define PY_NOGIL_BYTES ((size_t)64 * 1024)

/* The exception classes, set from Python by _core._set_errors. */
extern PyObject *py_err_base, *py_err_pe, *py_err_symmetric, *py_err_contiguous, *py_err_dtype,
    *py_err_size, *py_err_state, *py_err_index;

/* A checked buffer: the exporter's view, its element type and size. */
struct py_arg {
    Py_buffer view;
    int held;
    enum py_dtype dtype;
};

int py_check_ready(const char *call);
int py_get_array(const char *call, const char *what, PyObject *obj, int writable, int symmetric,
                 struct py_arg *out);
void py_release(struct py_arg *arg);
int py_check_pe(const char *call, long pe, int n_pes);
int py_check_same(const char *call, const struct py_arg *a, const struct py_arg *b);
int py_check_index(const char *call, const struct py_arg *arg, Py_ssize_t index, void **elem);
int py_ctx_from(PyObject *obj, shmem_ctx_t *ctx);
int py_team_from(const char *call, PyObject *obj, shmem_team_t *team);
const char *py_dtype_name(enum py_dtype dtype);

extern int py_initialized;

/* Method tables of each part, joined in module.c. */
extern PyMethodDef py_rma_methods[];
extern PyMethodDef py_amo_methods[];
extern PyMethodDef py_coll_methods[];
extern PyMethodDef py_team_methods[];

#endif
