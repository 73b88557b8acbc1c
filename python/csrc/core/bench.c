/* _core._time_putmem: the C side of the per-call overhead benchmark
 * (python/bench/put_overhead.py). It times shmem_putmem itself in this
 * process, on the same buffers the Python calls use. */
#include "core.h"

#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* _time_putmem(dest, source, pe, iters) -> ns per shmem_putmem call. */
static PyObject *py_time_putmem(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *d, *s;
    long pe, iters;
    if (!PyArg_ParseTuple(args, "OOll", &d, &s, &pe, &iters)) return NULL;
    struct py_arg dest, source;
    if (py_check_ready("_time_putmem") != 0 || py_get_array("_time_putmem", "dest", d, 0, 1, &dest) != 0) return NULL;
    if (py_get_array("_time_putmem", "source", s, 0, 0, &source) != 0) {
        py_release(&dest);
        return NULL;
    }
    PyObject *r = NULL;
    if (py_check_same("_time_putmem", &dest, &source) == 0 && py_check_pe("_time_putmem", pe, shmem_n_pes()) == 0 &&
        iters > 0) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) shmem_putmem(dest.view.buf, source.view.buf, (size_t)dest.view.len, (int)pe);
        r = PyFloat_FromDouble((now_ns() - t0) / (double)iters);
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(py_err_base, "_time_putmem: iters must be positive");
    }
    py_release(&dest);
    py_release(&source);
    return r;
}

PyMethodDef py_bench_methods[] = {
    {"_time_putmem", py_time_putmem, METH_VARARGS, "_time_putmem(dest, source, pe, iters) -> ns per call"},
    {NULL, NULL, 0, NULL},
};
