/* jitanon-record: one command from a JIT program to a named profile.

       jitanon-record [options] -- COMMAND [ARGS...]
       jitanon-record [options] -p PID

   It recognises the runtime from the command (the program after resolving it on PATH and
   following symlinks), adds the flag or environment that makes it describe its code (a
   jitdump, and a perf map where that adds names), runs `perf record -k mono` with the
   call-graph mode that reaches through that runtime's frames, injects the recording with
   jitanon (the options of jitanon-inject; output perf.jit.data), prints the top functions,
   writes a flame graph, and removes the dumps and maps it made (the ELF files and the
   build-id cache stay, so `perf report -i perf.jit.data` works later; --clean removes
   them).  Ctrl-C reaches the program alone, which ends as it would and lets its runtime
   write out its jitdump; perf stops when it has (see record_program).

   Where the runtime's files go: into a private directory next to the output
   (.jitanon-record-XXXXXX, removed at the end) when the runtime can be told where
   (deno, bun, java, dotnet); node and wasmtime write jit-<pid>.dump into the current
   directory and python 3.12+, erlang, php and node's perf map insist on /tmp: those are
   removed at the end by pid - the pids of the recording, for files made after it began.

   Wrappers: `env [VAR=value...] PROG ...` is looked through (PROG's flags are added after
   it); `sh -c 'PROG ...'` (also bash, dash, zsh) and scripts whose #! line names a
   runtime get the runtime's environment variables instead (NODE_OPTIONS, DENO_V8_FLAGS,
   PYTHON_PERF_JIT_SUPPORT, JAVA_TOOL_OPTIONS, ERL_FLAGS...), since their command line is
   not ours to edit.  Anything else is recorded as `perf record` would, with a note. */
#ifndef _GNU_SOURCE /* (g++ defines it) */
#define _GNU_SOURCE
#endif
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "inject_cli.h"

#include "flamegraph.h"
#include "frames.h"
#include "symbols.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOOL "jitanon-record"
#define MAX_ARGS 4096
#define MAX_FRAMES 1024
#define NAME_LEN 1024
/* How perf starts the program: `jitanon-record --as-workload-of-perf COMMAND...`, which
   unblocks SIGINT (blocked in perf, see record_program) and execs COMMAND. */
#define WORKLOAD_OPT "--as-workload-of-perf"
/* After a Ctrl-C, how long the program may take to end by itself before perf is stopped
   (and ends it with SIGTERM, as perf record does) */
#define GRACE_S 5.0
/* SIGINTs that come within this long of the one that began a Ctrl-C are that Ctrl-C, not
   a second one.  One interrupt often reaches us twice: timeout(1) and supervisors (a CI
   job's cancel) signal their child and then its whole process group, microseconds apart,
   or milliseconds when the machine is loaded and the sender is preempted between the two
   kill()s.  A person who means a second Ctrl-C presses it after seeing the first do
   nothing: our "waiting for the program" line comes up to 250 ms after it (the loop in
   main polls that often) and a reaction to it takes another ~200 ms.  Half a second lies
   between the two, and erring long costs little: a Ctrl-C taken for the first one's echo
   leaves the program GRACE_S to end, where one taken for a second press threw away the
   jitdump records the program had not yet written out. */
#define BURST_S 0.5

typedef enum rt_kind { RT_NONE, RT_NODE, RT_DENO, RT_BUN, RT_PYTHON, RT_JAVA, RT_ERL, RT_DOTNET, RT_WASMTIME, RT_PHP } rt_kind;

static const char *const rt_names[] = {"unknown", "node", "deno", "bun", "python", "java", "erlang", "dotnet", "wasmtime", "php"};

/* ------------------------------------------------------------------ small helpers */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) fprintf(stderr, TOOL ": out of memory\n"), exit(3);
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = (char *)xmalloc(strlen(s) + 1);
    return strcpy(d, s);
}

static char *xprintf(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = (char *)xmalloc(n);
    snprintf(s, n, fmt, a, b ? b : "");
    return s;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The program a command word runs: itself when it has a '/', else the first executable
   of that name on PATH.  NULL when there is none. */
static char *resolve_path(const char *word)
{
    const char *path = getenv("PATH"), *p;
    char buf[PATH_MAX];
    if (strchr(word, '/')) return access(word, X_OK) == 0 ? xstrdup(word) : NULL;
    for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (n && n + strlen(word) + 2 < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '/';
            strcpy(buf + n + 1, word);
            if (access(buf, X_OK) == 0) return xstrdup(buf);
        }
        p += n;
        if (*p == ':') p++;
    }
    return NULL;
}

/* ------------------------------------------------------------------ runtimes */

typedef struct rt {
    rt_kind kind;
    int py_version;       /* python: 312 for 3.12 */
    const char *how;      /* a note on what was done */
} rt;

/* Starts argv (on PATH) with its stdout into *fd, stdin and stderr /dev/null. */
static pid_t spawn_reading(char *const *argv, int *fd)
{
    int p[2];
    pid_t pid;
    if (pipe(p) != 0) return -1;
    pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(p[1], 1);
        if (nul >= 0) dup2(nul, 2), dup2(nul, 0);
        close(p[0]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    if (pid < 0) close(p[0]);
    *fd = p[0];
    return pid;
}

/* Runs `prog -c CODE` (a python) and reads one integer it prints: 0 on failure. */
static int python_version(const char *prog)
{
    int fd, status, v = 0;
    pid_t pid;
    char buf[32];
    ssize_t n;
    char *argv[] = {(char *)prog, (char *)"-c",
                    (char *)"import sys; print(sys.version_info[0] * 100 + sys.version_info[1])", NULL};
    if ((pid = spawn_reading(argv, &fd)) < 0) return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (pid > 0) waitpid(pid, &status, 0);
    if (n > 0) {
        buf[n] = 0;
        v = atoi(buf);
    }
    return v;
}

/* The runtime a program name is (after PATH and symlinks: `python3` -> python3.13). */
static rt_kind rt_of_name(const char *name, int *py)
{
    size_t n = strlen(name);
    *py = 0;
    if (!strcmp(name, "node") || !strcmp(name, "nodejs")) return RT_NODE;
    if (!strcmp(name, "deno")) return RT_DENO;
    if (!strcmp(name, "bun")) return RT_BUN;
    if (!strcmp(name, "java")) return RT_JAVA;
    if (!strcmp(name, "erl") || !strcmp(name, "erlexec")) return RT_ERL;
    if (!strcmp(name, "dotnet")) return RT_DOTNET;
    if (!strcmp(name, "wasmtime")) return RT_WASMTIME;
    /* php, and Debian's php8.2 that /usr/bin/php links to */
    if (n >= 3 && !strncmp(name, "php", 3) && strspn(name + 3, "0123456789.") == n - 3) return RT_PHP;
    if (n >= 6 && !strncmp(name, "python", 6)) {
        const char *v = name + 6;
        if (!*v) return RT_PYTHON;
        if (v[0] == '3' && !v[1]) return RT_PYTHON;
        if (v[0] == '3' && v[1] == '.' && v[2] >= '0' && v[2] <= '9') {
            *py = 300 + atoi(v + 2);
            return RT_PYTHON;
        }
    }
    return RT_NONE;
}

/* The runtime of a command word: by the name the user typed, then by the file it is. */
static rt_kind rt_of_word(const char *word, char **resolved, int *py)
{
    char *path = resolve_path(word), real[PATH_MAX];
    rt_kind k = RT_NONE;
    *resolved = path;
    *py = 0;
    if (!path) return RT_NONE;
    if (realpath(path, real)) k = rt_of_name(base_name(real), py);
    if (k == RT_NONE || (k == RT_PYTHON && !*py)) {
        int py2;
        rt_kind k2 = rt_of_name(base_name(path), &py2);
        if (k == RT_NONE) k = k2;
        if (k2 == RT_PYTHON && py2) *py = py2;
    }
    if (k == RT_PYTHON && !*py) *py = python_version(path);
    return k;
}

/* The interpreter a #! line names (`#!/usr/bin/env node` -> node), or NULL. */
static char *shebang_of(const char *path)
{
    char line[256], *p, *w;
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f) return NULL;
    n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    if (n < 3 || line[0] != '#' || line[1] != '!') return NULL;
    line[strcspn(line, "\n")] = 0;
    p = line + 2;
    while (*p == ' ' || *p == '\t') p++;
    w = p;
    p += strcspn(p, " \t");
    if (*p) *p++ = 0;
    if (!strcmp(base_name(w), "env")) { /* #!/usr/bin/env [-S] PROG */
        while (*p == ' ' || *p == '\t') p++;
        if (!strncmp(p, "-S", 2)) p += 2;
        while (*p == ' ' || *p == '\t') p++;
        w = p;
        p += strcspn(p, " \t");
        *p = 0;
    }
    return *w ? xstrdup(w) : NULL;
}

/* ------------------------------------------------------------------ the run */

typedef struct env_var {
    char *name, *value;
} env_var;

