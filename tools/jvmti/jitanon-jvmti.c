/* jitanon-jvmti - a JVMTI agent that writes a jitdump for HotSpot's compiled code, so
   `perf record -k mono` + jitanon-inject (or perf inject --jit) name Java methods and
   `perf annotate` shows their .java lines.  Written from the JVMTI specification (the
   JDK's jvmti.h and jvmticmlr.h) on jitanon's jitdump writer.

   usage: java -agentpath:/path/to/libjitanon-jvmti.so[=OPTIONS] -XX:+PreserveFramePointer App
      or: jcmd PID JVMTI.agent_load /path/to/libjitanon-jvmti.so '"OPTIONS"'  (a running JVM)
   OPTIONS, comma-separated:
       dir=DIR          where jit-<pid>.dump goes (default: the current directory)
       names=java       com.example.Hot.spin, as in a Java stack trace (default)
       names=signature  com.example.Hot.spin(long, java.lang.String): overloads apart
       names=jvm        Lcom/example/Hot;.spin(JLjava/lang/String;)J, the JVM's own form
       nodebug          no DEBUG_INFO (no line tables; smaller dump, less work per compile)

   What goes into the dump:
   - a CODE_LOAD for every compiled method (CompiledMethodLoad) and every piece of code
     HotSpot generates itself (DynamicCodeGenerated: the interpreter, stubs, adapters),
     with the code that was there before the agent started replayed (GenerateEvents);
   - before each method's LOAD, a DEBUG_INFO mapping every pc HotSpot describes to
     file:line: the pc's innermost frame (the inlined method the code came from, from
     JVMTI_CMLR_INLINE_INFO) and its bci, through that method's line number table.  A
     frame without a line table (no -g:lines, a native method, a generated class) gives
     way to the next outer frame that has one; a pc without any gets no entry.  File
     names are the package path plus the class's SourceFile (com/example/Hot.java).
   Names follow Java stack traces (package.Class.method) by default because that is the
   form Java users read every day (exceptions, jstack, JFR, IDE profilers); the JVM's
   descriptor form is there for tools that expect perf's own agent's names.

   Threads: JVMTI calls the callbacks on any thread (compiler threads, the VM thread);
   one raw monitor serialises the writer, so a DEBUG_INFO is directly followed by its
   LOAD.  At VMDeath the dump is closed (CODE_CLOSE); later events are ignored.
   CompiledMethodUnload writes nothing: jitdump has no unload record, and the code's
   address range is taken over by the next LOAD placed there.

   Build: make (build/libjitanon-jvmti.so, when the JDK's include/jvmti.h is found). */
#define _GNU_SOURCE
#define JITANON_IMPLEMENTATION
#define JITANON_STATIC
#include "../../jitanon.h"

#include <jvmti.h>
#include <jvmticmlr.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { NAMES_JAVA, NAMES_SIGNATURE, NAMES_JVM };

typedef struct agent {
    jvmtiEnv *jvmti;
    jrawMonitorID lock;
    jitanon_jitdump_file file;
    int open;          /* the dump is open (until VMDeath) */
    int names, debug;
    uint64_t code_index;
    /* Every [addr, addr + size) written, so that the replay at VMInit (which posts all
       generated code and compiled methods again) adds only what was missed. */
    uint64_t *seen;    /* open addressing: addr, size pairs; addr 0 = empty */
    size_t seen_cap, seen_n;
    uint32_t replay_tid; /* the thread running GenerateEvents, 0 otherwise */
    char dir[4096];
} agent;

/* JVMTI hands callbacks only the environment: the agent is its environment-local storage. */
static agent *agent_of(jvmtiEnv *jvmti)
{
    void *p = NULL;
    (*jvmti)->GetEnvironmentLocalStorage(jvmti, &p);
    return (agent *)p;
}

