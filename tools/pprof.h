/* pprof.h: a profile.proto (pprof) encoder for the tools (not part of jitanon.h),
   written from github.com/google/pprof proto/profile.proto.  No dependency beyond libc
   (and ixhash.h beside it); gzip through zlib when PP_USE_ZLIB or JITANON_USE_ZLIB is
   defined (link -lz), plain protobuf otherwise (go tool pprof and the pprof-format
   decoder read both: a pprof reader gunzips only what starts with the gzip magic).

       pp_profile p;
       pp_init(&p);
       pp_sample_type(&p, "samples", "count");          // the value columns, in order
       pp_sample_type(&p, "cpu", "nanoseconds");
       m = pp_mapping(&p, start, limit, offset, "/usr/bin/node", NULL);
       f = pp_function(&p, "JS:*leaf", 8, "busy.js", 1);
       l = pp_location(&p, m, address, f, line);          // the same arguments, the same id
       pp_sample(&p, locs, n, values, labels, nlabels);   // leaf first; equal stacks and
                                                          // labels add up into one Sample
       pp_write_file(&p, file, 1);                        // gzip when built with zlib
       pp_release(&p);

   Every table is deduplicated (strings, mappings by all their fields, functions,
   locations, samples by stack and labels) and ids are handed out in first-seen order, so
   the same calls give the same bytes.  Allocation failure exits with status 3, as the
   tools do. */
#ifndef PPROF_H
#define PPROF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ixhash.h" /* the tables' hashes */
#if defined(PP_USE_ZLIB) || defined(JITANON_USE_ZLIB)
#include <zlib.h>
#define PP_HAVE_ZLIB 1
#else
#define PP_HAVE_ZLIB 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PP_DEF static __attribute__((unused))
#else
#define PP_DEF static
#endif

typedef struct pp_buf {
    uint8_t *p;
    size_t n, cap;
} pp_buf;

typedef struct pp_label {
    const char *key;
    const char *str;      /* a string label, or NULL for a number */
    int64_t num;
    const char *num_unit; /* NULL: none */
} pp_label;

typedef struct pp__label {
    int64_t key, str, num, num_unit;
} pp__label;

typedef struct pp__mapping {
    uint64_t start, limit, offset;
    int64_t file, build_id;
} pp__mapping;

typedef struct pp__function {
    int64_t name, system_name, file, start_line;
} pp__function;

typedef struct pp__location {
    uint64_t mapping, address, function;
    int64_t line;
} pp__location;

typedef struct pp__sample {
    size_t loc, nloc;     /* in locs */
    size_t lab, nlab;     /* in labels */
    size_t val;           /* in values (nvalues each) */
} pp__sample;

typedef struct pp_profile {
    char *str;                 /* the string table, each NUL-terminated */
    size_t str_len, str_cap;
    size_t *str_off, nstr, str_off_cap;
    ix_hash str_h;
    int64_t *types;            /* (type, unit) string indices */
    size_t nvalues;
    pp__mapping *maps;
    size_t nmaps, maps_cap;
    ix_hash maps_h;
    pp__function *funcs;
    size_t nfuncs, funcs_cap;
    ix_hash funcs_h;
    pp__location *locs_t;
    size_t nlocs_t, locs_t_cap;
    ix_hash locs_h;
    pp__sample *samples;
    size_t nsamples, samples_cap;
    ix_hash samples_h;
    uint64_t *locs;            /* the samples' stacks */
    size_t nlocs, locs_cap;
    pp__label *labels;
    size_t nlabels, labels_cap;
    int64_t *values;
    size_t nvals, vals_cap;
    int64_t *comments;
    size_t ncomments;
    /* informational fields (0: left out) */
    int64_t time_nanos, duration_nanos, period;
    int64_t period_type, period_unit;     /* string indices */
    int64_t default_sample_type;          /* string index */
    uint64_t main_mapping;                /* written first (pprof: mapping[0] is the main
                                             binary); 0: in id order */
} pp_profile;

