/*
 * Python kernels for every process: when an operator call finds no kernel handler
 * (aclemuSetKernelHandler), the emulator brings aclnn_py's kernels up itself.
 *
 * - In a process that already runs Python (libpython's symbols are in the process and
 *   Py_IsInitialized() is true), it takes the GIL and calls aclnn_py.emulator._kernels.embedded.start.
 * - In a process without Python (a C or C++ program) it dlopens the libpython of the
 *   installation its tree belongs to (ACLNN_EMU_LIBPYTHON overrides it), initialises it, puts
 *   the tree's site-packages first on sys.path, calls the same start, and releases the GIL.
 *
 * libpython is never linked: every function is found with dlsym. The functions used are
 * CPython's stable C API. The tree records at build time which Python it was built for
 * (share/aclnn_py/python.cfg, written by emulator/build.py).
 *
 * Locks: boot_mu guards starting Python only; it is never held while the GIL is taken
 * (a Python thread holding the GIL may be waiting for it), and no emulator lock is held here.
 *
 * fork(): an interpreter the emulator started is carried over as CPython asks of embedders
 * (PyOS_BeforeFork, PyOS_AfterFork_Parent, PyOS_AfterFork_Child, with the GIL held): the
 * forking thread takes the GIL first, so no other thread is inside a Python kernel, then the
 * runtime's lock (rt_state.c; pthread_atfork runs the prepare handlers registered later
 * first). In a process that already ran Python, the program's own interpreter does this for
 * os.fork.
 *
 * Ctrl-C: the Python the emulator starts has no signal handlers (the program keeps its own).
 * While kernels run in it, SIGINT is caught here (unless the program ignores it): a watcher
 * thread, woken through a pipe (the only thing the signal handler does), raises
 * KeyboardInterrupt in each thread running a kernel (PyThreadState_SetAsyncExc), which fails
 * that kernel as any interrupt does (phase 2: the stream is aborted); when the last kernel
 * ends, the program's own action is put back and the signal sent again, so that the program
 * sees its Ctrl-C as it would have (SIG_DFL ends it).
 */
#include "rt_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>
#include <wchar.h>

#define LIBPYTHON_VARIABLE "ACLNN_EMU_LIBPYTHON"
#define KERNELS_VARIABLE "ACLNN_EMU_KERNELS"
#define WHY_MAX 1536

typedef struct py_object py_object;

static struct {
    int (*IsInitialized)(void);
    void (*InitializeEx)(int);
    int (*GILState_Ensure)(void);
    void (*GILState_Release)(int);
    void *(*Eval_SaveThread)(void);
    py_object *(*Import_ImportModule)(const char *);
    py_object *(*Object_GetAttrString)(py_object *, const char *);
    py_object *(*Object_CallFunction)(py_object *, const char *, ...);
    py_object *(*Sys_GetObject)(const char *);
    int (*List_Insert)(py_object *, ssize_t, py_object *);
    py_object *(*Unicode_FromString)(const char *);
    const char *(*Unicode_AsUTF8)(py_object *);
    py_object *(*Object_Str)(py_object *);
    void (*Err_Fetch)(py_object **, py_object **, py_object **);
    void (*Err_Clear)(void);
    void (*DecRef)(py_object *);
    void (*OS_BeforeFork)(void);
    void (*OS_AfterFork_Parent)(void);
    void (*OS_AfterFork_Child)(void);
    int (*ThreadState_SetAsyncExc)(unsigned long, py_object *);
    py_object **KeyboardInterrupt; /* the address of PyExc_KeyboardInterrupt */
} py;

static pthread_mutex_t boot_mu = PTHREAD_MUTEX_INITIALIZER;
static int boot_state;        /* 0: not tried; 1: Python runs; -1: it could not be started */
static char boot_why[WHY_MAX]; /* why, when -1 */
static bool started_here;      /* Python was started by the emulator (start_python) */