static void jfree(jvmtiEnv *jvmti, void *p)
{
    if (p) (*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

/* Room for one more element in *p (n used of *cap); 0 when memory is short. */
static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    size_t c;
    void *q;
    if (n < *cap) return 1;
    c = *cap ? *cap * 2 : 16;
    if (!(q = realloc(*p, c * elem))) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* A growing string; on allocation failure it stays short (a name is then cut, never wrong). */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    while (b->n + n + 1 > b->cap) {
        void *s0 = b->s;
        int ok = grow(&s0, &b->cap, b->cap, 1);
        b->s = (char *)s0;
        if (!ok) return;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Class descriptor "Lcom/example/Hot;" (or "com/example/Hot") to "com.example.Hot". */
static void sb_class(sbuf *b, const char *d, size_t n)
{
    size_t i;
    if (n >= 2 && d[0] == 'L' && d[n - 1] == ';') d++, n -= 2;
    for (i = 0; i < n; i++) sb_put(b, d[i] == '/' ? "." : d + i, 1);
}

/* One field type of a method descriptor, as Java source writes it; returns the rest. */
static const char *sb_type(sbuf *b, const char *d)
{
    static const char *const prim[][2] = {{"B", "byte"},   {"C", "char"}, {"D", "double"}, {"F", "float"},
                                          {"I", "int"},    {"J", "long"}, {"S", "short"},  {"Z", "boolean"},
                                          {"V", "void"}};
    size_t dims = 0, i;
    while (*d == '[') d++, dims++;
    if (*d == 'L') {
        const char *end = strchr(d, ';');
        if (!end) return d + strlen(d);
        sb_class(b, d, (size_t)(end - d + 1));
        d = end + 1;
    } else if (*d) {
        for (i = 0; i < sizeof prim / sizeof prim[0]; i++)
            if (*d == prim[i][0][0]) sb_str(b, prim[i][1]);
        d++;
    }
    while (dims--) sb_str(b, "[]");
    return d;
}

/* The symbol name of a method in the chosen style (caller frees). */
static char *method_name(agent *a, jmethodID m)
{
    jvmtiEnv *jvmti = a->jvmti;
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass cls = NULL;
    sbuf b = {NULL, 0, 0};
    if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE) name = sig = NULL;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE)
        if ((*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) != JVMTI_ERROR_NONE) csig = NULL;
    if (a->names == NAMES_JVM) {
        sb_str(&b, csig ? csig : "?");
        sb_str(&b, ".");
        sb_str(&b, name ? name : "?");
        sb_str(&b, sig ? sig : "");
    } else {
        if (csig) sb_class(&b, csig, strlen(csig));
        else sb_str(&b, "?");
        sb_str(&b, ".");
        sb_str(&b, name ? name : "?");
        if (a->names == NAMES_SIGNATURE && sig && sig[0] == '(') {
            const char *d = sig + 1;
            sb_str(&b, "(");
            while (*d && *d != ')') {
                if (d != sig + 1) sb_str(&b, ", ");
                d = sb_type(&b, d);
            }
            sb_str(&b, ")");
        }
    }
    jfree(jvmti, name);
    jfree(jvmti, sig);
    jfree(jvmti, csig);
    return b.s ? b.s : strdup("?");
}

/* -- Line tables: bci -> line for each method met in one compiled method. -- */

typedef struct method_lines {
    jmethodID method;
    jvmtiLineNumberEntry *table; /* NULL: no line table */
    jint count;
    char *file;                  /* com/example/Hot.java, NULL when unknown */
} method_lines;

typedef struct line_cache {
    method_lines *m;
    size_t n, cap;
} line_cache;

/* Package path of the class + its SourceFile attribute. */
static char *source_file(jvmtiEnv *jvmti, jmethodID m)
{
    jclass cls = NULL;
    char *src = NULL, *csig = NULL, *out = NULL;
    sbuf b = {NULL, 0, 0};
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) != JVMTI_ERROR_NONE) return NULL;
    if ((*jvmti)->GetSourceFileName(jvmti, cls, &src) != JVMTI_ERROR_NONE) return NULL;
    if ((*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE && csig[0] == 'L') {
        const char *slash = strrchr(csig, '/');
        if (slash) sb_put(&b, csig + 1, (size_t)(slash - csig));
    }
    sb_str(&b, src);
    jfree(jvmti, src);
    jfree(jvmti, csig);
    out = b.s;
    return out;
}

static method_lines *lines_of(jvmtiEnv *jvmti, line_cache *c, jmethodID m)
{
    size_t i;
    method_lines *ml;
    for (i = 0; i < c->n; i++)
        if (c->m[i].method == m) return &c->m[i];
    {
        void *m0 = c->m;
        int ok = grow(&m0, &c->cap, c->n, sizeof *c->m);
        c->m = (method_lines *)m0;
        if (!ok) return NULL;
    }
    ml = &c->m[c->n++];
    memset(ml, 0, sizeof *ml);
    ml->method = m;
    /* ABSENT_INFORMATION (compiled without -g:lines), NATIVE_METHOD, ...: no table. */
    if ((*jvmti)->GetLineNumberTable(jvmti, m, &ml->count, &ml->table) != JVMTI_ERROR_NONE) {
        ml->table = NULL;
        ml->count = 0;
    }
    if (ml->table) ml->file = source_file(jvmti, m);
    return ml;
}

