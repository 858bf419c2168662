/* symbols.h: what a tool adds to the library for native names
   (JITANON_FRAME_WANT_SYMBOL): C++ names demangled as perf 6.1 prints them, and perf's
   build-id cache opened for the files perf record copied there.  Needs jitanon.h.

       jitanon_buildid_cache cache;
       int have = sy_setup(&opts, &cache, 1);   // opts.demangle, opts.buildid_cache
       sy_set_demangle(&opts);                  // opts.demangle alone
       ...
       if (have) jitanon_buildid_cache_release(&cache);

   The demangler is libstdc++'s __cxa_demangle when the program links it (the Makefile
   passes -DJITANON_CXA_DEMANGLE -lstdc++ when it can; compiled as C++ it always does);
   without it names come as stored.  Not part of jitanon.h (which stays libc-only). */
#ifndef SYMBOLS_H
#define SYMBOLS_H

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__GNUC__) || defined(__clang__)
#define SY_DEF static __attribute__((unused)) /* each tool uses a part */
#else
#define SY_DEF static
#endif

#if defined(__cplusplus) && !defined(JITANON_CXA_DEMANGLE)
#define JITANON_CXA_DEMANGLE 1
#endif
#ifdef JITANON_CXA_DEMANGLE
/* libstdc++'s demangler (C linkage: a C program links it with -lstdc++) */
#ifdef __cplusplus
extern "C"
#endif
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* perf 6.1 prints a C++ name without its parameters and return type (the demangler's
   default options): "long ns::spin<long>(std::vector<long>&) const [clone .cold]" is
   "ns::spin<long>", while the parameters of a function a lambda or local class is in
   stay ("f(int)::{lambda()#1}::operator()").  Cuts d in place: a " [clone ...]" suffix,
   then the last parameter list when the name ends with it (and its qualifiers), then a
   return type before the last top-level space that is not in an operator's name. */
SY_DEF size_t sy_perf_style(char *d, size_t n)
{
    static const char *const quals[] = {" const", " volatile", " &&", " &"};
    const char *c = strstr(d, " [clone ");
    size_t i, k, end, space = 0;
    int depth = 0, again = 1;
    /* a thunk's target is printed whole, its parameters too ("non-virtual thunk to
       A::f(int)"), as the demangler prints special names whatever its options */
    if (!strncmp(d, "non-virtual thunk to ", 21) || !strncmp(d, "virtual thunk to ", 17) ||
        !strncmp(d, "covariant return thunk to ", 26) || !strncmp(d, "transaction clone for ", 22) ||
        !strncmp(d, "non-transaction clone for ", 26))
        return n;
    if (c) n = (size_t)(c - d);
    end = n;
    while (again) { /* the qualifiers after the parameters */
        again = 0;
        for (k = 0; k < 4; k++) {
            size_t q = strlen(quals[k]);
            if (end >= q && !memcmp(d + end - q, quals[k], q)) end -= q, again = 1;
        }
    }
    if (end && d[end - 1] == ')') {
        for (i = end; i-- > 0;) {
            if (d[i] == ')') depth++;
            else if (d[i] == '(' && --depth == 0) break;
        }
        if (i < end) n = i;
    }
    d[n] = 0;
    for (i = 0, depth = 0; i < n; i++) {
        if (d[i] == '<' || d[i] == '(' || d[i] == '[' || d[i] == '{') depth++;
        else if (d[i] == '>' || d[i] == ')' || d[i] == ']' || d[i] == '}') depth--;
        else if (d[i] == ' ' && depth == 0 && !(i >= 8 && !strncmp(d + i - 8, "operator", 8))) space = i + 1;
    }
    if (space) memmove(d, d + space, n - space + 1), n -= space;
    return n;
}

/* A nested name ("_ZN...E" and its parameters) that libstdc++ rejects as a whole:
   perf 6.1 asks its demangler for no parameters, which then reads none of them, so a
   name whose parameters it cannot read is still demangled (V8's String::GetImpl
   dispatcher in node, a substitution in its last parameter: c++filt -p demangles it,
   c++filt does not).  Here: the name cut back from its end a character at a time, at
   most SY_CUTS times, with no parameters ("v") in place of the rest, until libstdc++
   takes it.  A nested name is whole only with its closing E, so a cut never shortens
   the name itself; what remains of the parameters is dropped as perf drops them. */
#define SY_CUTS 64
SY_DEF char *sy_demangle_head(const char *name)
{
    size_t len = strcspn(name, "."), k; /* (a clone suffix: perf does not print it) */
    char *t, *d = NULL;
    int status = 0;
    if (strncmp(name, "_ZN", 3) || len < 5 || !(t = (char *)malloc(len + 2))) return NULL;
    for (k = len - 1; k > 3 && k + SY_CUTS >= len && !d; k--) {
        memcpy(t, name, k);
        t[k] = 'v', t[k + 1] = 0;
        if ((d = __cxa_demangle(t, NULL, NULL, &status)) != NULL && status != 0) free(d), d = NULL;
    }
    free(t);
    return d;
}

SY_DEF size_t sy_demangle(void *user, const char *name, char *out, size_t cap)
{
    int status = 0;
    size_t n;
    char *d;
    (void)user;
    if (name[0] != '_' || name[1] != 'Z') return 0;
    d = __cxa_demangle(name, NULL, NULL, &status);
    if (!d || status != 0) {
        free(d);
        /* -2: not a name libstdc++ reads whole; perf may still read its head */
        if (status != -2 || !(d = sy_demangle_head(name))) return 0;
    }
    n = sy_perf_style(d, strlen(d));
    if (n < cap) memcpy(out, d, n + 1);
    free(d);
    return n;
}
#endif

/* opts->demangle: the demangler, when the program has one. */
SY_DEF void sy_set_demangle(jitanon_inject_opts *o)
{
#ifdef JITANON_CXA_DEMANGLE
    o->demangle = sy_demangle;
#endif
    (void)o;
}

/* opts->demangle (when `demangle` and the program has a demangler) and
   opts->buildid_cache: perf's cache, read only, so only when it is there (cache is then
   set up and the caller releases it: returns 1). */
SY_DEF int sy_setup(jitanon_inject_opts *o, jitanon_buildid_cache *cache, int demangle)
{
    char dir[4096];
    struct stat st;
    jitanon_error err;
    if (demangle) sy_set_demangle(o);
    if (jitanon_buildid_cache_dir(dir, sizeof dir, &err) != JITANON_OK || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
        jitanon_buildid_cache_open(cache, dir, &err) != JITANON_OK)
        return 0;
    o->buildid_cache = cache;
    return 1;
}

#endif