typedef struct run {
    /* options */
    const char *output, *svg, *pprof, *folded, *callgraph, *freq;
    int top, keep, no_jit, print_only, quiet, no_svg;
    long attach_pid;
    char pidstr[32];
    /* derived */
    char priv[PATH_MAX + 32]; /* the private directory */
    char raw[PATH_MAX + 48];  /* the recording, in it */
    char elf_dir[PATH_MAX + 16];
    char cwd[PATH_MAX];
    char agent[PATH_MAX];    /* the JVMTI agent, when built */
    /* -p of a JVM: jcmd's arguments for the agent (dcmd_arg) */
    char jcmd_agent[PATH_MAX + 2], jcmd_opt[PATH_MAX + 40];
    rt r;
    char *argv[MAX_ARGS];    /* the command, as run */
    int argc;
    env_var env[8];
    int nenv;
    char *notes[8];
    int nnotes;
    time_t start;
    /* what the recording showed, as it went */
    uint64_t samples;
    uint32_t *pids;
    size_t npids, pids_cap;
} run;

/* S as one argument of a JVM diagnostic command (jcmd PID JVMTI.agent_load AGENT OPTIONS):
   jcmd joins its arguments with spaces and the JVM splits them again, at each space and at
   a word's first '=' (an agent path with a space, "dir=..." unquoted: Unknown argument).
   It takes a word in "..." or '...' whole, and has no escape: a backslash before a quote
   only keeps that quote from closing it, and stays in the text.  So S goes in the quote it
   does not hold; S holding both, or ending in a backslash, cannot be passed: 0. */
static int dcmd_arg(char *out, size_t n, const char *s)
{
    size_t len = strlen(s);
    char q = !strchr(s, '"') ? '"' : !strchr(s, '\'') ? '\'' : 0;
    if (!q || (len && s[len - 1] == '\\') || len + 3 > n) return 0;
    snprintf(out, n, "%c%s%c", q, s, q);
    return 1;
}

static void note(run *R, const char *s)
{
    if (R->nnotes < 8) R->notes[R->nnotes++] = xstrdup(s);
}

static void add_env(run *R, const char *name, const char *value)
{
    int i;
    for (i = 0; i < R->nenv; i++)
        if (!strcmp(R->env[i].name, name)) { /* append, as for NODE_OPTIONS */
            char *v = xprintf("%s %s", R->env[i].value, value);
            free(R->env[i].value);
            R->env[i].value = v;
            return;
        }
    if (R->nenv < 8) {
        const char *old = getenv(name);
        R->env[R->nenv].name = xstrdup(name);
        /* options-like variables keep what the user set */
        R->env[R->nenv].value =
            old && *old && (strstr(name, "OPTIONS") || strstr(name, "FLAGS")) ? xprintf("%s %s", old, value)
                                                                               : xstrdup(value);
        R->nenv++;
    }
}

static void insert_arg(run *R, int at, const char *a)
{
    int i;
    if (R->argc + 1 >= MAX_ARGS) return;
    for (i = R->argc; i > at; i--) R->argv[i] = R->argv[i - 1];
    R->argv[at] = xstrdup(a);
    R->argc++;
    R->argv[R->argc] = NULL;
}

/* A runtime's two-word flag: a1 a2 right after the runtime's word (at), or, with at < 0,
   the environment variable env = value. */
static void add_flag2(run *R, int at, const char *env, const char *value, const char *a1, const char *a2)
{
    if (at < 0) {
        add_env(R, env, value);
        return;
    }
    insert_arg(R, at + 1, a2);
    insert_arg(R, at + 1, a1);
}

/* deno: V8's flags, after the subcommand (`deno run`), merged into a --v8-flags the user
   gave; with at < 0, DENO_V8_FLAGS. */
static void add_deno_flags(run *R, int at)
{
    int i, j = -1;
    char *s = xprintf("--perf-prof,--perf-prof-path=%s,--interpreted-frames-native-stack", R->priv, NULL);
    if (at < 0) {
        add_env(R, "DENO_V8_FLAGS", s);
        free(s);
        return;
    }
    for (i = at + 1; i < R->argc; i++) {
        if (!strncmp(R->argv[i], "--v8-flags=", 11)) {
            char *m = xprintf("%s,%s", R->argv[i], s);
            free(R->argv[i]);
            R->argv[i] = m;
            free(s);
            return;
        }
        if (j < 0 && R->argv[i][0] != '-') j = i;
    }
    if (j >= 0 && (!strcmp(R->argv[j], "run") || !strcmp(R->argv[j], "test") || !strcmp(R->argv[j], "bench") ||
                   !strcmp(R->argv[j], "serve") || !strcmp(R->argv[j], "eval") || !strcmp(R->argv[j], "repl") ||
                   !strcmp(R->argv[j], "task")))
        at = j;
    {
        char *f = xprintf("--v8-flags=%s", s, NULL);
        insert_arg(R, at + 1, f);
        free(f);
    }
    free(s);
}

/* python (py: its version, 312 for 3.12): -X perf_jit (3.13+) or -X perf (3.12); older
   ones have none (a note says so).  Returns 0 when it has none. */
static int add_python_flags(run *R, int py, int at)
{
    if (py >= 313) {
        add_flag2(R, at, "PYTHON_PERF_JIT_SUPPORT", "1", "-X", "perf_jit");
        return 1;
    }
    if (py == 312) {
        add_flag2(R, at, "PYTHONPERFSUPPORT", "1", "-X", "perf");
        return 1;
    }
    if (py) {
        char m[128];
        snprintf(m, sizeof m, "python %d.%d has no perf support (3.12 and later do): no JIT flag added", py / 100,
                 py % 100);
        note(R, m);
    } else note(R, "could not tell this python's version: no JIT flag added");
    return 0;
}

/* java: the JVMTI agent (when built) writing into the private directory, and frame
   pointers.  Returns 0 when the agent is not built. */
static int add_java_flags(run *R, int at)
{
    char *s;
    if (!R->agent[0]) {
        note(R, "java: build/libjitanon-jvmti.so is not built (make, with a JDK): no JIT flag added");
        return 0;
    }
    s = (char *)xmalloc(strlen(R->agent) + strlen(R->priv) + 32);
    sprintf(s, "-agentpath:%s=dir=%s", R->agent, R->priv);
    {
        /* JAVA_TOOL_OPTIONS is split at spaces too, and takes a quoted word whole, as a
           diagnostic command does (a checkout or output directory with a space) */
        char q[8192];
        char *t = xprintf("%s %s", strpbrk(s, " \t") && dcmd_arg(q, sizeof q, s) ? q : s, "-XX:+PreserveFramePointer");
        add_flag2(R, at, "JAVA_TOOL_OPTIONS", t, s, "-XX:+PreserveFramePointer");
        free(t);
    }
    free(s);
    return 1;
}

/* Adds the runtime's flags to the command (at = the index of the runtime's word), or,
   with at < 0, its environment only (sh -c, scripts).  Returns 0 when it has none. */
static int add_flags(run *R, rt_kind k, int py, int at)
{
    switch (k) {
    case RT_NODE:
        /* --interpreted-frames-native-stack: interpreted functions get a trampoline of
           their own, which the dump names (else every one is InterpreterEntryTrampoline).
           --perf-basic-prof: V8 buffers its jitdump (2 MB) and a node killed by Ctrl-C
           loses the tail, often the hot code; its perf map is written line by line and
           names what the dump lost (measured: 87% -> 100% of a server's JIT samples) */
        add_flag2(R, at, "NODE_OPTIONS", "--perf-prof --interpreted-frames-native-stack --perf-basic-prof",
                  "--interpreted-frames-native-stack", "--perf-basic-prof");
        if (at >= 0) insert_arg(R, at + 1, "--perf-prof");
        return 1;
    case RT_DENO:
        add_deno_flags(R, at);
        return 1;
    case RT_BUN:
        add_env(R, "BUN_JSC_useJITDump", "1");
        add_env(R, "BUN_JSC_jitDumpDirectory", R->priv);
        return 1;
    case RT_PYTHON:
        return add_python_flags(R, py, at);
    case RT_JAVA:
        return add_java_flags(R, at);
    case RT_ERL:
        add_flag2(R, at, "ERL_FLAGS", "+JPperf true", "+JPperf", "true");
        return 1;
    case RT_DOTNET:
        add_env(R, "DOTNET_PerfMapEnabled", "1");
        add_env(R, "DOTNET_PerfMapJitDumpPath", R->priv);
        return 1;
    case RT_WASMTIME:
        if (at < 0) {
            note(R, "wasmtime takes --profile=jitdump on its command line only: no JIT flag added");
            return 0;
        }
        insert_arg(R, at + 1 + (at + 1 < R->argc && !strcmp(R->argv[at + 1], "run")), "--profile=jitdump");
        return 1;
    case RT_PHP: {
        /* opcache's JIT is off in the CLI and without a buffer (8.x: jit_buffer_size 0);
           jit_debug 0x20 writes /tmp/jit-<pid>.dump; file_update_protection: opcache
           caches no script younger than 2 s, so a script just written got no JIT at all.
           Put first: a -d the user gave later wins. */
        static const char *const d[] = {"opcache.enable_cli=1", "opcache.jit=tracing", "opcache.jit_buffer_size=64M",
                                        "opcache.jit_debug=0x20", "opcache.file_update_protection=0"};
        int i;
        if (at < 0) {
            note(R, "php takes its -d flags on its command line only: no JIT flag added");
            return 0;
        }
        for (i = (int)(sizeof d / sizeof d[0]) - 1; i >= 0; i--) add_flag2(R, at, NULL, NULL, "-d", d[i]);
        return 1;
    }
    case RT_NONE:
        break;
    }
    return 0;
}