/* The line of `bci`: the entry with the largest start_location <= bci.  0: none. */
static jint line_at(const method_lines *ml, jint bci)
{
    jint i, line = 0;
    jlocation best = -1;
    for (i = 0; i < ml->count; i++)
        if (ml->table[i].start_location <= bci && ml->table[i].start_location > best) {
            best = ml->table[i].start_location;
            line = ml->table[i].line_number;
        }
    return line;
}

static void cache_free(jvmtiEnv *jvmti, line_cache *c)
{
    size_t i;
    for (i = 0; i < c->n; i++) {
        jfree(jvmti, c->m[i].table);
        free(c->m[i].file);
    }
    free(c->m);
}

typedef struct entries {
    jitanon_jitdump_debug_entry *e;
    size_t n, cap;
} entries;

/* Adds pc -> frames' line, innermost frame with a line first; equal neighbours merge. */
static void add_entry(entries *es, uint64_t pc, const method_lines *ml, jint line)
{
    jitanon_jitdump_debug_entry *e;
    void *e0;
    int ok;
    if (es->n && es->e[es->n - 1].lineno == line && es->e[es->n - 1].file.data == ml->file) return;
    e0 = es->e;
    ok = grow(&e0, &es->cap, es->n, sizeof *es->e);
    es->e = (jitanon_jitdump_debug_entry *)e0;
    if (!ok) return;
    e = &es->e[es->n++];
    memset(e, 0, sizeof *e);
    e->addr = pc;
    e->lineno = line;
    e->file.data = ml->file;
    e->file.length = strlen(ml->file);
}

static void add_frames(jvmtiEnv *jvmti, line_cache *c, entries *es, uint64_t pc, jint nframes, const jmethodID *methods,
                       const jint *bcis)
{
    jint f;
    for (f = 0; f < nframes; f++) {
        method_lines *ml = lines_of(jvmti, c, methods[f]);
        jint line;
        if (!ml || !ml->table || !ml->file || bcis[f] < 0) continue;
        if ((line = line_at(ml, bcis[f])) <= 0) continue;
        add_entry(es, pc, ml, line);
        return;
    }
}

/* pc -> file:line for a compiled method: from the inlining records when HotSpot gives
   them (every pc with its full compile-time stack), else from the plain pc -> bci map. */
static void debug_entries(jvmtiEnv *jvmti, line_cache *c, entries *es, jmethodID method, const void *code_addr,
                          jint code_size, jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info)
{
    const jvmtiCompiledMethodLoadRecordHeader *h = (const jvmtiCompiledMethodLoadRecordHeader *)compile_info;
    uintptr_t lo = (uintptr_t)code_addr, hi = lo + (uintptr_t)code_size;
    int inline_info = 0;
    jint i;
    for (; h; h = h->next) {
        const jvmtiCompiledMethodLoadInlineRecord *r;
        if (h->kind != JVMTI_CMLR_INLINE_INFO) continue;
        r = (const jvmtiCompiledMethodLoadInlineRecord *)h;
        for (i = 0; i < r->numpcs; i++) {
            const PCStackInfo *p = &r->pcinfo[i];
            uintptr_t pc = (uintptr_t)p->pc;
            if (pc < lo || pc >= hi || p->numstackframes <= 0) continue;
            add_frames(jvmti, c, es, (uint64_t)pc, p->numstackframes, p->methods, p->bcis);
        }
        inline_info = 1;
    }
    if (inline_info || !map) return;
    for (i = 0; i < map_length; i++) {
        uintptr_t pc = (uintptr_t)map[i].start_address;
        jint bci = (jint)map[i].location;
        if (pc >= lo && pc < hi) add_frames(jvmti, c, es, (uint64_t)pc, 1, &method, &bci);
    }
}

/* -- Writing, under the monitor. -- */

static uint32_t thread_id(void) { return (uint32_t)syscall(SYS_gettid); }