/*
 * CPython before 3.12 re-creates the runtime's lock of the thread-state list (HEAD_LOCK,
 * _PyRuntime.interpreters.mutex) in a forked child only after walking that list with it
 * (PyOS_AfterFork_Child runs _PyEval_ReInitThreads, then _PyRuntimeState_ReInitThreads): a
 * fork while another thread held it, creating its thread state (which needs no GIL), leaves
 * the child waiting forever. 3.12 takes the lock in PyOS_BeforeFork. Before 3.12 the child
 * re-creates it first, with CPython's own _PyThread_at_fork_reinit, at the lock's offset in
 * _PyRuntimeState (32 in 3.9 to 3.11: five ints, then the _finalizing pointer).
 */
static int (*at_fork_reinit)(void **lock);
static void **head_lock;

static void resolve_head_lock(void *handle)
{
    const char *(*version)(void);
    *(void **)&version = dlsym(handle, "Py_GetVersion");
    char *runtime = dlsym(handle, "_PyRuntime");
    *(void **)&at_fork_reinit = dlsym(handle, "_PyThread_at_fork_reinit");
    const char *v = version ? version() : "";
    bool before_312 = strncmp(v, "3.9.", 4) == 0 || strncmp(v, "3.10.", 5) == 0 ||
                      strncmp(v, "3.11.", 5) == 0;
    head_lock = before_312 && runtime && at_fork_reinit ? (void **)(runtime + 32) : NULL;
}

/* Resolve py's functions from `handle` (RTLD_DEFAULT: the process). False when one lacks. */
static bool resolve(void *handle)
{
#define PY_FUNCTION(field, name)                                   \
    do {                                                          \
        *(void **)&py.field = dlsym(handle, name);                \
        if (!py.field)                                            \
            return false;                                         \
    } while (0)
    PY_FUNCTION(IsInitialized, "Py_IsInitialized");
    PY_FUNCTION(InitializeEx, "Py_InitializeEx");
    PY_FUNCTION(GILState_Ensure, "PyGILState_Ensure");
    PY_FUNCTION(GILState_Release, "PyGILState_Release");
    PY_FUNCTION(Eval_SaveThread, "PyEval_SaveThread");
    PY_FUNCTION(Import_ImportModule, "PyImport_ImportModule");
    PY_FUNCTION(Object_GetAttrString, "PyObject_GetAttrString");
    PY_FUNCTION(Object_CallFunction, "PyObject_CallFunction");
    PY_FUNCTION(Sys_GetObject, "PySys_GetObject");
    PY_FUNCTION(List_Insert, "PyList_Insert");
    PY_FUNCTION(Unicode_FromString, "PyUnicode_FromString");
    PY_FUNCTION(Unicode_AsUTF8, "PyUnicode_AsUTF8");
    PY_FUNCTION(Object_Str, "PyObject_Str");
    PY_FUNCTION(Err_Fetch, "PyErr_Fetch");
    PY_FUNCTION(Err_Clear, "PyErr_Clear");
    PY_FUNCTION(DecRef, "Py_DecRef");
    PY_FUNCTION(OS_BeforeFork, "PyOS_BeforeFork");
    PY_FUNCTION(OS_AfterFork_Parent, "PyOS_AfterFork_Parent");
    PY_FUNCTION(OS_AfterFork_Child, "PyOS_AfterFork_Child");
    PY_FUNCTION(ThreadState_SetAsyncExc, "PyThreadState_SetAsyncExc");
    PY_FUNCTION(KeyboardInterrupt, "PyExc_KeyboardInterrupt");
#undef PY_FUNCTION
    resolve_head_lock(handle);
    return true;
}

/* The pending Python exception as text into why (cleared). Needs the GIL. */
static void python_error(char *why, size_t size, const char *doing)
{
    py_object *type = NULL, *value = NULL, *trace = NULL;
    py.Err_Fetch(&type, &value, &trace);
    py_object *text = value ? py.Object_Str(value) : NULL;
    const char *said = text ? py.Unicode_AsUTF8(text) : NULL;
    snprintf(why, size, "%s failed: %s", doing, said ? said : "an exception without a message");
    py.Err_Clear();
    py_object *held[] = {text, type, value, trace};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        if (held[i])
            py.DecRef(held[i]);
}

/* The install root of this tree (<root>/lib64/libacl_rt.so is this library): false if unknown. */
static bool tree_root(char *root, size_t size)
{
    Dl_info info;
    char resolved[PATH_MAX];
    if (!dladdr((void *)tree_root, &info) || !info.dli_fname || !realpath(info.dli_fname, resolved))
        return false;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(resolved, '/');
        if (!slash || slash == resolved)
            return false;
        *slash = '\0';
    }
    return (size_t)snprintf(root, size, "%s", resolved) < size;
}