/* The call-graph mode that reaches through the runtime's frames. */
static const char *callgraph_of(const rt *r)
{
    /* python is rarely built with frame pointers: perf unwinds its stacks (3.13's
       perf_jit puts unwind tables in the dump; 3.12's trampolines keep to the ABI) */
    if (r->kind == RT_PYTHON && r->py_version >= 312) return "dwarf";
    return "fp";
}

/* The runtime k (py: python's version) is the command's: R->r says so, and its flags
   go in (at: as add_flags takes it).  Returns add_flags's answer. */
static int use_runtime(run *R, rt_kind k, int py, int at)
{
    R->r.kind = k;
    R->r.py_version = py;
    return add_flags(R, k, py, at);
}

/* env [-i] [-u NAME] [NAME=VALUE...] PROG: looked through to PROG.  1 when PROG is a
   runtime (its flags added after it, its environment through env); else 0, and *path
   (env's) is dropped when a PROG was there: no script to look into. */
static int detect_env(run *R, char **path)
{
    char *p2, msg[128];
    int i, py;
    rt_kind k;
    for (i = 1; i < R->argc; i++) {
        const char *a = R->argv[i];
        if (!strcmp(a, "-u") || !strcmp(a, "--unset") || !strcmp(a, "-C") || !strcmp(a, "--chdir")) i++;
        else if (a[0] == '-' || strchr(a, '=')) continue;
        else break;
    }
    if (i >= R->argc) return 0;
    free(*path);
    *path = NULL;
    k = rt_of_word(R->argv[i], &p2, &py);
    free(p2);
    if (k == RT_NONE) return 0;
    /* environment set for the runtime goes through env too (it may be env -i) */
    if (use_runtime(R, k, py, i)) {
        int e;
        for (e = 0; e < R->nenv; e++) {
            char *kv = xprintf("%s=%s", R->env[e].name, R->env[e].value);
            insert_arg(R, 1, kv);
            free(kv);
        }
    }
    snprintf(msg, sizeof msg, "env: looked through it to %s", rt_names[k]);
    note(R, msg);
    return 1;
}

/* sh -c 'PROG ...' (path: the shell; also bash, dash, zsh): the string's first word
   (after VAR=value and exec).  1 when it is a runtime: its flags go through the
   environment. */
static int detect_sh_c(run *R, const char *path)
{
    const char *sh = base_name(path), *s;
    char word[256], msg[512];
    int py = 0;
    rt_kind k = RT_NONE;
    if ((strcmp(sh, "sh") && strcmp(sh, "bash") && strcmp(sh, "dash") && strcmp(sh, "zsh")) || R->argc < 3 ||
        strcmp(R->argv[1], "-c"))
        return 0;
    for (s = R->argv[2];;) {
        size_t n;
        char *p2;
        while (*s == ' ' || *s == '\t') s++;
        n = strcspn(s, " \t;&|()<>\n");
        if (n == 0 || n >= sizeof word) break;
        memcpy(word, s, n);
        word[n] = 0;
        s += n;
        if (strchr(word, '=') || !strcmp(word, "exec")) continue;
        k = rt_of_word(word, &p2, &py);
        free(p2);
        break;
    }
    if (k == RT_NONE) return 0;
    if (use_runtime(R, k, py, -1)) {
        snprintf(msg, sizeof msg, "%s -c: %s found in the command string: its flags go through the environment", sh,
                 rt_names[k]);
        note(R, msg);
    }
    return 1;
}

/* A script (path) whose #! names a runtime: 1, its flags gone through the environment. */
static int detect_script(run *R, const char *path)
{
    char *interp = shebang_of(path), *p2, msg[512];
    int py;
    rt_kind k;
    if (!interp) return 0;
    k = rt_of_word(interp, &p2, &py);
    free(p2);
    free(interp);
    if (k == RT_NONE) return 0;
    if (use_runtime(R, k, py, -1)) {
        snprintf(msg, sizeof msg, "%s: a %s script: its flags go through the environment", R->argv[0], rt_names[k]);
        note(R, msg);
    }
    return 1;
}

/* Looks at the command, finds its runtime and adds its flags. */
static void detect(run *R)
{
    char *path = NULL, msg[512];
    int py = 0, found = 0;
    rt_kind k = rt_of_word(R->argv[0], &path, &py);
    if (k == RT_NONE && path && !strcmp(base_name(path), "env")) found = detect_env(R, &path);
    if (!found && k == RT_NONE && path) found = detect_sh_c(R, path) || detect_script(R, path);
    if (!found) {
        (void)use_runtime(R, k, py, 0); /* (RT_NONE: no flags) */
        if (k == RT_NONE) {
            snprintf(msg, sizeof msg,
                     "%s is no runtime jitanon-record knows: recorded as perf record would, no JIT flag added", R->argv[0]);
            note(R, msg);
        }
    }
    free(path);
}

/* ------------------------------------------------------------------ perf */

static void shell_quote(FILE *f, const char *s)
{
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+/.,:@%") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    fputc('\'', f);
}

/* The perf record command line (NULL-terminated, in a static-free array of the caller).
   self: this program's path, run as the workload's first step (WORKLOAD_OPT below), or
   NULL (--print-command shows the command as the user would type it). */
static int perf_argv(run *R, char **pa, int cap, char *self)
{
    int n = 0, i;
    /* -N: perf's build-id cache would get a copy of every binary the program ran (node's is
       100 MB), which perf report does not need on this machine; the ELF files the
       injection writes go into it (small, and what perf archive carries) */
    static const char *const fixed[] = {"perf", "record", "-q", "-N", "-k", "mono", "-e", "cpu-clock"};
    for (i = 0; i < (int)(sizeof fixed / sizeof *fixed); i++) pa[n++] = (char *)fixed[i];
    pa[n++] = (char *)"-F";
    pa[n++] = (char *)R->freq;
    if (!strcmp(R->callgraph, "fp")) pa[n++] = (char *)"-g";
    else if (strcmp(R->callgraph, "none")) {
        pa[n++] = (char *)"--call-graph";
        pa[n++] = (char *)R->callgraph;
    }
    pa[n++] = (char *)"-o";
    pa[n++] = R->raw;
    if (R->attach_pid) {
        snprintf(R->pidstr, sizeof R->pidstr, "%ld", R->attach_pid);
        pa[n++] = (char *)"-p";
        pa[n++] = R->pidstr;
    } else {
        pa[n++] = (char *)"--";
        if (self) pa[n++] = self, pa[n++] = (char *)WORKLOAD_OPT;
        for (i = 0; i < R->argc && n < cap - 1; i++) pa[n++] = R->argv[i];
    }
    pa[n] = NULL;
    return n;
}

static void print_command(run *R, FILE *f)
{
    char *pa[MAX_ARGS + 32];
    int i, n = perf_argv(R, pa, MAX_ARGS + 32, NULL);
    for (i = 0; i < R->nenv; i++) {
        fprintf(f, "%s=", R->env[i].name);
        shell_quote(f, R->env[i].value);
        fputc(' ', f);
    }
    for (i = 0; i < n; i++) {
        if (i) fputc(' ', f);
        shell_quote(f, pa[i]);
    }
    fputc('\n', f);
}

/* perf's own trouble, found before the run (so the program's stderr stays its own): one
   sentence with the fix, or NULL. */
static const char *perf_problem(run *R, char *buf, size_t cap)
{
    char probe[2 * PATH_MAX], errf[2 * PATH_MAX], line[512] = "";
    pid_t pid;
    int status = 0, paranoid = -9;
    FILE *f;
    char *perf = resolve_path("perf");
    if (!perf) {
        snprintf(buf, cap, "perf is not installed: install it (Debian: apt-get install linux-perf; Ubuntu: "
                           "apt-get install linux-tools-$(uname -r); Fedora: dnf install perf)");
        return buf;
    }
    free(perf);
    snprintf(probe, sizeof probe, "%s/probe.data", R->priv);
    snprintf(errf, sizeof errf, "%s/probe.err", R->priv);
    pid = fork();
    if (pid == 0) {
        int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600), nul = open("/dev/null", O_RDWR);
        if (fd >= 0) dup2(fd, 2);
        if (nul >= 0) dup2(nul, 1), dup2(nul, 0);
        execlp("perf", "perf", "record", "-q", "-k", "mono", "-e", "cpu-clock", "-o", probe, "true", (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, &status, 0);
    unlink(probe);
    if ((f = fopen(errf, "r"))) {
        size_t n = fread(line, 1, sizeof line - 1, f);
        line[n] = 0;
        fclose(f);
    }
    unlink(errf);
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return NULL;
    if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "r"))) {
        if (fscanf(f, "%d", &paranoid) != 1) paranoid = -9;
        fclose(f);
    }
    if (strstr(line, "paranoid") || strstr(line, "ermission") || strstr(line, "EACCES") || strstr(line, "EPERM")) {
        snprintf(buf, cap,
                 "perf may not record here (kernel.perf_event_paranoid is %d): allow it with `sudo sysctl "
                 "kernel.perf_event_paranoid=1` (or run as root; in a container, it needs CAP_PERFMON)",
                 paranoid);
        return buf;
    }
    line[strcspn(line, "\n")] = 0;
    snprintf(buf, cap, "perf record does not work here%s%s (try: perf record -e cpu-clock true)",
             line[0] ? ": " : "", line);
    return buf;
}