static size_t seen_slot(const uint64_t *t, size_t cap, uint64_t addr)
{
    size_t i = (size_t)((addr >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (t[2 * i] && t[2 * i] != addr) i = (i + 1) & (cap - 1);
    return i;
}

/* Records [addr, addr + size); returns 1 when exactly that range was recorded before. */
static int seen_before(agent *a, uint64_t addr, uint64_t size)
{
    size_t i;
    if (!addr) return 0;
    if ((a->seen_n + 1) * 2 > a->seen_cap) {
        size_t cap = a->seen_cap ? a->seen_cap * 2 : 1024, k;
        uint64_t *t = (uint64_t *)calloc(cap, 2 * sizeof *t);
        if (!t) return 0; /* then duplicates are written: harmless, the later load wins */
        for (k = 0; k < a->seen_cap; k++)
            if (a->seen[2 * k]) {
                size_t j = seen_slot(t, cap, a->seen[2 * k]);
                t[2 * j] = a->seen[2 * k];
                t[2 * j + 1] = a->seen[2 * k + 1];
            }
        free(a->seen);
        a->seen = t;
        a->seen_cap = cap;
    }
    i = seen_slot(a->seen, a->seen_cap, addr);
    if (a->seen[2 * i] == addr && a->seen[2 * i + 1] == size) return 1;
    if (!a->seen[2 * i]) a->seen_n++;
    a->seen[2 * i] = addr;
    a->seen[2 * i + 1] = size;
    return 0;
}

/* Whether to skip a load of [addr, addr + size): on the thread replaying at VMInit, when
   that range was written already (outside the replay, code placed where other code was,
   even with the same size, is written again).  The caller holds the lock. */
static int replayed_twice(agent *a, const void *addr, jint size)
{
    int dup = seen_before(a, (uint64_t)(uintptr_t)addr, (uint64_t)size);
    return dup && a->replay_tid && a->replay_tid == thread_id();
}

/* LOAD of [addr, addr + size) named `name`; the caller holds the lock. */
static void write_load(agent *a, const char *name, const void *addr, jint size)
{
    jitanon_jitdump_record r;
    memset(&r, 0, sizeof r);
    r.id = JITANON_JITDUMP_CODE_LOAD;
    r.timestamp = jitanon_jitdump_now();
    r.load.pid = (uint32_t)getpid();
    r.load.tid = thread_id();
    r.load.vma = r.load.code_addr = (uint64_t)(uintptr_t)addr;
    r.load.code_size = (uint64_t)size;
    r.load.code.data = (const uint8_t *)addr;
    r.load.code.size = (size_t)size;
    r.load.code_index = a->code_index++;
    r.load.name.data = name;
    r.load.name.length = strlen(name);
    if (jitanon_jitdump_write(&a->file.writer, &r, NULL) != JITANON_OK) {
        fprintf(stderr, "jitanon-jvmti: cannot write the jitdump; no more records\n");
        a->open = 0;
    }
}

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size, const void *code_addr,
                                            jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info)
{
    agent *a = agent_of(jvmti);
    line_cache c = {NULL, 0, 0};
    entries es = {NULL, 0, 0};
    char *name;
    if (!a || code_size <= 0 || !code_addr) return;
    /* JVMTI queries outside the lock: they may block on VM locks of their own. */
    name = method_name(a, method);
    if (a->debug) debug_entries(jvmti, &c, &es, method, code_addr, code_size, map_length, map, compile_info);
    (*jvmti)->RawMonitorEnter(jvmti, a->lock);
    if (a->open && es.n &&
        jitanon_jitdump_write_debug_info(&a->file.writer, jitanon_jitdump_now(), (uint64_t)(uintptr_t)code_addr, es.e,
                                         es.n, NULL) != JITANON_OK) {
        fprintf(stderr, "jitanon-jvmti: cannot write the jitdump; no more records\n");
        a->open = 0;
    }
    if (a->open && !replayed_twice(a, code_addr, code_size)) write_load(a, name, code_addr, code_size);
    (*jvmti)->RawMonitorExit(jvmti, a->lock);
    free(es.e);
    cache_free(jvmti, &c);
    free(name);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
    (void)jvmti, (void)method, (void)code_addr; /* see the top comment */
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address, jint length)
{
    agent *a = agent_of(jvmti);
    if (!a || length <= 0 || !address) return;
    (*jvmti)->RawMonitorEnter(jvmti, a->lock);
    if (a->open && !replayed_twice(a, address, length)) write_load(a, name ? name : "stub", address, length);
    (*jvmti)->RawMonitorExit(jvmti, a->lock);
}

/* What was compiled or generated before the events were on comes again now. */
static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    agent *a = agent_of(jvmti);
    (void)jni, (void)thread;
    if (!a) return;
    (*jvmti)->RawMonitorEnter(jvmti, a->lock);
    a->replay_tid = thread_id();
    (*jvmti)->RawMonitorExit(jvmti, a->lock);
    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    (*jvmti)->RawMonitorEnter(jvmti, a->lock);
    a->replay_tid = 0;
    (*jvmti)->RawMonitorExit(jvmti, a->lock);
}