PP_DEF void *pp__grow(void *p, size_t *cap, size_t need, size_t elem)
{
    size_t c = *cap ? *cap : 16;
    if (need <= *cap) return p;
    while (c < need) c *= 2;
    if (c > (size_t)-1 / elem) exit(3);
    p = realloc(p, c * elem);
    if (!p) exit(3);
    *cap = c;
    return p;
}

PP_DEF uint64_t pp__mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdu;
}

PP_DEF uint64_t pp__bytes_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037u;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

/* ---- strings ----------------------------------------------------------------------- */

typedef struct pp__strkey {
    const char *s;
    size_t n;
} pp__strkey;

PP_DEF int pp__str_eq(const void *ctx, size_t idx, const void *key)
{
    const pp_profile *p = (const pp_profile *)ctx;
    const pp__strkey *k = (const pp__strkey *)key;
    const char *s = p->str + p->str_off[idx];
    return strlen(s) == k->n && !memcmp(s, k->s, k->n);
}

PP_DEF uint64_t pp__str_rehash(const void *ctx, size_t idx)
{
    const pp_profile *p = (const pp_profile *)ctx;
    const char *s = p->str + p->str_off[idx];
    return pp__bytes_hash(s, strlen(s));
}

/* The string table index of s[0..n) (cut at a NUL: the table holds C strings). */
PP_DEF int64_t pp_string(pp_profile *p, const char *s, size_t n)
{
    pp__strkey k;
    size_t slot;
    int found;
    const char *z = n ? (const char *)memchr(s, 0, n) : NULL;
    if (z) n = (size_t)(z - s);
    k.s = n ? s : "";
    k.n = n;
    slot = ix_find(&p->str_h, pp__bytes_hash(k.s, n), p, &k, pp__str_eq, pp__str_rehash, &found);
    if (found) return (int64_t)(p->str_h.slot[slot] - 1);
    p->str = (char *)pp__grow(p->str, &p->str_cap, p->str_len + n + 1, 1);
    memcpy(p->str + p->str_len, k.s, n);
    p->str[p->str_len + n] = 0;
    p->str_off = (size_t *)pp__grow(p->str_off, &p->str_off_cap, p->nstr + 1, sizeof *p->str_off);
    p->str_off[p->nstr] = p->str_len;
    p->str_len += n + 1;
    ix_put(&p->str_h, slot, p->nstr);
    return (int64_t)p->nstr++;
}

PP_DEF int64_t pp_str(pp_profile *p, const char *s)
{
    return s ? pp_string(p, s, strlen(s)) : 0;
}

PP_DEF void pp_init(pp_profile *p)
{
    memset(p, 0, sizeof *p);
    (void)pp_str(p, ""); /* string_table[0] must be "" */
}

PP_DEF void pp_release(pp_profile *p)
{
    free(p->str);
    free(p->str_off);
    ix_release(&p->str_h);
    free(p->types);
    free(p->maps);
    ix_release(&p->maps_h);
    free(p->funcs);
    ix_release(&p->funcs_h);
    free(p->locs_t);
    ix_release(&p->locs_h);
    free(p->samples);
    ix_release(&p->samples_h);
    free(p->locs);
    free(p->labels);
    free(p->values);
    free(p->comments);
    memset(p, 0, sizeof *p);
}

/* A value column (before the first sample). */
PP_DEF void pp_sample_type(pp_profile *p, const char *type, const char *unit)
{
    size_t cap = p->nvalues * 2;
    if (p->nsamples) exit(3); /* a caller's bug: samples already have their values */
    p->types = (int64_t *)pp__grow(p->types, &cap, p->nvalues * 2 + 2, sizeof *p->types);
    p->types[p->nvalues * 2] = pp_str(p, type);
    p->types[p->nvalues * 2 + 1] = pp_str(p, unit);
    p->nvalues++;
}

PP_DEF void pp_comment(pp_profile *p, const char *text)
{
    size_t cap = p->ncomments;
    p->comments = (int64_t *)pp__grow(p->comments, &cap, p->ncomments + 1, sizeof *p->comments);
    p->comments[p->ncomments++] = pp_str(p, text);
}