/* -- following the recording as perf writes it: samples, pids */

/* The library's perf.data reader, following the file (opts.follow): it gives the records
   perf has written so far, and stops at the data section's end once perf has finished. */
typedef struct tail {
    jitanon_perf_reader r;
    int open, done;
} tail;

static void add_pid(run *R, uint32_t pid)
{
    size_t i;
    for (i = 0; i < R->npids; i++)
        if (R->pids[i] == pid) return;
    if (R->npids == R->pids_cap) {
        R->pids_cap = R->pids_cap ? 2 * R->pids_cap : 64;
        R->pids = (uint32_t *)realloc(R->pids, R->pids_cap * sizeof *R->pids);
        if (!R->pids) exit(3);
    }
    R->pids[R->npids++] = pid;
}

/* Reads what perf added since the last call (whole records only). */
static void tail_poll(run *R, tail *t)
{
    jitanon_perf_record rec;
    jitanon_result res;
    if (t->done) return;
    if (!t->open) {
        jitanon_perf_opts o;
        memset(&o, 0, sizeof o);
        o.follow = 1;
        /* not there yet, or its header not yet written: again at the next poll */
        if (jitanon_perf_reader_open(&t->r, R->raw, &o, NULL) != JITANON_OK) {
            jitanon_perf_reader_release(&t->r);
            return;
        }
        t->open = 1;
    }
    while ((res = jitanon_perf_reader_next(&t->r, &rec, NULL)) == JITANON_OK) {
        if (rec.type == JITANON_PERF_RECORD_SAMPLE) R->samples++;
        else if (rec.type == JITANON_PERF_RECORD_COMM) add_pid(R, rec.comm.pid);
        else if (rec.type == JITANON_PERF_RECORD_FORK) add_pid(R, rec.task.pid);
    }
    if (res != JITANON_AGAIN) t->done = 1; /* the end, or bytes that are no record: stop following */
}

static void tail_close(tail *t)
{
    if (t->open) jitanon_perf_reader_release(&t->r);
    t->open = 0;
}

/* ------------------------------------------------------------------ the profile */

typedef struct prof {
    run *R;
    fg_tree tree;   /* the stacks */
    fg_tree self;   /* one frame per sample: the leaf */
    fg_tree inner;  /* (DWARF) one frame per sample: its innermost JIT frame, else the leaf */
    int has_inner;  /* a --call-graph dwarf recording: inner and the stack_ counts are kept */
    uint64_t stack_samples;
    uint64_t total, jit, jit_named, map_named;
    uint64_t stack_jit, stack_jit_named; /* (DWARF) frames in JIT code, named */
    char (*names)[NAME_LEN];
    fg_frame *frames;
    char comm[64];
} prof;

/* (DWARF) frames of the stacks in JIT code: a jitdump's or a perf map's, anonymous
   memory, no mapping; named when the library names them. */
static void count_jit(void *user, size_t i, const jitanon_inject_sample *s, const jitanon_frame *f, int first,
                      const char *name, fg_kind kind)
{
    prof *P = (prof *)user;
    (void)i, (void)s, (void)first, (void)name, (void)kind;
    if (f->kind == JITANON_FRAME_JIT || f->kind == JITANON_FRAME_PERF_MAP || f->kind == JITANON_FRAME_UNKNOWN ||
        (f->kind == JITANON_FRAME_FILE && fr_is_anon(f->path))) {
        P->stack_jit++;
        if (f->name.length) P->stack_jit_named++;
    }
}

static void on_sample(void *user, const jitanon_inject_sample *s)
{
    prof *P = (prof *)user;
    size_t n;
    fg_frame leaf;
    fg_kind lk;
    jitanon_frame f;
    P->total++;
    lk = fr_sample(s, P->names[0], NAME_LEN, &f);
    /* JIT code: what a jitdump describes, or an anonymous mapping of a process with one */
    if (f.kind == JITANON_FRAME_JIT) P->jit++, P->jit_named++;
    else if (f.kind == JITANON_FRAME_PERF_MAP) P->jit++, P->map_named++;
    else if (f.kind == JITANON_FRAME_FILE && fr_is_anon(f.path)) P->jit++;
    leaf.name = P->names[0];
    leaf.kind = lk;
    fg_add(&P->self, &leaf, 1, 1);
    /* a DWARF recording's stacks are unwound by the library (FR_WANT), as perf unwinds them */
    n = fr_stack(s, P->names[0], NAME_LEN, P->frames, MAX_FRAMES, P->has_inner ? count_jit : NULL, P);
    if (P->has_inner && n) { /* python's functions: the innermost frame in JIT code (its trampoline) */
        size_t k;
        for (k = 0; k < n && P->frames[k].kind != FG_JIT && P->frames[k].kind != FG_PERFMAP; k++) {
        }
        fg_add(&P->inner, &P->frames[k < n ? k : 0], 1, 1);
        P->stack_samples++;
    }
    fr_root_first(P->frames, n, P->comm);
    fg_add(&P->tree, P->frames, n + 1, 1);
}

static void print_top(prof *P, const fg_tree *tree, uint64_t total, int top, const char *title)
{
    size_t n, i;
    fg_count *v = fg_top(tree, &n);
    static const char *const tag[] = {"", "  [jit]", "  [perf map]", "", "", ""};
    (void)P;
    fprintf(stderr, "%s\n", title);
    for (i = 0; i < n && i < (size_t)top; i++)
        fprintf(stderr, "%6.2f%%  %7" PRIu64 "  %.100s%s\n", 100.0 * (double)v[i].count / (double)total, v[i].count,
                v[i].name, v[i].kind < FG_KINDS ? tag[v[i].kind] : "");
    free(v);
}

/* ------------------------------------------------------------------ cleanup */

/* Removes what the runtimes made for the recording's pids: in dir, files named
   jit-<pid>.dump, jit-<tid>-<pid>.dump, perf-<pid>.map (and .NET's perfinfo-<pid>.map),
   isolate-0x<address>-<pid>-v8.log, made since the run began. */
static void remove_by_pid(run *R, const char *dir, int keep)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[2 * PATH_MAX];
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name, *p;
        unsigned long pid = 0;
        size_t i;
        struct stat st;
        int match = 0;
        if (!strncmp(n, "jit-", 4) && strlen(n) > 9 && !strcmp(n + strlen(n) - 5, ".dump")) {
            p = n + strlen(n) - 5;
            while (p > n + 4 && p[-1] >= '0' && p[-1] <= '9') p--;
            if (p[-1] == '-' || p == n + 4) pid = strtoul(p, NULL, 10), match = 1;
        } else if (!strncmp(n, "isolate-0x", 10) && strlen(n) > 17 && !strcmp(n + strlen(n) - 7, "-v8.log")) {
            /* node --perf-prof also writes V8's log, isolate-0x<address>-<pid>-v8.log */
            p = n + strlen(n) - 7;
            while (p > n + 10 && p[-1] >= '0' && p[-1] <= '9') p--;
            pid = strtoul(p, NULL, 10);
            match = p[-1] == '-';
        } else if ((!strncmp(n, "perf-", 5) || !strncmp(n, "perfinfo-", 9)) && strlen(n) > 9 &&
                   !strcmp(n + strlen(n) - 4, ".map")) {
            p = strchr(n, '-') + 1;
            pid = strtoul(p, NULL, 10);
            match = 1;
        }
        if (!match) continue;
        for (i = 0; i < R->npids && R->pids[i] != pid; i++) {
        }
        if (i == R->npids) continue;
        snprintf(path, sizeof path, "%s/%s", dir, n);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime < R->start - 1) continue;
        if (keep) fprintf(stderr, TOOL ": kept %s\n", path); /* --keep: say where they are */
        else unlink(path);
    }
    closedir(d);
}

/* Removes the entries of dir whose names start with `prefix` ("": every one), with what
   is below them (not following links), then dir itself when that left it empty; counts
   the files and their bytes into *n (n[0] files, n[1] bytes) when n is not NULL. */
static void remove_entries(const char *dir, const char *prefix, uint64_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[2 * PATH_MAX];
    size_t pl = strlen(prefix);
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || strncmp(e->d_name, prefix, pl)) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_entries(path, "", n);
        else if (unlink(path) == 0 && n) n[0]++, n[1] += (uint64_t)st.st_size;
    }
    closedir(d);
    rmdir(dir);
}

/* Removes dir and what is below it. */
static void remove_tree(const char *dir)
{
    remove_entries(dir, "", NULL);
}

/* --clean: what runs with this output left behind, removed: the ELF files, and their
   entries in perf's build-id cache (<cache>/<ELF dir>/jitted-* and the .build-id links
   into them; see jitanon_buildid_cache_open).  The profile and its flame graph stay. */