static void close_dump(agent *a)
{
    jvmtiEnv *jvmti = a->jvmti;
    (*jvmti)->RawMonitorEnter(jvmti, a->lock);
    if (a->open) {
        a->open = 0;
        jitanon_jitdump_file_close(&a->file, NULL);
    }
    (*jvmti)->RawMonitorExit(jvmti, a->lock);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    agent *a = agent_of(jvmti);
    (void)jni;
    if (a) close_dump(a);
}

/* -- Start-up. -- */

static int parse_options(agent *a, const char *opts)
{
    const char *p = opts;
    a->names = NAMES_JAVA;
    a->debug = 1;
    strcpy(a->dir, ".");
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 4 && !strncmp(p, "dir=", 4) && n - 4 < sizeof a->dir) {
            memcpy(a->dir, p + 4, n - 4);
            a->dir[n - 4] = 0;
        } else if (n == 10 && !strncmp(p, "names=java", 10)) a->names = NAMES_JAVA;
        else if (n == 15 && !strncmp(p, "names=signature", 15)) a->names = NAMES_SIGNATURE;
        else if (n == 9 && !strncmp(p, "names=jvm", 9)) a->names = NAMES_JVM;
        else if (n == 7 && !strncmp(p, "nodebug", 7)) a->debug = 0;
        else if (n) {
            fprintf(stderr, "jitanon-jvmti: unknown option '%.*s' (dir=DIR, names=java|signature|jvm, nodebug)\n",
                    (int)n, p);
            return 0;
        }
        p = end ? end + 1 : NULL;
    }
    return 1;
}

static jint start(JavaVM *vm, char *options, int live)
{
    jvmtiEnv *jvmti = NULL;
    jvmtiCapabilities caps;
    jvmtiEventCallbacks cb;
    jitanon_error err;
    agent *a;
    static const jvmtiEvent events[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                                        JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_VM_INIT,
                                        JVMTI_EVENT_VM_DEATH};
    size_t i;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
        fprintf(stderr, "jitanon-jvmti: no JVMTI 1.2 environment\n");
        return JNI_ERR;
    }
    if (!(a = (agent *)calloc(1, sizeof *a))) return JNI_ERR;
    a->jvmti = jvmti;
    if (!parse_options(a, options)) {
        free(a);
        return JNI_ERR;
    }
    memset(&caps, 0, sizeof caps);
    caps.can_generate_compiled_method_load_events = 1;
    if (a->debug) caps.can_get_line_numbers = caps.can_get_source_file_name = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "jitanon-jvmti: the JVM refuses the capabilities (compiled method events, lines)\n");
        free(a);
        return JNI_ERR;
    }
    if ((*jvmti)->CreateRawMonitor(jvmti, "jitanon-jvmti", &a->lock) != JVMTI_ERROR_NONE) {
        free(a);
        return JNI_ERR;
    }
    if (jitanon_jitdump_file_open(&a->file, a->dir, 0 /* this machine's */, &err) != JITANON_OK) {
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "jitanon-jvmti: cannot create the jitdump in %s: %s\n", a->dir, msg);
        free(a);
        return JNI_ERR;
    }
    a->open = 1;
    (*jvmti)->SetEnvironmentLocalStorage(jvmti, a);
    memset(&cb, 0, sizeof cb);
    cb.CompiledMethodLoad = on_compiled_method_load;
    cb.CompiledMethodUnload = on_compiled_method_unload;
    cb.DynamicCodeGenerated = on_dynamic_code;
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb);
    for (i = 0; i < sizeof events / sizeof events[0]; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
    if (live) on_vm_init(jvmti, NULL, NULL); /* attached to a running VM: VMInit is past */
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 0);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 1);
}