/* ---- mappings, functions, locations -------------------------------------------------- */

/* Mappings, functions and locations are records of 64-bit words (no padding), each kept
   once: the table of one kind, its hash, and the record's size. */
typedef struct pp__table {
    void **v;
    size_t *n, *cap, size;
    ix_hash *h;
} pp__table;

PP_DEF int pp__rec_eq(const void *ctx, size_t idx, const void *key)
{
    const pp__table *t = (const pp__table *)ctx;
    return !memcmp((const char *)*t->v + idx * t->size, key, t->size);
}

PP_DEF uint64_t pp__rec_hash(const void *rec, size_t size)
{
    const unsigned char *b = (const unsigned char *)rec;
    uint64_t h = 0, w;
    size_t i;
    for (i = 0; i + 8 <= size; i += 8) {
        memcpy(&w, b + i, 8);
        h = pp__mix(h, w);
    }
    return h;
}

PP_DEF uint64_t pp__rec_rehash(const void *ctx, size_t idx)
{
    const pp__table *t = (const pp__table *)ctx;
    return pp__rec_hash((const char *)*t->v + idx * t->size, t->size);
}

/* The 1-based id of the record equal to rec, added when new. */
PP_DEF uint64_t pp__intern_rec(pp__table t, const void *rec)
{
    int found;
    size_t slot = ix_find(t.h, pp__rec_hash(rec, t.size), &t, rec, pp__rec_eq, pp__rec_rehash, &found);
    if (found) return t.h->slot[slot];
    *t.v = pp__grow(*t.v, t.cap, *t.n + 1, t.size);
    memcpy((char *)*t.v + *t.n * t.size, rec, t.size);
    ix_put(t.h, slot, *t.n);
    return ++*t.n;
}

PP_DEF pp__table pp__tab(void **v, size_t *n, size_t *cap, size_t size, ix_hash *h)
{
    pp__table t;
    t.v = v;
    t.n = n;
    t.cap = cap;
    t.size = size;
    t.h = h;
    return t;
}

/* The id (1-based) of the mapping [start, limit) at file offset `offset` of `file`
   (build_id: NULL or the hex string). */
PP_DEF uint64_t pp_mapping(pp_profile *p, uint64_t start, uint64_t limit, uint64_t offset, const char *file,
                           const char *build_id)
{
    pp__mapping m;
    memset(&m, 0, sizeof m);
    m.start = start;
    m.limit = limit;
    m.offset = offset;
    m.file = pp_str(p, file);
    m.build_id = pp_str(p, build_id);
    return pp__intern_rec(pp__tab((void **)&p->maps, &p->nmaps, &p->maps_cap, sizeof m, &p->maps_h), &m);
}

/* The id of the function called name[0..name_len) (also its system name), in `file`
   (NULL: none) starting at `start_line` (0: unknown). */
PP_DEF uint64_t pp_function(pp_profile *p, const char *name, size_t name_len, const char *file, int64_t start_line)
{
    pp__function f;
    memset(&f, 0, sizeof f);
    f.name = f.system_name = pp_string(p, name, name_len);
    f.file = pp_str(p, file);
    f.start_line = start_line;
    return pp__intern_rec(pp__tab((void **)&p->funcs, &p->nfuncs, &p->funcs_cap, sizeof f, &p->funcs_h), &f);
}

/* The id of the location at `address` of mapping `mapping` (0: none) in function
   `function` (0: none) at source line `line` (0: unknown). */
PP_DEF uint64_t pp_location(pp_profile *p, uint64_t mapping, uint64_t address, uint64_t function, int64_t line)
{
    pp__location l;
    memset(&l, 0, sizeof l);
    l.mapping = mapping;
    l.address = address;
    l.function = function;
    l.line = line;
    return pp__intern_rec(pp__tab((void **)&p->locs_t, &p->nlocs_t, &p->locs_t_cap, sizeof l, &p->locs_h), &l);
}

/* ---- samples ------------------------------------------------------------------------ */

typedef struct pp__samplekey {
    const uint64_t *locs;
    size_t nloc;
    const pp__label *labels;
    size_t nlab;
} pp__samplekey;