static int clean(const char *elf_dir, const char *cache_dir)
{
    char abs[PATH_MAX], cache[PATH_MAX], path[3 * PATH_MAX], target[2 * PATH_MAX];
    uint64_t en[2] = {0, 0}, cn[2] = {0, 0}, links = 0;
    jitanon_error err;
    DIR *d;
    struct dirent *e;
    size_t al;
    if (!realpath(elf_dir, abs)) return fprintf(stderr, TOOL ": nothing to clean: %s: %s\n", elf_dir, strerror(errno)), 0;
    al = strlen(abs);
    if (cache_dir) snprintf(cache, sizeof cache, "%s", cache_dir);
    else if (jitanon_buildid_cache_dir(cache, sizeof cache, &err) != JITANON_OK) cache[0] = 0;
    remove_entries(abs, "jitted-", en); /* the injection's ELF files */
    fprintf(stderr, TOOL ": removed %" PRIu64 " ELF files from %s (%.1f MB)\n", en[0], abs, (double)en[1] / 1e6);
    if (!cache[0]) return 0;
    snprintf(path, sizeof path, "%s%s", cache, abs);
    remove_entries(path, "jitted-", cn); /* their build-id cache directories */
    snprintf(path, sizeof path, "%s/.build-id", cache);
    if ((d = opendir(path)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            char sub[3 * PATH_MAX + 264];
            DIR *d2;
            struct dirent *e2;
            if (e->d_name[0] == '.') continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            if (!(d2 = opendir(sub))) continue;
            while ((e2 = readdir(d2)) != NULL) {
                char link[4 * PATH_MAX];
                const char *t;
                ssize_t n;
                snprintf(link, sizeof link, "%s/%s", sub, e2->d_name);
                if ((n = readlink(link, target, sizeof target - 1)) <= 0) continue;
                target[n] = 0;
                for (t = target; !strncmp(t, "../", 3); t += 3) { /* ../../<path>/<build-id> */
                }
                /* <ELF dir>/jitted-... without its leading '/' */
                if (!strncmp(t, abs + 1, al - 1) && (al == 1 || t[al - 1] == '/') &&
                    !strncmp(t + al - (al == 1), "jitted-", 7) && unlink(link) == 0)
                    links++;
            }
            closedir(d2);
            rmdir(sub); /* when empty */
        }
        closedir(d);
    }
    fprintf(stderr, TOOL ": removed their build-id cache entries from %s (%" PRIu64 " files, %.1f MB, %" PRIu64
                    " links)\n", cache, cn[0], (double)cn[1] / 1e6, links);
    return 0;
}

/* ------------------------------------------------------------------ main */

/* What the handler saw (main's, reached through one pointer): Ctrl-Cs so far (SIGINTs
   BURST_S apart), whether one came from the terminal (the kernel sends Ctrl-C to the whole
   foreground group: the program has it too), and SIGTERM/SIGHUP (stop now).  int_at, when
   the last counted Ctrl-C came, is the SIGINT handler's alone (SIGINT is blocked while it
   runs, so no SIGINT handler interrupts another); main never reads it. */
typedef struct sigs {
    volatile sig_atomic_t ints, from_tty, now;
    double int_at;
} sigs;

static sigs *g_sigs;
static volatile sig_atomic_t g_perf_pid;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (!g_sigs) return;
    if (sig != SIGINT) g_sigs->now = 1;
    else {
        double t = now_s(); /* clock_gettime: async-signal-safe */
        if (!g_sigs->ints || t - g_sigs->int_at >= BURST_S) {
            g_sigs->int_at = t;
            g_sigs->ints++;
        }
        if (si && si->si_code == SI_KERNEL) g_sigs->from_tty = 1;
    }
    /* stopping perf at once: SIGTERM/SIGHUP, or -p (the program is not ours to end) */
    if (g_perf_pid > 0 && sig != SIGINT) kill((pid_t)g_perf_pid, SIGTERM);
}

/* The program perf runs (its child), or 0 while there is none. */
static pid_t workload_of(pid_t perf)
{
    char path[300], line[512];
    FILE *f;
    DIR *d;
    struct dirent *e;
    pid_t found = 0;
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)perf, (long)perf);
    if ((f = fopen(path, "r"))) {
        long c = 0;
        if (fscanf(f, "%ld", &c) == 1) found = (pid_t)c;
        fclose(f);
        if (found) return found;
    }
    if (!(d = opendir("/proc"))) return 0;
    while (!found && (e = readdir(d)) != NULL) { /* no children file: by the parent in stat */
        const char *rp;
        long ppid = 0;
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (!(f = fopen(path, "r"))) continue;
        if (fgets(line, sizeof line, f) && (rp = strrchr(line, ')')) && sscanf(rp + 1, " %*c %ld", &ppid) == 1 &&
            ppid == (long)perf)
            found = (pid_t)atol(e->d_name);
        fclose(f);
    }
    closedir(d);
    return found;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: jitanon-record [options] -- COMMAND [ARGS...]     e.g. jitanon-record -- node app.js\n"
            "       jitanon-record [options] -p PID\n"
            "Records COMMAND with perf, adding the flags its runtime needs to name JIT code (node,\n"
            "deno, bun, python 3.12+, java, erl, dotnet, wasmtime, php), injects it, prints the top\n"
            "functions and writes a flame graph.  Then: perf report -i perf.jit.data\n"
            "  -o, --output FILE   the profile (default perf.jit.data; ELF files go to jitted/ beside it)\n"
            "      --svg FILE      the flame graph (default: the output with .svg for .data)\n"
            "      --no-svg        no flame graph\n"
            "      --folded FILE   the stacks folded (speedscope, flamegraph.pl, inferno read them)\n"
            "      --pprof FILE    also a pprof profile (runs symbolize, installed beside)\n"
            "      --top N         functions in the table (default 12; 0: none)\n"
            "  -F, --freq HZ       samples per second (default 999)\n"
            "      --call-graph M  fp (-g), dwarf or none (default: what the runtime needs)\n"
            "  -p, --pid PID       attach to a running process (Ctrl-C ends the recording)\n"
            "      --no-jit-flags  add no runtime flag: record COMMAND as it is\n"
            "      --print-command print what would run, and stop\n"
            "      --keep          keep the recording, dumps and maps (their directory is named)\n"
            "      --clean         remove the ELF files of past runs (beside -o, or --elf-dir) and\n"
            "                      their copies in perf's build-id cache (~/.debug), and stop\n"
            "  -q, --quiet         no progress line, no table\n"
            "Every option in full: man jitanon-record (from the source tree: man doc/jitanon-record.1)\n"
            "Injection: jitanon-inject's options (--anon, --elf, --elf-dir, --elf-files (default here:\n"
            "sampled), --jitdump-dir, --late, --late-window, --line-bias, --threads, -N, --buildid-dir,\n"
            "--strict, --stats); jitanon-inject --help explains them.\n");
}

/* What main's steps return: GO_ON, or the status to exit with. */
#define GO_ON (-1)

/* perf's child (jitanon-record WORKLOAD_OPT COMMAND...): SIGINT unblocked (perf has it
   blocked: see record_program), then COMMAND. */
static int run_workload(char **cmd)
{
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGINT);
    sigprocmask(SIG_UNBLOCK, &ss, NULL);
    execvp(cmd[0], cmd);
    fprintf(stderr, TOOL ": cannot run %s: %s\n", cmd[0], strerror(errno));
    return 127;
}

/* The options into R and ic (the injection's); *cmd: where the command starts (-1: none).
   GO_ON, or the status (--help, --version, a bad option). */
static int parse_args(run *R, inject_cli *ic, int argc, char **argv, int *cmd, int *do_clean)
{
    int i;
    R->output = "perf.jit.data";
    R->freq = "999";
    R->top = 12;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int k;
        if (!strcmp(a, "--")) {
            *cmd = i + 1;
            break;
        }
        if (a[0] != '-') { /* the command starts at the first word that is not an option */
            *cmd = i;
            break;
        }
        k = inject_cli_arg(ic, TOOL, argc, argv, &i);
        if (k < 0) return 2;
        if (k > 0) continue;
        if ((v = inject_cli_value(argc, argv, &i, "--output", "-o"))) R->output = v;
        else if ((v = inject_cli_value(argc, argv, &i, "--svg", NULL))) R->svg = v;
        else if ((v = inject_cli_value(argc, argv, &i, "--pprof", NULL))) R->pprof = v;
        else if ((v = inject_cli_value(argc, argv, &i, "--folded", NULL))) R->folded = v;
        else if ((v = inject_cli_value(argc, argv, &i, "--top", NULL))) R->top = atoi(v);
        else if ((v = inject_cli_value(argc, argv, &i, "--freq", "-F"))) R->freq = v;
        else if (!strcmp(a, "-g")) R->callgraph = "fp"; /* as perf record -g */
        else if ((v = inject_cli_value(argc, argv, &i, "--call-graph", NULL))) {
            if (strcmp(v, "fp") && strcmp(v, "dwarf") && strcmp(v, "lbr") && strcmp(v, "none"))
                return fprintf(stderr, TOOL ": --call-graph takes fp, dwarf, lbr or none\n"), 2;
            R->callgraph = v;
        } else if ((v = inject_cli_value(argc, argv, &i, "--pid", "-p"))) {
            char *end;
            R->attach_pid = strtol(v, &end, 10);
            if (*end || R->attach_pid <= 0) return fprintf(stderr, TOOL ": -p takes a process id\n"), 2;
        } else if (!strcmp(a, "--no-svg")) R->no_svg = 1;
        else if (!strcmp(a, "--no-jit-flags")) R->no_jit = 1;
        else if (!strcmp(a, "--print-command")) R->print_only = 1;
        else if (!strcmp(a, "--keep")) R->keep = 1;
        else if (!strcmp(a, "--clean")) *do_clean = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) R->quiet = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(stdout), 0;
        else if (!strcmp(a, "--version")) return printf(TOOL " %s\n", JITANON_VERSION_STRING), 0;
        else return fprintf(stderr, TOOL ": unknown option '%s' (--help lists them)\n", a), 2;
    }
    return GO_ON;
}

