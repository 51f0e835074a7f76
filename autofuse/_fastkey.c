/* The fast path's key in C: jit.__call__'s per-argument key (fastpath.py) for calls of NumPy
 * arrays and Python scalars, built without a Python frame or attribute objects.
 *
 * key(args, writes) -> bytes or None
 *
 * The bytes hold, for each argument in order, a tag and (for an exact np.ndarray) its
 * dimensions, shape, strides, dtype (kind, item size, byte order with native spelled one way)
 * and, where `writes` is true, its writeable flag: what fastpath.fast_key's tuple holds, so two
 * calls get the same key exactly when the tuple key would be equal (int64 as 'l' and as 'q', or
 * float64 as '<f8' and '=f8', are one dtype here as in NumPy). An argument of any other type (a subclass, a
 * CuPy array, a torch tensor, a structured or object dtype, ...) gives None: the caller then
 * builds the tuple key in Python. bytes hash once and compare by memcmp; the tuple key cost
 * about 1 us for four arrays on the 2-core machine, most of a small call.
 *
 * Built by setup.py as an optional extension (a machine without a compiler installs without
 * it and fastpath.py uses its Python key alone). KEY_VERSION names this layout: fastpath.py
 * uses the module only where it equals its own, so a library built from an older source (an
 * editable install's build is not redone by a checkout) is never read as this one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* Room for the words of one call's key; a call that needs more gets None (the Python key). */
#define MAX_WORDS 512
#define KEY_VERSION 2

enum { TAG_ARRAY = 1, TAG_FLOAT, TAG_INT, TAG_BOOL };

/* Whether a dtype is one the key may describe by kind, size and byte order: a builtin
 * numeric type (no fields, subarrays, units or object references). */
static int plain_dtype(PyArray_Descr *descr)
{
    int num = descr->type_num;
    return (num >= NPY_BOOL && num <= NPY_CLONGDOUBLE) || num == NPY_HALF;
}

static PyObject *key(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    (void)module;
    if (argc != 2) {
        PyErr_SetString(PyExc_TypeError, "key(args, writes) takes two arguments");
        return NULL;
    }
    PyObject *args = argv[0];
    if (!PyTuple_CheckExact(args)) {
        Py_RETURN_NONE;
    }
    int writes = PyObject_IsTrue(argv[1]);
    if (writes < 0) {
        return NULL;
    }
    Py_ssize_t words[MAX_WORDS];
    Py_ssize_t n = 0;
    Py_ssize_t count = PyTuple_GET_SIZE(args);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *arg = PyTuple_GET_ITEM(args, i);
        PyTypeObject *type = Py_TYPE(arg);
        if (type == &PyArray_Type) {
            PyArrayObject *array = (PyArrayObject *)arg;
            PyArray_Descr *descr = PyArray_DESCR(array);
            int nd = PyArray_NDIM(array);
            if (!plain_dtype(descr) || n + 6 + 2 * (Py_ssize_t)nd > MAX_WORDS) {
                Py_RETURN_NONE;
            }
            npy_intp *shape = PyArray_DIMS(array);
            npy_intp *strides = PyArray_STRIDES(array);
            words[n++] = TAG_ARRAY;
            words[n++] = nd;
            for (int d = 0; d < nd; d++) {
                words[n++] = shape[d];
            }
            for (int d = 0; d < nd; d++) {
                words[n++] = strides[d];
            }
            /* (kind and size: NPY_LONG and NPY_LONGLONG are one int64; native order one way) */
            words[n++] = descr->kind;
            words[n++] = PyArray_ISNBO(descr->byteorder) ? '=' : descr->byteorder;
            words[n++] = PyDataType_ELSIZE(descr);
            words[n++] = writes ? PyArray_ISWRITEABLE(array) != 0 : 0;
        }
        else if (n + 1 > MAX_WORDS) {
            Py_RETURN_NONE;
        }
        else if (type == &PyFloat_Type) {
            words[n++] = TAG_FLOAT;
        }
        else if (type == &PyBool_Type) {
            words[n++] = TAG_BOOL;
        }
        else if (type == &PyLong_Type) {
            words[n++] = TAG_INT;
        }
        else {
            Py_RETURN_NONE;
        }
    }
    return PyBytes_FromStringAndSize((const char *)words, n * (Py_ssize_t)sizeof(Py_ssize_t));
}

static PyMethodDef methods[] = {
    {"key", (PyCFunction)(void (*)(void))key, METH_FASTCALL,
     "key(args, writes) -> bytes or None: the fast path's key of a call's arguments."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastkey", "The fast path's key in C (see _fastkey.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__fastkey(void)
{
    import_array();
    PyObject *made = PyModule_Create(&module);
    if (made != NULL && PyModule_AddIntConstant(made, "KEY_VERSION", KEY_VERSION) < 0) {
        Py_DECREF(made);
        return NULL;
    }
    return made;
}