PP_DEF int pp__sample_eq(const void *ctx, size_t idx, const void *key)
{
    const pp_profile *p = (const pp_profile *)ctx;
    const pp__samplekey *k = (const pp__samplekey *)key;
    const pp__sample *s = &p->samples[idx];
    return s->nloc == k->nloc && s->nlab == k->nlab &&
           (!k->nloc || !memcmp(p->locs + s->loc, k->locs, k->nloc * sizeof *k->locs)) &&
           (!k->nlab || !memcmp(p->labels + s->lab, k->labels, k->nlab * sizeof *k->labels));
}

PP_DEF uint64_t pp__sample_hash(const uint64_t *locs, size_t nloc, const pp__label *labels, size_t nlab)
{
    uint64_t h = pp__mix(nloc, nlab);
    size_t i;
    for (i = 0; i < nloc; i++) h = pp__mix(h, locs[i]);
    for (i = 0; i < nlab; i++)
        h = pp__mix(pp__mix(pp__mix(pp__mix(h, (uint64_t)labels[i].key), (uint64_t)labels[i].str), (uint64_t)labels[i].num),
                    (uint64_t)labels[i].num_unit);
    return h;
}

PP_DEF uint64_t pp__sample_rehash(const void *ctx, size_t idx)
{
    const pp_profile *p = (const pp_profile *)ctx;
    const pp__sample *s = &p->samples[idx];
    return pp__sample_hash(p->locs + s->loc, s->nloc, p->labels + s->lab, s->nlab);
}

/* One sample: its stack (location ids, leaf first), p->nvalues values, its labels.  A
   sample with the same stack and labels as an earlier one adds its values to it. */
PP_DEF void pp_sample(pp_profile *p, const uint64_t *locs, size_t nloc, const int64_t *values, const pp_label *labels,
                      size_t nlab)
{
    pp__samplekey k;
    pp__sample *s;
    size_t slot, i, lab0 = p->nlabels;
    int found;
    /* the labels go to the table first (interned), and are taken back when not new */
    p->labels = (pp__label *)pp__grow(p->labels, &p->labels_cap, p->nlabels + nlab, sizeof *p->labels);
    for (i = 0; i < nlab; i++) {
        pp__label *l = &p->labels[lab0 + i];
        memset(l, 0, sizeof *l);
        l->key = pp_str(p, labels[i].key);
        if (labels[i].str) l->str = pp_str(p, labels[i].str);
        else {
            l->num = labels[i].num;
            l->num_unit = pp_str(p, labels[i].num_unit);
        }
    }
    k.locs = locs;
    k.nloc = nloc;
    k.labels = p->labels + lab0;
    k.nlab = nlab;
    slot = ix_find(&p->samples_h, pp__sample_hash(locs, nloc, k.labels, nlab), p, &k, pp__sample_eq, pp__sample_rehash,
                   &found);
    if (found) {
        s = &p->samples[p->samples_h.slot[slot] - 1];
        for (i = 0; i < p->nvalues; i++) p->values[s->val + i] += values[i];
        return; /* the labels just added stay unused: nlabels is not advanced */
    }
    p->nlabels += nlab;
    p->samples = (pp__sample *)pp__grow(p->samples, &p->samples_cap, p->nsamples + 1, sizeof *p->samples);
    s = &p->samples[p->nsamples];
    s->loc = p->nlocs;
    s->nloc = nloc;
    s->lab = lab0;
    s->nlab = nlab;
    s->val = p->nvals;
    p->locs = (uint64_t *)pp__grow(p->locs, &p->locs_cap, p->nlocs + nloc, sizeof *p->locs);
    if (nloc) memcpy(p->locs + p->nlocs, locs, nloc * sizeof *locs);
    p->nlocs += nloc;
    p->values = (int64_t *)pp__grow(p->values, &p->vals_cap, p->nvals + p->nvalues, sizeof *p->values);
    for (i = 0; i < p->nvalues; i++) p->values[p->nvals + i] = values[i];
    p->nvals += p->nvalues;
    ix_put(&p->samples_h, slot, p->nsamples);
    p->nsamples++;
}