/* --clean: of the ELF directory beside -o, or --elf-dir's. */
static int clean_output(const run *R, const inject_cli *ic)
{
    char d[PATH_MAX];
    const char *slash = strrchr(R->output, '/');
    if (ic->o.elf_dir) snprintf(d, sizeof d, "%s", ic->o.elf_dir);
    else snprintf(d, sizeof d, "%.*sjitted", slash ? (int)(slash - R->output + 1) : 0, R->output);
    return clean(d, ic->cache_dir);
}

/* A command or -p, not both; and the current directory (the runtimes' files go there). */
static int check_command(run *R, int argc, int cmd)
{
    if ((cmd < 0 || cmd >= argc) && !R->attach_pid)
        return fprintf(stderr, "usage: " TOOL " [options] -- COMMAND [ARGS...]   (or -p PID; --help for more)\n"), 2;
    if (cmd >= 0 && cmd < argc && R->attach_pid) return fprintf(stderr, TOOL ": give a COMMAND or -p PID, not both\n"), 2;
    if (!getcwd(R->cwd, sizeof R->cwd)) return fprintf(stderr, TOOL ": cannot read the current directory\n"), 1;
    return GO_ON;
}

/* Where everything goes: the private directory beside the output (R->priv, created
   unless --print-command), the recording in it, the ELF files' directory and the dumps'. */
static int make_dirs(run *R, inject_cli *ic)
{
    char outdir[PATH_MAX], abs[PATH_MAX];
    const char *slash = strrchr(R->output, '/');
    if (slash) snprintf(outdir, sizeof outdir, "%.*s", (int)(slash - R->output), R->output);
    else snprintf(outdir, sizeof outdir, ".");
    if (!outdir[0]) snprintf(outdir, sizeof outdir, "/");
    /* absolute: the ELF files' paths in the profile must hold from any directory */
    if (realpath(outdir, abs)) snprintf(outdir, sizeof outdir, "%s", abs);
    if (access(outdir, W_OK) != 0)
        return fprintf(stderr, TOOL ": cannot write into %s (for %s): %s\n", outdir, R->output, strerror(errno)), 1;
    snprintf(R->priv, sizeof R->priv, "%s/.jitanon-record-XXXXXX", outdir);
    if (R->print_only) snprintf(R->priv, sizeof R->priv, "%s/.jitanon-record-<run>", outdir);
    else if (!mkdtemp(R->priv))
        return fprintf(stderr, TOOL ": cannot create a directory in %s: %s\n", outdir, strerror(errno)), 1;
    /* runtimes get absolute paths: they may change directory */
    if (R->priv[0] != '/' && realpath(R->priv, abs)) snprintf(R->priv, sizeof R->priv, "%s", abs);
    snprintf(R->raw, sizeof R->raw, "%s/perf.data", R->priv);
    if (!ic->o.elf_dir) { /* absolute, as inject_cli_finish makes --elf-dir */
        snprintf(R->elf_dir, sizeof R->elf_dir, "%s/jitted", realpath(outdir, abs) ? abs : outdir);
        ic->o.elf_dir = R->elf_dir;
    }
    if (!ic->o.jitdump_dir) ic->o.jitdump_dir = R->priv;
    return GO_ON;
}

/* The JVMTI agent into R->agent: beside this program (build/), or installed beside
   ../lib; "" when there is none. */
static void find_agent(run *R)
{
    char self[PATH_MAX], *s;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 64);
    if (n <= 0) return;
    self[n] = 0;
    if (!(s = strrchr(self, '/'))) return;
    strcpy(s, "/libjitanon-jvmti.so");
    if (access(self, R_OK) == 0) snprintf(R->agent, sizeof R->agent, "%s", self);
    else {
        strcpy(s, "/../lib/libjitanon-jvmti.so");
        if (access(self, R_OK) != 0 || !realpath(self, R->agent)) R->agent[0] = 0;
    }
}

/* -p: the running process's runtime (by its executable), whether it writes a jitdump
   already, and for a JVM jcmd's arguments to load the agent (record_program loads it). */
static int prepare_attach(run *R)
{
    char exe[PATH_MAX + 32], real[PATH_MAX], mapsf[64], line[4096], msg[1024];
    ssize_t n;
    int py, has_dump = 0;
    FILE *f;
    snprintf(exe, sizeof exe, "/proc/%ld/exe", R->attach_pid);
    n = readlink(exe, real, sizeof real - 1);
    if (n <= 0)
        return fprintf(stderr, TOOL ": no process %ld (or not ours to look at): %s\n", R->attach_pid, strerror(errno)), 1;
    real[n] = 0;
    R->r.kind = rt_of_name(base_name(real), &py);
    if (R->r.kind == RT_NONE && !strncmp(base_name(real), "beam", 4)) R->r.kind = RT_ERL;
    snprintf(mapsf, sizeof mapsf, "/proc/%ld/maps", R->attach_pid);
    if ((f = fopen(mapsf, "r"))) {
        while (fgets(line, sizeof line, f))
            if (strstr(line, "/jit-") && strstr(line, ".dump")) has_dump = 1;
        fclose(f);
    }
    add_pid(R, (uint32_t)R->attach_pid);
    if (R->r.kind == RT_JAVA && !R->no_jit && R->agent[0]) {
        char opt[sizeof R->priv + 8];
        int agent_ok = dcmd_arg(R->jcmd_agent, sizeof R->jcmd_agent, R->agent);
        snprintf(opt, sizeof opt, "dir=%s", R->priv);
        if (!agent_ok || !dcmd_arg(R->jcmd_opt, sizeof R->jcmd_opt, opt)) {
            fprintf(stderr, TOOL ": jcmd cannot pass %s to the JVM: it holds both ' and \" (or ends in \\), which "
                            "a diagnostic command's argument cannot; %s\n",
                    agent_ok ? R->priv : R->agent,
                    agent_ok ? "give -o FILE in another directory" : "put libjitanon-jvmti.so on another path");
            remove_tree(R->priv);
            return 1;
        }
        note(R, "java: the agent is loaded into the running JVM with jcmd PID JVMTI.agent_load");
    } else if (R->r.kind != RT_NONE && !has_dump) {
        snprintf(msg, sizeof msg,
                 "pid %ld runs %s and writes no jitdump: flags cannot be added to a running process; start it "
                 "with its flag (jitanon-record --print-command -- ... shows it) to get JIT names",
                 R->attach_pid, rt_names[R->r.kind]);
        note(R, msg);
    } else if (has_dump) {
        snprintf(msg, sizeof msg, "pid %ld already writes a jitdump: used as it is", R->attach_pid);
        note(R, msg);
    }
    return GO_ON;
}

/* A command: it must exist; copied into R->argv with its runtime's flags (detect). */
static int prepare_command(run *R, int argc, char **argv, int cmd)
{
    int i;
    char *found = resolve_path(argv[cmd]);
    if (!found) {
        fprintf(stderr, TOOL ": %s: %s\n", argv[cmd], strchr(argv[cmd], '/') ? strerror(errno) : "command not found");
        remove_tree(R->priv);
        return 127;
    }
    free(found);
    for (i = cmd; i < argc && R->argc < MAX_ARGS - 64; i++) R->argv[R->argc++] = xstrdup(argv[i]);
    R->argv[R->argc] = NULL;
    if (R->no_jit) note(R, "--no-jit-flags: recorded as it is");
    else detect(R);
    return GO_ON;
}

/* perf's trouble, said before the run; then the notes. */
static int check_perf(run *R)
{
    char msg[1024];
    int i;
    const char *problem = perf_problem(R, msg, sizeof msg);
    if (problem) {
        fprintf(stderr, TOOL ": %s\n", problem);
        remove_tree(R->priv);
        return 1;
    }
    if (!R->quiet)
        for (i = 0; i < R->nnotes; i++) fprintf(stderr, TOOL ": note: %s\n", R->notes[i]);
    return GO_ON;
}

/* The recording as it runs: perf, the signals that came, the file followed. */
typedef struct recording {
    pid_t perf;
    int status;       /* perf's wait status */
    int interrupted;  /* a Ctrl-C, SIGTERM or SIGHUP came */
    double t0;        /* when perf started */
    char me[PATH_MAX]; /* this program, which perf runs as the workload's first step ("": perf runs the command) */
    sigs S;
    tail t;
} recording;

/* Our handlers for SIGINT, SIGTERM and SIGHUP (on_signal, into *S); SIGPIPE ignored. */
static void catch_signals(sigs *S)
{
    struct sigaction sa;
    g_sigs = S;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* a closed stderr (| head) must not kill us before the cleanup */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigaction(SIGPIPE, &sa, NULL);
}

/* perf record (pa), with the default signal actions, SIGINT blocked when it runs the
   command through us (rc->me), and the runtime's environment.  Its pid, or -1. */
