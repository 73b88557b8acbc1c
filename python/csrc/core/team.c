/* Teams and contexts as handles; shoal/_objects.py wraps them in Team and
 * Ctx objects (whose _handle is None once destroyed). */
#include "core.h"

static PyObject *handle_or_none(void *h)
{
    if (h == NULL) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(h);
}

static PyObject *py_team_world(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyLong_FromVoidPtr(SHMEM_TEAM_WORLD);
}

static PyObject *py_team_shared(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyLong_FromVoidPtr(SHMEM_TEAM_SHARED);
}

static PyObject *py_team_my_pe(PyObject *self, PyObject *arg)
{
    (void)self;
    shmem_team_t team;
    if (py_check_ready("Team.my_pe") != 0 || py_team_from("Team.my_pe", arg, &team) != 0) return NULL;
    return PyLong_FromLong(shmem_team_my_pe(team));
}

static PyObject *py_team_n_pes(PyObject *self, PyObject *arg)
{
    (void)self;
    shmem_team_t team;
    if (py_check_ready("Team.n_pes") != 0 || py_team_from("Team.n_pes", arg, &team) != 0) return NULL;
    return PyLong_FromLong(shmem_team_n_pes(team));
}

/* translate(team, pe, dest_team) -> pe in dest_team, or -1 if not a member. */
static PyObject *py_team_translate(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "Team.translate";
    PyObject *a, *b;
    long pe;
    if (!PyArg_ParseTuple(args, "OlO", &a, &pe, &b)) return NULL;
    shmem_team_t src, dst;
    if (py_check_ready(call) != 0 || py_team_from(call, a, &src) != 0 || py_team_from(call, b, &dst) != 0)
        return NULL;
    if (py_check_pe(call, pe, shmem_team_n_pes(src)) != 0) return NULL;
    return PyLong_FromLong(shmem_team_translate_pe(src, (int)pe, dst));
}

static PyObject *py_team_split_strided(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "Team.split_strided";
    PyObject *parent_obj;
    int start, stride, size;
    if (!PyArg_ParseTuple(args, "Oiii", &parent_obj, &start, &stride, &size)) return NULL;
    shmem_team_t parent, team = SHMEM_TEAM_INVALID;
    if (py_check_ready(call) != 0 || py_team_from(call, parent_obj, &parent) != 0) return NULL;
    int n = shmem_team_n_pes(parent);
    long last = (long)start + (long)stride * (long)(size - 1);
    /* The same test libshoal makes, so no PE reaches it with a bad triplet. */
    if (size < 1 || start < 0 || start >= n || last < 0 || last >= n || (stride == 0 && size > 1)) {
        PyErr_Format(py_err_base, "%s: start %d, stride %d, size %d do not fit a team of %d PEs", call, start,
                     stride, size, n);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = shmem_team_split_strided(parent, start, stride, size, NULL, 0, &team);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_Format(py_err_base, "%s: libshoal returned %d", call, rc);
        return NULL;
    }
    return handle_or_none(team);
}

static PyObject *py_team_split_2d(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "Team.split_2d";
    PyObject *parent_obj;
    int xrange;
    if (!PyArg_ParseTuple(args, "Oi", &parent_obj, &xrange)) return NULL;
    shmem_team_t parent, x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    if (py_check_ready(call) != 0 || py_team_from(call, parent_obj, &parent) != 0) return NULL;
    if (xrange < 1) {
        PyErr_Format(py_err_base, "%s: xrange %d is below 1", call, xrange);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = shmem_team_split_2d(parent, xrange, NULL, 0, &x, NULL, 0, &y);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_Format(py_err_base, "%s: libshoal returned %d", call, rc);
        return NULL;
    }
    PyObject *hx = handle_or_none(x), *hy = handle_or_none(y);
    PyObject *r = (hx && hy) ? PyTuple_Pack(2, hx, hy) : NULL;
    Py_XDECREF(hx);
    Py_XDECREF(hy);
    return r;
}

static PyObject *py_team_sync(PyObject *self, PyObject *arg)
{
    (void)self;
    shmem_team_t team;
    if (py_check_ready("Team.sync") != 0 || py_team_from("Team.sync", arg, &team) != 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    shmem_team_sync(team);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* team_destroy(handle): the Python object has already given up its handle. */
static PyObject *py_team_destroy(PyObject *self, PyObject *arg)
{
    (void)self;
    if (py_check_ready("Team.destroy") != 0) return NULL;
    shmem_team_t team = PyLong_AsVoidPtr(arg);
    if (PyErr_Occurred()) return NULL;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED) {
        PyErr_SetString(py_err_base, "Team.destroy: TEAM_WORLD and TEAM_SHARED cannot be destroyed");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    shmem_team_destroy(team);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* ctx_create(options, team or None) -> handle. */
static PyObject *py_ctx_create(PyObject *self, PyObject *args)
{
    (void)self;
    const char *call = "shoal.Ctx";
    long options;
    PyObject *team_obj = Py_None;
    if (!PyArg_ParseTuple(args, "l|O", &options, &team_obj)) return NULL;
    if (py_check_ready(call) != 0) return NULL;
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    int rc;
    if (team_obj == Py_None) {
        rc = shmem_ctx_create(options, &ctx);
    } else {
        shmem_team_t team;
        if (py_team_from(call, team_obj, &team) != 0) return NULL;
        rc = shmem_team_create_ctx(team, options, &ctx);
    }
    if (rc != 0 || ctx == SHMEM_CTX_INVALID) {
        PyErr_Format(py_err_state, "%s: no context could be made (libshoal returned %d)", call, rc);
        return NULL;
    }
    return PyLong_FromVoidPtr(ctx);
}

static PyObject *py_ctx_destroy(PyObject *self, PyObject *arg)
{
    (void)self;
    if (py_check_ready("Ctx.destroy") != 0) return NULL;
    shmem_ctx_t ctx = PyLong_AsVoidPtr(arg);
    if (PyErr_Occurred()) return NULL;
    if (ctx == SHMEM_CTX_DEFAULT) {
        PyErr_SetString(py_err_base, "Ctx.destroy: the default context cannot be destroyed");
        return NULL;
    }
    shmem_ctx_destroy(ctx);
    Py_RETURN_NONE;
}

PyMethodDef py_team_methods[] = {
    {"team_world", py_team_world, METH_NOARGS, "SHMEM_TEAM_WORLD's handle"},
    {"team_shared", py_team_shared, METH_NOARGS, "SHMEM_TEAM_SHARED's handle"},
    {"team_my_pe", py_team_my_pe, METH_O, "team_my_pe(team)"},
    {"team_n_pes", py_team_n_pes, METH_O, "team_n_pes(team)"},
    {"team_translate", py_team_translate, METH_VARARGS, "team_translate(team, pe, dest_team)"},
    {"team_split_strided", py_team_split_strided, METH_VARARGS, "team_split_strided(parent, start, stride, size)"},
    {"team_split_2d", py_team_split_2d, METH_VARARGS, "team_split_2d(parent, xrange) -> (x, y)"},
    {"team_sync", py_team_sync, METH_O, "team_sync(team)"},
    {"team_destroy", py_team_destroy, METH_O, "team_destroy(handle)"},
    {"ctx_create", py_ctx_create, METH_VARARGS, "ctx_create(options, team=None) -> handle"},
    {"ctx_destroy", py_ctx_destroy, METH_O, "ctx_destroy(handle)"},
    {NULL, NULL, 0, NULL},
};