/* ---- the wire format ------------------------------------------------------------------ */

PP_DEF void pp__bytes(pp_buf *b, const void *d, size_t n)
{
    b->p = (uint8_t *)pp__grow(b->p, &b->cap, b->n + n, 1);
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}

PP_DEF void pp__varint(pp_buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    pp__bytes(b, t, n);
}

/* wire types: 0 varint, 2 length-delimited */
PP_DEF void pp__key(pp_buf *b, unsigned field, unsigned wire)
{
    pp__varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field, left out when 0 (proto3's default). */
PP_DEF void pp__field(pp_buf *b, unsigned field, uint64_t v)
{
    if (!v) return;
    pp__key(b, field, 0);
    pp__varint(b, v);
}

PP_DEF void pp__lenfield(pp_buf *b, unsigned field, const void *d, size_t n)
{
    pp__key(b, field, 2);
    pp__varint(b, n);
    pp__bytes(b, d, n);
}

/* A packed repeated varint field (int64s go as their two's complement). */
PP_DEF void pp__packed(pp_buf *b, pp_buf *tmp, unsigned field, const uint64_t *u, const int64_t *s, size_t n)
{
    size_t i;
    if (!n) return;
    tmp->n = 0;
    for (i = 0; i < n; i++) pp__varint(tmp, u ? u[i] : (uint64_t)s[i]);
    pp__lenfield(b, field, tmp->p, tmp->n);
}

/* The Profile message, uncompressed, into out (appended). */
PP_DEF void pp_encode(const pp_profile *p, pp_buf *out)
{
    pp_buf m, sub, tmp;
    size_t i, k;
    memset(&m, 0, sizeof m);
    memset(&sub, 0, sizeof sub);
    memset(&tmp, 0, sizeof tmp);
    for (i = 0; i < p->nvalues; i++) { /* 1: sample_type */
        m.n = 0;
        pp__field(&m, 1, (uint64_t)p->types[2 * i]);
        pp__field(&m, 2, (uint64_t)p->types[2 * i + 1]);
        pp__lenfield(out, 1, m.p, m.n);
    }
    for (i = 0; i < p->nsamples; i++) { /* 2: sample */
        const pp__sample *s = &p->samples[i];
        m.n = 0;
        pp__packed(&m, &tmp, 1, p->locs + s->loc, NULL, s->nloc);
        pp__packed(&m, &tmp, 2, NULL, p->values + s->val, p->nvalues);
        for (k = 0; k < s->nlab; k++) {
            const pp__label *l = &p->labels[s->lab + k];
            sub.n = 0;
            pp__field(&sub, 1, (uint64_t)l->key);
            pp__field(&sub, 2, (uint64_t)l->str);
            pp__field(&sub, 3, (uint64_t)l->num);
            pp__field(&sub, 4, (uint64_t)l->num_unit);
            pp__lenfield(&m, 3, sub.p, sub.n);
        }
        pp__lenfield(out, 2, m.p, m.n);
    }
    for (k = 0; k <= p->nmaps; k++) { /* 3: mapping; the main one first */
        const pp__mapping *mp;
        i = k ? k - 1 : p->main_mapping - 1;
        if (k ? (k == p->main_mapping) : (!p->main_mapping || p->main_mapping > p->nmaps)) continue;
        mp = &p->maps[i];
        m.n = 0;
        pp__field(&m, 1, i + 1);
        pp__field(&m, 2, mp->start);
        pp__field(&m, 3, mp->limit);
        pp__field(&m, 4, mp->offset);
        pp__field(&m, 5, (uint64_t)mp->file);
        pp__field(&m, 6, (uint64_t)mp->build_id);
        /* every location we write carries its function (and line where known): a pprof
           tool must not try to symbolize the addresses again from the files */
        pp__field(&m, 7, 1);
        pp__field(&m, 8, 1);
        pp__field(&m, 9, 1);
        pp__lenfield(out, 3, m.p, m.n);
    }
    for (i = 0; i < p->nlocs_t; i++) { /* 4: location */
        const pp__location *l = &p->locs_t[i];
        m.n = 0;
        pp__field(&m, 1, i + 1);
        pp__field(&m, 2, l->mapping);
        pp__field(&m, 3, l->address);
        if (l->function) {
            sub.n = 0;
            pp__field(&sub, 1, l->function);
            pp__field(&sub, 2, (uint64_t)l->line);
            pp__lenfield(&m, 4, sub.p, sub.n);
        }
        pp__lenfield(out, 4, m.p, m.n);
    }
    for (i = 0; i < p->nfuncs; i++) { /* 5: function */
        const pp__function *f = &p->funcs[i];
        m.n = 0;
        pp__field(&m, 1, i + 1);
        pp__field(&m, 2, (uint64_t)f->name);
        pp__field(&m, 3, (uint64_t)f->system_name);
        pp__field(&m, 4, (uint64_t)f->file);
        pp__field(&m, 5, (uint64_t)f->start_line);
        pp__lenfield(out, 5, m.p, m.n);
    }
    for (i = 0; i < p->nstr; i++) { /* 6: string_table, "" first */
        const char *s = p->str + p->str_off[i];
        pp__lenfield(out, 6, s, strlen(s));
    }
    pp__field(out, 9, (uint64_t)p->time_nanos);
    pp__field(out, 10, (uint64_t)p->duration_nanos);
    if (p->period_type || p->period_unit) {
        m.n = 0;
        pp__field(&m, 1, (uint64_t)p->period_type);
        pp__field(&m, 2, (uint64_t)p->period_unit);
        pp__lenfield(out, 11, m.p, m.n);
    }
    pp__field(out, 12, (uint64_t)p->period);
    pp__packed(out, &tmp, 13, NULL, p->comments, p->ncomments);
    pp__field(out, 14, (uint64_t)p->default_sample_type);
    free(m.p);
    free(sub.p);
    free(tmp.p);
}

/* gzip of in into out (appended); 0 on success.  zlib writes a header with no name and
   mtime 0, so the bytes depend on the input (and the zlib version) only. */
PP_DEF int pp_gzip(const pp_buf *in, pp_buf *out)
{
#if PP_HAVE_ZLIB
    z_stream z;
    int r;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    z.next_in = in->p;
    z.avail_in = (uInt)in->n;
    if ((size_t)z.avail_in != in->n) return deflateEnd(&z), -1; /* over 4 GiB */
    do {
        out->p = (uint8_t *)pp__grow(out->p, &out->cap, out->n + 65536, 1);
        z.next_out = out->p + out->n;
        z.avail_out = (uInt)(out->cap - out->n);
        r = deflate(&z, Z_FINISH);
        out->n = out->cap - z.avail_out;
    } while (r == Z_OK || r == Z_BUF_ERROR);
    deflateEnd(&z);
    return r == Z_STREAM_END ? 0 : -1;
#else
    (void)in;
    (void)out;
    return -1;
#endif
}

/* The profile's bytes into out (appended): gzipped when `compress` and built with zlib,
   else plain protobuf.  Returns 1 when compressed, 0 when plain, -1 on a zlib error. */
PP_DEF int pp_serialize(const pp_profile *p, pp_buf *out, int compress)
{
    pp_buf raw;
    int r;
    if (!compress || !PP_HAVE_ZLIB) {
        pp_encode(p, out);
        return 0;
    }
    memset(&raw, 0, sizeof raw);
    pp_encode(p, &raw);
    r = pp_gzip(&raw, out);
    free(raw.p);
    return r ? -1 : 1;
}

/* The same into f; -1 on a write error too. */
PP_DEF int pp_write_file(const pp_profile *p, FILE *f, int compress)
{
    pp_buf b;
    int z;
    memset(&b, 0, sizeof b);
    z = pp_serialize(p, &b, compress);
    if (z >= 0 && fwrite(b.p, 1, b.n, f) != b.n) z = -1;
    free(b.p);
    return z;
}

#endif /* PPROF_H */