static pid_t start_perf(const run *R, const recording *rc, char **pa)
{
    struct sigaction sa;
    int i;
    pid_t perf = fork();
    if (perf != 0) return perf;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    if (!R->attach_pid && rc->me[0]) {
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);
    }
    for (i = 0; i < R->nenv; i++) setenv(R->env[i].name, R->env[i].value, 1);
    execvp("perf", pa);
    fprintf(stderr, TOOL ": cannot run perf: %s\n", strerror(errno));
    _exit(127);
}

/* -p of a JVM: the agent loaded with jcmd before perf starts.  It writes what the JVM
   compiled so far when it loads, and perf finds its marker among the process's mappings
   when it starts: every sample comes after the load records of the code it lands in.
   (Loaded once perf records instead, the samples taken while jcmd starts - a JVM
   itself, a second or more on a slow machine - would precede their code's records.) */
static void load_agent(run *R)
{
    pid_t j;
    int js;
    j = fork();
    if (j == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) dup2(nul, 1);
        execlp("jcmd", "jcmd", R->pidstr, "JVMTI.agent_load", R->jcmd_agent, R->jcmd_opt, (char *)NULL);
        fprintf(stderr, TOOL ": cannot run jcmd: %s\n", strerror(errno));
        _exit(127);
    }
    if (j <= 0) return;
    waitpid(j, &js, 0);
    if (!WIFEXITED(js) || WEXITSTATUS(js) != 0)
        fprintf(stderr, TOOL ": jcmd could not load the agent into %ld: recording without JIT names\n", R->attach_pid);
}

/* Until perf ends (its status into rc->status), following the recording and passing
   Ctrl-C on as record_program says. */
static void wait_perf(run *R, recording *rc)
{
    double t_int = 0;
    int forwarded = 0, stopped = 0;
    for (;;) {
        int st;
        pid_t w = waitpid(rc->perf, &st, WNOHANG);
        if (w == rc->perf) {
            rc->status = st;
            break;
        }
        if (w < 0 && errno != EINTR) break;
        if (rc->S.ints && !stopped && (R->attach_pid || !rc->me[0])) {
            kill(rc->perf, SIGINT); /* perf gets no SIGINT of its own here when it was not the terminal's */
            stopped = 1;
        } else if (rc->S.ints && !stopped) {
            double now = now_s();
            if (!t_int) {
                t_int = now;
                if (!R->quiet && isatty(2))
                    fprintf(stderr, "\r\033[K" TOOL ": waiting for the program to end (Ctrl-C again: stop it now)\n");
            }
            if (!rc->S.from_tty && !forwarded && now - t_int >= 1.0) {
                pid_t wl = workload_of(rc->perf);
                if (wl > 0) kill(wl, SIGINT);
                forwarded = 1;
            }
            if (rc->S.ints >= 2 || now - t_int >= GRACE_S) {
                kill(rc->perf, SIGTERM);
                stopped = 1;
            }
        }
        tail_poll(R, &rc->t);
        usleep(250000);
    }
}

/* Records the program.  Ctrl-C goes to the whole foreground group, but perf has SIGINT
   blocked: the program gets it alone and ends as it would without us (python unwinds, a
   server runs its handler, and each writes out the jitdump records it buffered), perf
   sees it end and stops.  A signal sent to us alone is passed on to the program after a
   second; a program still running GRACE_S after the first Ctrl-C, or a second Ctrl-C (a
   SIGINT at least BURST_S after the first: timeout(1) sends two at once), stops perf,
   which ends the program with SIGTERM.  With -p, perf stops at once.  GO_ON when perf
   recorded something. */
static int record_program(run *R, recording *rc)
{
    char *pa[MAX_ARGS + 32];
    struct stat sb;
    ssize_t n;
    catch_signals(&rc->S);
    n = readlink("/proc/self/exe", rc->me, sizeof rc->me - 1);
    rc->me[n > 0 ? n : 0] = 0;
    perf_argv(R, pa, MAX_ARGS + 32, rc->me[0] ? rc->me : NULL);
    if (R->attach_pid && R->r.kind == RT_JAVA && !R->no_jit && R->agent[0]) load_agent(R);
    rc->t0 = now_s();
    rc->perf = start_perf(R, rc, pa);
    if (rc->perf < 0) return fprintf(stderr, TOOL ": cannot start perf: %s\n", strerror(errno)), 1;
    g_perf_pid = rc->perf;
    /* one line, not a running count: the program writes to the same terminal */
    if (!R->quiet && isatty(2))
        fprintf(stderr, TOOL ": recording %s%s\n", R->attach_pid ? "pid " : base_name(R->argv[0]),
                R->attach_pid ? R->pidstr : " (Ctrl-C ends it; the profile follows)");
    wait_perf(R, rc);
    g_perf_pid = 0;
    rc->interrupted = rc->S.ints || rc->S.now;
    /* the rest of the records, up to the data section's end (the header now says it) */
    tail_poll(R, &rc->t);
    tail_close(&rc->t);
    if (!R->quiet && isatty(2)) fprintf(stderr, "\r\033[K");
    if (stat(R->raw, &sb) != 0 || sb.st_size == 0) {
        fprintf(stderr, TOOL ": perf recorded nothing (exit status %d%s): see its message above\n",
                WIFEXITED(rc->status) ? WEXITSTATUS(rc->status) : 128 + WTERMSIG(rc->status),
                rc->interrupted ? ", interrupted" : "");
        if (!R->keep) remove_tree(R->priv);
        return 1;
    }
    return GO_ON;
}

/* The injection's options for this run: the sampled per-function files only, perf maps
   carried in ELF files (they are removed at the end), P named in on_sample.  Returns
   whether the perf maps are kept (--perf-map=keep). */
static int inject_options(inject_cli *ic, prof *P)
{
    /* per-function files: a profile needs only those its samples and stacks land in
       (perf report opens no other): thousands fewer for a JVM or BEAM (region files
       are a few: all are written) */
    if (!ic->elf_files_set && ic->o.elf_layout == JITANON_ELF_PER_FUNCTION) ic->o.elf_files = JITANON_ELF_FILES_SAMPLED;
    /* the perf maps the runtimes wrote are removed at the end: their names go into
       the output (jitted-<pid>.map.so), so perf report names what they named */
    if (!ic->perf_map_set) ic->o.perf_map = JITANON_PERF_MAP_ELF;
    ic->o.on_sample = on_sample;
    ic->o.io.user = P;
    sy_set_demangle(&ic->o); /* C++ names as perf prints them (the cache is inject_cli's) */
    return ic->o.perf_map == JITANON_PERF_MAP_KEEP;
}

static void prof_init(prof *P, run *R)
{
    memset(P, 0, sizeof *P);
    P->R = R;
    fg_init(&P->tree);
    fg_init(&P->self);
    fg_init(&P->inner);
    P->has_inner = !strcmp(R->callgraph, "dwarf");
    P->names = (char(*)[NAME_LEN])xmalloc((MAX_FRAMES + 1) * sizeof *P->names);
    P->frames = (fg_frame *)xmalloc((MAX_FRAMES + 1) * sizeof *P->frames);
    snprintf(P->comm, sizeof P->comm, "%s", R->attach_pid ? rt_names[R->r.kind] : base_name(R->argv[0]));
}

static void prof_release(prof *P)
{
    fg_release(&P->tree);
    fg_release(&P->self);
    fg_release(&P->inner);
    free(P->names);
    free(P->frames);
}

/* The line on what was recorded and named, notes on what went wrong, the top functions. */
static void print_summary(const run *R, prof *P, const jitanon_inject_stats *st, double secs, int interrupted)
{
    /* with perf's stacks (DWARF), what was named is their frames in JIT code: python's
       JIT code is a trampoline per function, which few samples land in */
    uint64_t jit = P->has_inner ? P->stack_jit : P->jit;
    uint64_t named = P->has_inner ? P->stack_jit_named : P->jit_named + P->map_named;
    fprintf(stderr, TOOL ": %s%s, %.1f s, %" PRIu64 " samples, %" PRIu64 " %s in JIT code (%.1f%% named), %" PRIu64
                    " jitdump%s\n",
            rt_names[R->r.kind], interrupted ? " (interrupted)" : "", secs, P->total, jit,
            P->has_inner ? "stack frames" : "samples", jit ? 100.0 * (double)named / (double)jit : 100.0,
            st->dumps.loaded, st->dumps.loaded == 1 ? "" : "s");
    if (!st->dumps.markers && !R->no_jit && !R->attach_pid && R->r.kind != RT_NONE &&
        !(R->r.kind == RT_PYTHON && R->r.py_version < 313)) /* 3.12: a perf map */
        fprintf(stderr, "note: %s wrote no jitdump: the flags added (jitanon-record --print-command shows "
                        "them) did not reach the runtime, or it ran no JIT code\n",
                rt_names[R->r.kind]);
    if (interrupted && jit && named * 10 < jit * 9)
        fprintf(stderr, "note: %" PRIu64 " of the %" PRIu64 " in JIT code are unnamed: the program "
                        "ended on the signal before its runtime wrote out the jitdump records it buffered\n",
                jit - named, jit);
    /* Python's JIT code is a trampoline per function: its functions are the innermost
       py:: frames of the stacks, not the sampled addresses */
    if (R->top > 0 && P->total && P->has_inner && R->r.kind == RT_PYTHON)
        print_top(P, &P->inner, P->stack_samples, R->top, "  total  samples  python function (innermost py:: frame)");
    else if (R->top > 0 && P->total)
        print_top(P, &P->self, P->total, R->top, "   self  samples  function");
}