/* Up `levels` folders from `path` into out. */
static bool parent(const char *path, int levels, char *out, size_t size)
{
    size_t length = strlen(path);
    if (length >= size)
        return false;
    memmove(out, path, length + 1); /* out may be path */
    for (int up = 0; up < levels; up++) {
        char *slash = strrchr(out, '/');
        if (!slash || slash == out)
            return false;
        *slash = '\0';
    }
    return true;
}

/* The value of `key` in a file of key = value lines (python.cfg, pyvenv.cfg), or false. */
static bool read_key(const char *file, const char *key, char *value, size_t size)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return false;
    char line[PATH_MAX + 64];
    bool found = false;
    size_t key_length = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, key, key_length) != 0)
            continue;
        p += key_length;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '=')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\r\n");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n < size) {
            memcpy(value, p, n);
            value[n] = '\0';
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* dlopen `path` RTLD_GLOBAL (extension modules resolve libpython's symbols in the global
   scope); on failure dlerror's text is added to why. */
static void *try_open(const char *path, char *why, size_t size)
{
    if (!path[0])
        return NULL;
    void *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
        const char *said = dlerror();
        size_t used = strlen(why);
        if (used < size)
            snprintf(why + used, size - used, "%s%s", used ? "; " : "", said ? said : path);
    }
    return handle;
}

/*
 * libpython of the installation the tree belongs to: ACLNN_EMU_LIBPYTHON if set (only it),
 * else the base installation of the venv whose site-packages holds the tree (pyvenv.cfg's
 * home = <base>/bin, the library in <base>/lib), else the installation whose
 * <prefix>/lib/python3.X/site-packages holds it (<prefix>/lib), else the one the tree was built with
 * (python.cfg: libdir/instsoname, libdir/ldlibrary), else its soname on the loader's path.
 */
static void *open_libpython(const char *root, const char *site, char *why, size_t size)
{
    const char *named = getenv(LIBPYTHON_VARIABLE);
    if (named && named[0]) {
        void *handle = try_open(named, why, size);
        if (!handle) {
            char said[WHY_MAX];
            snprintf(said, sizeof said, "%s", why);
            snprintf(why, size, "%s=%.512s does not load: %.900s", LIBPYTHON_VARIABLE, named, said);
        }
        return handle;
    }
    char cfg[PATH_MAX + 64], venv[PATH_MAX], base[PATH_MAX], path[PATH_MAX];
    char libdir[PATH_MAX] = "", instsoname[256] = "", ldlibrary[256] = "";
    snprintf(cfg, sizeof cfg, "%s/share/aclnn_py/python.cfg", root);
    read_key(cfg, "libdir", libdir, sizeof libdir);
    read_key(cfg, "instsoname", instsoname, sizeof instsoname);
    read_key(cfg, "ldlibrary", ldlibrary, sizeof ldlibrary);
    const char *names[] = {instsoname, ldlibrary};
    void *handle = NULL;
    /* <venv>/lib/python3.X/site-packages: pyvenv.cfg is in <venv> */
    if (parent(site, 3, venv, sizeof venv) && strlen(venv) + 12 < sizeof path) {
        snprintf(path, sizeof path, "%s/pyvenv.cfg", venv);
        if (read_key(path, "home", base, sizeof base) && parent(base, 1, base, sizeof base))
            for (size_t i = 0; !handle && i < 2; i++)
                if (names[i][0] && (size_t)snprintf(path, sizeof path, "%s/lib/%s", base, names[i]) < sizeof path)
                    handle = try_open(path, why, size);
    }
    /* <prefix>/lib/python3.X/site-packages: the library in <prefix>/lib */
    if (!handle && parent(site, 2, base, sizeof base))
        for (size_t i = 0; !handle && i < 2; i++)
            if (names[i][0] && (size_t)snprintf(path, sizeof path, "%s/%s", base, names[i]) < sizeof path)
                handle = try_open(path, why, size);
    for (size_t i = 0; !handle && libdir[0] && i < 2; i++)
        if (names[i][0] && (size_t)snprintf(path, sizeof path, "%s/%s", libdir, names[i]) < sizeof path)
            handle = try_open(path, why, size);
    if (!handle && instsoname[0])
        handle = try_open(instsoname, why, size);
    if (!handle && !instsoname[0] && !why[0])
        snprintf(why, size, "%.1024s does not say which Python the tree was built for", cfg);
    return handle;
}

