/* shoal._core: start-up, the symmetric heap blocks that numpy arrays view,
 * and the module itself. */
#include "core.h"

/* A block of the symmetric heap. numpy arrays view it through the buffer
 * protocol, so an array keeps its block object alive; the memory itself is
 * returned only by shoal.free (a collective, like shmem_free). */
typedef struct {
    PyObject_HEAD
    void *addr;
    Py_ssize_t size;
} heap_block;

static int block_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    heap_block *b = (heap_block *)self;
    if (b->addr == NULL) {
        PyErr_SetString(py_err_state, "this symmetric block was freed");
        view->obj = NULL;
        return -1;
    }
    return PyBuffer_FillInfo(view, self, b->addr, b->size, 0, flags);
}

static PyBufferProcs block_as_buffer = {block_getbuffer, NULL};

static PyObject *block_get_address(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromVoidPtr(((heap_block *)self)->addr);
}

static PyGetSetDef block_getset[] = {
    {"address", block_get_address, NULL, "address of the block (0 once freed)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject heap_block_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shoal._core.HeapBlock",
    .tp_basicsize = sizeof(heap_block),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A block of Shoal's symmetric heap (made by shoal.zeros/shoal.empty).",
    .tp_as_buffer = &block_as_buffer,
    .tp_getset = block_getset,
};

static PyObject *py_init(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (py_initialized == 2) {
        PyErr_SetString(py_err_state, "shoal.init: Shoal was finalized and cannot start again in this process");
        return NULL;
    }
    if (py_initialized == 0) {
        Py_BEGIN_ALLOW_THREADS
        shmem_init();
        Py_END_ALLOW_THREADS
        py_initialized = 1;
    }
    Py_RETURN_NONE;
}

static PyObject *py_finalize(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (py_initialized == 1) {
        Py_BEGIN_ALLOW_THREADS
        shmem_finalize();
        Py_END_ALLOW_THREADS
        py_initialized = 2;
    }
    Py_RETURN_NONE;
}

static PyObject *py_initialized_get(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyBool_FromLong(py_initialized == 1);
}

static PyObject *py_my_pe(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (py_check_ready("shoal.my_pe") != 0) return NULL;
    return PyLong_FromLong(shmem_my_pe());
}

static PyObject *py_n_pes(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (py_check_ready("shoal.n_pes") != 0) return NULL;
    return PyLong_FromLong(shmem_n_pes());
}

/* alloc(nbytes, zero) -> HeapBlock. Collective, like shmem_malloc; with
 * zero, shmem_calloc, so no PE can reach the block before it is cleared. */
static PyObject *py_alloc(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t nbytes;
    int zero = 0;
    if (!PyArg_ParseTuple(args, "n|p", &nbytes, &zero)) return NULL;
    if (py_check_ready("shoal.empty") != 0) return NULL;
    if (nbytes < 0) {
        PyErr_Format(py_err_size, "shoal.empty: size %zd is negative", nbytes);
        return NULL;
    }
    heap_block *b = PyObject_New(heap_block, &heap_block_type);
    if (b == NULL) return NULL;
    void *addr;
    /* A zero-byte array still needs an address of its own on the heap. */
    size_t want = nbytes > 0 ? (size_t)nbytes : 1;
    Py_BEGIN_ALLOW_THREADS
    addr = zero ? shmem_calloc(1, want) : shmem_malloc(want);
    Py_END_ALLOW_THREADS
    if (addr == NULL) {
        b->addr = NULL;
        Py_DECREF(b);
        PyErr_Format(PyExc_MemoryError,
                     "shoal.empty: %zd bytes do not fit in the symmetric heap (SHMEM_SYMMETRIC_SIZE sets its size)",
                     nbytes);
        return NULL;
    }
    b->addr = addr;
    b->size = nbytes;
    return (PyObject *)b;
}

/* release(block): collective, like shmem_free. */
static PyObject *py_release_block(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyObject_TypeCheck(arg, &heap_block_type)) {
        PyErr_Format(py_err_symmetric, "shoal.free: not an array made by shoal.zeros/shoal.empty");
        return NULL;
    }
    if (py_check_ready("shoal.free") != 0) return NULL;
    heap_block *b = (heap_block *)arg;
    if (b->addr == NULL) {
        PyErr_SetString(py_err_state, "shoal.free: this array was already freed");
        return NULL;
    }
    void *addr = b->addr;
    b->addr = NULL;
    Py_BEGIN_ALLOW_THREADS
    shmem_free(addr);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* ptr(array, pe) -> address of the same bytes on pe, or None where pe's
 * memory cannot be reached by load/store (shmem_ptr). */
static PyObject *py_ptr(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    long pe;
    if (!PyArg_ParseTuple(args, "Ol", &obj, &pe)) return NULL;
    if (py_check_ready("shoal.ptr") != 0) return NULL;
    struct py_arg a;
    if (py_get_array("shoal.ptr", "array", obj, 0, 1, &a) != 0) return NULL;
    if (py_check_pe("shoal.ptr", pe, shmem_n_pes()) != 0) {
        py_release(&a);
        return NULL;
    }
    void *p = shmem_ptr(a.view.buf, (int)pe);
    py_release(&a);
    if (p == NULL) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(p);
}

static PyObject *py_set_errors(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *e[8];
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &e[0], &e[1], &e[2], &e[3], &e[4], &e[5], &e[6], &e[7])) return NULL;
    PyObject **slots[8] = {&py_err_base, &py_err_pe, &py_err_symmetric, &py_err_contiguous,
                           &py_err_dtype, &py_err_size, &py_err_state, &py_err_index};
    for (int i = 0; i < 8; i++) {
        Py_INCREF(e[i]);
        Py_XSETREF(*slots[i], e[i]);
    }
    Py_RETURN_NONE;
}