/* The flame graph: --svg's file, else the output's name with .svg for .data. */
static int write_svg(const run *R, const prof *P)
{
    char svg[2 * PATH_MAX];
    FILE *f;
    size_t n = strlen(R->output);
    if (R->svg) snprintf(svg, sizeof svg, "%s", R->svg);
    else if (n > 5 && !strcmp(R->output + n - 5, ".data")) snprintf(svg, sizeof svg, "%.*s.svg", (int)(n - 5), R->output);
    else snprintf(svg, sizeof svg, "%s.svg", R->output);
    f = fopen(svg, "w");
    if (f) fg_write_svg(&P->tree, f, R->attach_pid ? "jitanon-record" : R->argv[0]);
    if (!f || ferror(f) | fclose(f)) return fprintf(stderr, TOOL ": cannot write %s: %s\n", svg, strerror(errno)), 1;
    if (!R->quiet) fprintf(stderr, "flame graph: %s\n", svg);
    return 0;
}

static int write_folded(const run *R, const prof *P)
{
    FILE *f = fopen(R->folded, "w");
    if (f) fg_write_folded(&P->tree, f);
    if (!f || ferror(f) | fclose(f)) return fprintf(stderr, TOOL ": cannot write %s: %s\n", R->folded, strerror(errno)), 1;
    return 0;
}

/* The symbolize beside this program, its path into sym, when it has --pprof (a symbolize
   from before pprof says so in its --help: asked first).  0 when there is none such. */
static int find_symbolize(char *sym, size_t cap)
{
    char *hv[] = {sym, (char *)"--help", NULL}, help[4096], *s;
    int fd, hs;
    size_t got = 0;
    ssize_t k, n = readlink("/proc/self/exe", sym, cap - 16);
    pid_t h;
    if (n <= 0) return 0;
    sym[n] = 0;
    s = strrchr(sym, '/');
    strcpy(s ? s + 1 : sym, "symbolize");
    if ((h = spawn_reading(hv, &fd)) > 0) {
        while (got < sizeof help - 1 && (k = read(fd, help + got, sizeof help - 1 - got)) > 0) got += (size_t)k;
        close(fd);
        waitpid(h, &hs, 0);
    }
    help[got] = 0;
    return strstr(help, "--pprof") != NULL;
}

/* --pprof: the pprof encoder is symbolize's (tools/pprof.h): run it on the recording. */
static int write_pprof(const run *R)
{
    char sym[PATH_MAX];
    int have = find_symbolize(sym, sizeof sym), ps = 1;
    pid_t p = have ? fork() : -1;
    if (p == 0) {
        execl(sym, "symbolize", "--pprof", R->pprof, "--jitdump-dir", R->priv, R->raw, (char *)NULL);
        _exit(127);
    }
    if (p > 0) waitpid(p, &ps, 0);
    if (p <= 0 || !WIFEXITED(ps) || WEXITSTATUS(ps) != 0) {
        fprintf(stderr, TOOL ": no pprof profile: %s\n",
                !have ? "no symbolize with --pprof beside jitanon-record (make builds it, make install installs it)"
                      : "symbolize --pprof failed (its message is above)");
        return 1;
    }
    if (!R->quiet) fprintf(stderr, "pprof: %s\n", R->pprof);
    return 0;
}

/* Where the profile and the rest went (they add up over runs), and what --clean removes. */
static void print_where(const run *R, const inject_cli *ic, const prof *P, const jitanon_inject_stats *st, int map_keep)
{
    char cdir[PATH_MAX];
    const char *cache = ic->no_cache ? NULL : ic->cache_dir ? ic->cache_dir : "~/.debug";
    int own = ic->o.elf_dir != R->elf_dir, deflt = !strcmp(R->output, "perf.jit.data");
    if (P->map_named && !R->keep && map_keep)
        fprintf(stderr, "note: %" PRIu64 " samples were named from perf maps, which are removed now: perf "
                        "report will not name them (--keep keeps the maps)\n", P->map_named);
    fprintf(stderr, "profile: %s   (perf report -i %s)\n", R->output, R->output);
    if (!st->elf.files) return;
    if (cache && !ic->cache_dir && jitanon_buildid_cache_dir(cdir, sizeof cdir, NULL) == JITANON_OK) cache = cdir;
    fprintf(stderr, "ELF files: %s/ (%" PRIu64 " new)%s%s%s; " TOOL " --clean%s%s removes %s\n", ic->o.elf_dir,
            st->elf.files, cache ? ", copied into perf's build-id cache (" : "", cache ? cache : "", cache ? ")" : "",
            own ? " --elf-dir " : deflt ? "" : " -o ", own ? ic->o.elf_dir : deflt ? "" : R->output,
            cache ? "both" : "them");
}

/* What the injection gave: the summary, the files asked for, where they went. */
static int report(const run *R, const inject_cli *ic, prof *P, const jitanon_inject_stats *st, double secs,
                  int interrupted, int map_keep)
{
    int status = 0;
    if (!R->quiet) print_summary(R, P, st, secs, interrupted);
    if (ic->stats)
        fprintf(stderr, "records in %" PRIu64 ", out %" PRIu64 "; jitdumps loaded %" PRIu64 ", unusable %" PRIu64
                        "; ELF files %" PRIu64 "; anon kept %" PRIu64 ", split %" PRIu64 ", dropped %" PRIu64 "\n",
                st->read.records, st->write.records, st->dumps.loaded, st->dumps.failed, st->elf.files, st->trim.kept,
                st->trim.split, st->trim.dropped);
    if (!R->no_svg && write_svg(R, P) != 0) status = 1;
    if (R->folded && write_folded(R, P) != 0) status = 1;
    if (R->pprof && write_pprof(R) != 0) status = 1;
    if (!R->quiet) print_where(R, ic, P, st, map_keep);
    return status;
}

/* Injects the recording into R->output, naming every sample and its stack on the way
   (secs: how long it ran), and reports it. */
static int inject_and_report(run *R, inject_cli *ic, double secs, int interrupted)
{
    prof P;
    jitanon_inject_stats st;
    jitanon_error err;
    jitanon_result r;
    char msg[1024];
    int status, map_keep;
    memset(&st, 0, sizeof st);
    prof_init(&P, R);
    map_keep = inject_options(ic, &P);
    if (!R->quiet && isatty(2)) fprintf(stderr, TOOL ": injecting %" PRIu64 " samples...", R->samples);
    r = jitanon_inject_file(R->raw, R->output, JITANON_PERF_FILE, &ic->o, &ic->po, &st, &err);
    if (!R->quiet && isatty(2)) fprintf(stderr, "\r\033[K");
    inject_cli_release(ic);
    if (r != JITANON_OK) {
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, TOOL ": injecting %s: %s\n", R->raw, msg);
        status = 1;
    } else status = report(R, ic, &P, &st, secs, interrupted, map_keep);
    prof_release(&P);
    return status;
}

/* What the runtimes wrote for this run goes, unless asked to keep it; R's memory. */
static void finish(run *R)
{
    int i;
    if (R->keep) fprintf(stderr, TOOL ": kept the recording, and what the runtime wrote there, in %s\n", R->priv);
    /* an attached process was started by the user: what it writes is theirs */
    if (!R->attach_pid) {
        remove_by_pid(R, "/tmp", R->keep);
        if (strcmp(R->cwd, "/tmp")) remove_by_pid(R, R->cwd, R->keep);
    }
    if (!R->keep) remove_tree(R->priv);
    for (i = 0; i < R->argc; i++) free(R->argv[i]);
    for (i = 0; i < R->nenv; i++) free(R->env[i].name), free(R->env[i].value);
    for (i = 0; i < R->nnotes; i++) free(R->notes[i]);
    free(R->pids);
}

int main(int argc, char **argv)
{
    static run R;         /* large: off the stack */
    static recording rc;  /* (g_sigs points into it) */
    inject_cli ic;
    int i, status, cmd = -1, do_clean = 0;
    double secs;
    if (argc > 2 && !strcmp(argv[1], WORKLOAD_OPT)) return run_workload(argv + 2);
    inject_cli_init(&ic);
    if ((status = parse_args(&R, &ic, argc, argv, &cmd, &do_clean)) != GO_ON) return status;
    if (do_clean) return clean_output(&R, &ic);
    if ((status = check_command(&R, argc, cmd)) != GO_ON || (status = make_dirs(&R, &ic)) != GO_ON) return status;
    find_agent(&R);
    R.start = time(NULL);
    status = R.attach_pid ? prepare_attach(&R) : prepare_command(&R, argc, argv, cmd);
    if (status != GO_ON) return status;
    if (!R.callgraph) R.callgraph = callgraph_of(&R.r);
    if (R.print_only) {
        print_command(&R, stdout);
        for (i = 0; i < R.nnotes; i++) printf("# %s\n", R.notes[i]);
        return 0;
    }
    if ((status = check_perf(&R)) != GO_ON || (status = record_program(&R, &rc)) != GO_ON) return status;
    secs = now_s() - rc.t0;
    if (inject_cli_finish(&ic, TOOL) != 0) return 1;
    status = inject_and_report(&R, &ic, secs, rc.interrupted);
    finish(&R);
    return status;
}