/* sys.path: the tree's site-packages first, then site.addsitedir of it and of the build's
   site-packages (python.cfg purelib, platlib) for their .pth files and dependencies. */
static bool set_path(const char *root, const char *site, char *why, size_t size)
{
    py_object *path = py.Sys_GetObject("path"); /* borrowed */
    py_object *first = py.Unicode_FromString(site);
    if (!path || !first || py.List_Insert(path, 0, first) != 0) {
        if (first)
            py.DecRef(first);
        python_error(why, size, "putting the package's site-packages on sys.path");
        return false;
    }
    py.DecRef(first);
    py_object *module = py.Import_ImportModule("site");
    py_object *add = module ? py.Object_GetAttrString(module, "addsitedir") : NULL;
    if (module)
        py.DecRef(module);
    if (!add) {
        python_error(why, size, "import site");
        return false;
    }
    char cfg[PATH_MAX + 64], dirs[3][PATH_MAX] = {{0}};
    snprintf(dirs[0], sizeof dirs[0], "%s", site);
    snprintf(cfg, sizeof cfg, "%s/share/aclnn_py/python.cfg", root);
    read_key(cfg, "purelib", dirs[1], sizeof dirs[1]);
    read_key(cfg, "platlib", dirs[2], sizeof dirs[2]);
    bool ok = true;
    for (int i = 0; ok && i < 3; i++) {
        if (!dirs[i][0] || (i == 2 && strcmp(dirs[1], dirs[2]) == 0))
            continue;
        py_object *done = py.Object_CallFunction(add, "s", dirs[i]);
        if (!done) {
            python_error(why, size, "site.addsitedir");
            ok = false;
        } else {
            py.DecRef(done);
        }
    }
    py.DecRef(add);
    return ok;
}

/*
 * The interpreter Python is to take itself for, so that it finds its standard library (and a
 * venv's site-packages) from it, not from a python3 on PATH: the venv's bin/python3 when the
 * tree's site-packages is a venv's, else the one the tree was built with (python.cfg).
 */
static bool python_program(const char *root, const char *site, char *program, size_t size)
{
    char venv[PATH_MAX], cfg[PATH_MAX + 64];
    if (parent(site, 3, venv, sizeof venv) && strlen(venv) + 16 < sizeof cfg) {
        snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", venv);
        if (access(cfg, R_OK) == 0 && (size_t)snprintf(program, size, "%s/bin/python3", venv) < size &&
            access(program, X_OK) == 0)
            return true;
    }
    snprintf(cfg, sizeof cfg, "%.4000s/share/aclnn_py/python.cfg", root);
    return read_key(cfg, "executable", program, size) && access(program, X_OK) == 0;
}

static int fork_gil; /* the forking thread's PyGILState_Ensure, between prepare and after */
static void interrupts_fork_prepare(void);
static void interrupts_fork_parent(void);
static void interrupts_fork_child(void);

static void python_fork_prepare(void)
{
    fork_gil = py.GILState_Ensure();
    py.OS_BeforeFork();
    pthread_mutex_lock(&boot_mu);
    interrupts_fork_prepare();
}

static void python_fork_parent(void)
{
    interrupts_fork_parent();
    pthread_mutex_unlock(&boot_mu);
    py.OS_AfterFork_Parent();
    py.GILState_Release(fork_gil);
}

static void python_fork_child(void)
{
    interrupts_fork_child();
    pthread_mutex_init(&boot_mu, NULL);
    if (head_lock)
        at_fork_reinit(head_lock); /* see resolve_head_lock */
    py.OS_AfterFork_Child();
    py.GILState_Release(fork_gil);
}