static PyObject *py_info(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    int major, minor;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    return Py_BuildValue("(iis)", major, minor, name);
}

static PyMethodDef module_methods[] = {
    {"init", py_init, METH_NOARGS, "shmem_init (once per process)"},
    {"finalize", py_finalize, METH_NOARGS, "shmem_finalize (once per process)"},
    {"initialized", py_initialized_get, METH_NOARGS, "True between init and finalize"},
    {"my_pe", py_my_pe, METH_NOARGS, "shmem_my_pe"},
    {"n_pes", py_n_pes, METH_NOARGS, "shmem_n_pes"},
    {"alloc", py_alloc, METH_VARARGS, "alloc(nbytes, zero=False) -> HeapBlock (collective)"},
    {"release", py_release_block, METH_O, "release(block) (collective)"},
    {"ptr", py_ptr, METH_VARARGS, "ptr(array, pe) -> address or None (shmem_ptr)"},
    {"info", py_info, METH_NOARGS, "(major, minor, vendor name)"},
    {"_set_errors", py_set_errors, METH_VARARGS, "sets the exception classes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "shoal._core", "CPython bindings over libshoal's C API.", -1, NULL, NULL, NULL, NULL, NULL,
};

static int add_methods(PyObject *m, PyMethodDef *defs)
{
    for (PyMethodDef *d = defs; d->ml_name != NULL; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, PyModule_GetNameObject(m));
        if (f == NULL || PyModule_AddObject(m, d->ml_name, f) != 0) {
            Py_XDECREF(f);
            return -1;
        }
    }
    return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&heap_block_type) < 0) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL) return NULL;
    /* Until shoal/__init__.py installs its classes. */
    py_err_base = py_err_pe = py_err_symmetric = py_err_contiguous = py_err_dtype = py_err_size = py_err_state =
        py_err_index = PyExc_RuntimeError;
    for (int i = 0; i < 8; i++) Py_INCREF(PyExc_RuntimeError);
    Py_INCREF(&heap_block_type);
    if (PyModule_AddObject(m, "HeapBlock", (PyObject *)&heap_block_type) != 0 ||
        add_methods(m, module_methods) != 0 || add_methods(m, py_rma_methods) != 0 ||
        add_methods(m, py_amo_methods) != 0 || add_methods(m, py_coll_methods) != 0 ||
        add_methods(m, py_team_methods) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "CMP_EQ", SHMEM_CMP_EQ);
    PyModule_AddIntConstant(m, "CMP_NE", SHMEM_CMP_NE);
    PyModule_AddIntConstant(m, "CMP_GT", SHMEM_CMP_GT);
    PyModule_AddIntConstant(m, "CMP_GE", SHMEM_CMP_GE);
    PyModule_AddIntConstant(m, "CMP_LT", SHMEM_CMP_LT);
    PyModule_AddIntConstant(m, "CMP_LE", SHMEM_CMP_LE);
    PyModule_AddIntConstant(m, "SIGNAL_SET", SHMEM_SIGNAL_SET);
    PyModule_AddIntConstant(m, "SIGNAL_ADD", SHMEM_SIGNAL_ADD);
    PyModule_AddIntConstant(m, "CTX_SERIALIZED", SHMEM_CTX_SERIALIZED);
    PyModule_AddIntConstant(m, "CTX_PRIVATE", SHMEM_CTX_PRIVATE);
    PyModule_AddIntConstant(m, "CTX_NOSTORE", SHMEM_CTX_NOSTORE);
    return m;
}