/* Start Python in a process without it. boot_mu is held; no Python thread exists yet. */
static bool start_python(const char *root, const char *site, char *why, size_t size)
{
    void *handle = open_libpython(root, site, why, size);
    if (!handle)
        return false;
    if (!resolve(handle)) {
        snprintf(why, size, "the library loaded lacks CPython's C API (Py_InitializeEx, "
                 "PyGILState_Ensure, ...)");
        return false;
    }
    if (!py.IsInitialized()) {
        char program[PATH_MAX];
        void (*set_program)(const wchar_t *);
        wchar_t *(*decode)(const char *, size_t *);
        *(void **)&set_program = dlsym(handle, "Py_SetProgramName");
        *(void **)&decode = dlsym(handle, "Py_DecodeLocale");
        if (!getenv(LIBPYTHON_VARIABLE) && set_program && decode && python_program(root, site, program, sizeof program)) {
            wchar_t *name = decode(program, NULL); /* kept: Python keeps pointing at it */
            if (name)
                set_program(name);
        }
        py.InitializeEx(0); /* no signal handlers: the program keeps its own */
        started_here = true;
    }
    bool ok = set_path(root, site, why, size);
    py.Eval_SaveThread(); /* later calls take the GIL with PyGILState_Ensure */
    if (ok)
        pthread_atfork(python_fork_prepare, python_fork_parent, python_fork_child);
    return ok;
}

/* aclnn_py.emulator._kernels.embedded.start(root, kernels modules): "" or why it failed. Takes the GIL. */
static bool install_kernels(const char *root, char *why, size_t size)
{
    const char *modules = getenv(KERNELS_VARIABLE);
    int gil = py.GILState_Ensure();
    bool ok = false;
    py_object *module = py.Import_ImportModule("aclnn_py.emulator._kernels.embedded");
    py_object *start = module ? py.Object_GetAttrString(module, "start") : NULL;
    py_object *said = start ? py.Object_CallFunction(start, "ss", root, modules ? modules : "") : NULL;
    const char *text = said ? py.Unicode_AsUTF8(said) : NULL;
    if (!text)
        python_error(why, size, "import aclnn_py.emulator._kernels.embedded");
    else if (text[0])
        snprintf(why, size, "%s", text);
    else
        ok = true;
    py_object *held[] = {said, start, module};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        if (held[i])
            py.DecRef(held[i]);
    py.GILState_Release(gil);
    return ok;
}

EMU_EXPORT bool emu_kernels_bring_up(char *why, size_t size)
{
    char root[PATH_MAX], site[PATH_MAX];
    why[0] = '\0';
    if (!tree_root(root, sizeof root) || !parent(root, 3, site, sizeof site)) {
        snprintf(why, size, "the emulator cannot tell where its tree is installed");
        return false;
    }
    pthread_mutex_lock(&boot_mu);
    if (boot_state == 0) {
        if (resolve(RTLD_DEFAULT) && py.IsInitialized())
            boot_state = 1;
        else if (start_python(root, site, boot_why, sizeof boot_why))
            boot_state = 1;
        else
            boot_state = -1;
    }
    int state = boot_state;
    pthread_mutex_unlock(&boot_mu);
    if (state < 0) {
        snprintf(why, size, "Python could not be started (%s); set %s to the path of the "
                 "libpython aclnn_py is installed for", boot_why, LIBPYTHON_VARIABLE);
        return false;
    }
    if (!install_kernels(root, why, size))
        return false;
    if (!emu_kernel_handler_set()) {
        snprintf(why, size, "aclnn_py installed its kernels in another copy of the emulator's "
                 "runtime than the one this program loaded from %.1024s", root);
        return false;
    }
    return true;
}

/* ---- Ctrl-C while a kernel runs in the Python the emulator started ---- */

#define RUNNING_MAX 64 /* threads inside a kernel at once that an interrupt reaches */

static pthread_mutex_t interrupt_mu = PTHREAD_MUTEX_INITIALIZER;
static int running_count;                 /* threads inside a kernel */
static int recorded;                      /* of them, those in running[] */
static pthread_t running[RUNNING_MAX];
static bool targeted[RUNNING_MAX];        /* given a KeyboardInterrupt */
static bool caught;                       /* our SIGINT action is installed */
static struct sigaction program_action;   /* the program's, while ours is */
static int wake[2] = {-1, -1};            /* signal handler -> watcher */
static pid_t watcher_pid;                 /* the process whose watcher runs (0: none) */
static volatile sig_atomic_t interrupt_seen;

static void on_sigint(int signal_number)
{
    (void)signal_number;
    int saved = errno;
    char byte = 1;
    interrupt_seen = 1;
    if (write(wake[1], &byte, 1) < 0) { /* a full pipe has a wake-up pending already */ }
    errno = saved;
}

/* Interrupt every thread inside a kernel, each once. */
static void *watch_interrupts(void *unused)
{
    (void)unused;
    for (;;) {
        char byte;
        ssize_t got = read(wake[0], &byte, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return NULL;
        int gil = py.GILState_Ensure();
        pthread_mutex_lock(&interrupt_mu);
        for (int i = 0; i < recorded; i++)
            if (!targeted[i]) {
                targeted[i] = true;
                py.ThreadState_SetAsyncExc((unsigned long)running[i], *py.KeyboardInterrupt);
            }
        pthread_mutex_unlock(&interrupt_mu);
        py.GILState_Release(gil);
    }
}

/* The pipe and the watcher of this process (after fork, the child starts its own). Holds
   interrupt_mu. */
static bool watcher_ready(void)
{
    if (watcher_pid == getpid())
        return true;
    if (wake[0] >= 0) {
        close(wake[0]);
        close(wake[1]);
        wake[0] = wake[1] = -1;
    }
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return false;
    int flags = fcntl(wake[0], F_GETFL); /* the watcher blocks; the handler never does */
    fcntl(wake[0], F_SETFL, flags & ~O_NONBLOCK);
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool ok = pthread_create(&thread, &attr, watch_interrupts, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (ok)
        watcher_pid = getpid();
    return ok;
}

/* fork(): the child has none of the parent's kernels running, its own SIGINT action back,
   and starts a watcher of its own at its first kernel. Called with the GIL held. */
static void interrupts_fork_prepare(void)
{
    pthread_mutex_lock(&interrupt_mu);
}

static void interrupts_fork_parent(void)
{
    pthread_mutex_unlock(&interrupt_mu);
}

static void interrupts_fork_child(void)
{
    pthread_mutex_init(&interrupt_mu, NULL);
    if (caught)
        sigaction(SIGINT, &program_action, NULL);
    caught = false;
    running_count = recorded = 0;
    interrupt_seen = 0;
}

EMU_EXPORT void emu_kernel_enter(void)
{
    if (!started_here)
        return;
    pthread_mutex_lock(&interrupt_mu);
    if (recorded < RUNNING_MAX) {
        running[recorded] = pthread_self();
        targeted[recorded++] = false;
    }
    if (running_count++ == 0 && watcher_ready()) {
        struct sigaction ours;
        memset(&ours, 0, sizeof ours);
        ours.sa_handler = on_sigint;
        sigemptyset(&ours.sa_mask);
        ours.sa_flags = SA_RESTART;
        sigaction(SIGINT, NULL, &program_action);
        caught = program_action.sa_handler != SIG_IGN && sigaction(SIGINT, &ours, NULL) == 0;
        interrupt_seen = 0;
    }
    pthread_mutex_unlock(&interrupt_mu);
}

EMU_EXPORT void emu_kernel_leave(void)
{
    if (!started_here)
        return;
    pthread_t self = pthread_self();
    bool was_targeted = false, resend = false;
    pthread_mutex_lock(&interrupt_mu);
    for (int i = 0; i < recorded; i++)
        if (pthread_equal(running[i], self)) {
            was_targeted = targeted[i];
            recorded--;
            running[i] = running[recorded];
            targeted[i] = targeted[recorded];
            break;
        }
    if (--running_count == 0 && caught) {
        sigaction(SIGINT, &program_action, NULL);
        caught = false;
        resend = interrupt_seen;
        interrupt_seen = 0;
    }
    pthread_mutex_unlock(&interrupt_mu);
    if (was_targeted) { /* an interrupt the kernel ended before seeing must not reach the next */
        int gil = py.GILState_Ensure();
        py.ThreadState_SetAsyncExc((unsigned long)self, NULL);
        py.GILState_Release(gil);
    }
    if (resend)
        kill(getpid(), SIGINT);
}
