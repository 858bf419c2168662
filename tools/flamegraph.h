/* flamegraph.h: stacks -> folded text and a self-contained SVG flame graph, for the
   tools (not part of jitanon.h).  No dependency beyond libc (and ixhash.h beside it).

       fg_tree t;
       fg_init(&t);
       fg_add(&t, frames, n, count);           // root first; repeat per sample
       fg_write_folded(&t, stdout);            // "comm;a;b 12" lines, sorted
       fg_write_svg(&t, file, "title");        // flame graph: hover, search, click to zoom
       v = fg_top(&t, &n);                     // the root's children, most samples first
       fg_release(&t);

   Folded lines are Brendan Gregg's collapsed-stack format, read unchanged by
   flamegraph.pl, inferno-flamegraph and speedscope.  A frame's kind only colours the SVG
   (JIT frames green, named from the perf map aqua, kernel orange, native yellow,
   unknown grey).  Allocation failure exits with status 3, as the tools do. */
#ifndef FLAMEGRAPH_H
#define FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ixhash.h" /* the names' and the nodes' hashes */

typedef enum fg_kind {
    FG_OTHER = 0,   /* the process (comm) level and anything unclassified */
    FG_JIT = 1,     /* named from a jitdump */
    FG_PERFMAP = 2, /* JIT code named from /tmp/perf-<pid>.map */
    FG_KERNEL = 3,
    FG_NATIVE = 4,  /* a file mapping (executable, shared library) */
    FG_UNKNOWN = 5,
    FG_KINDS = 6
} fg_kind;

typedef struct fg_frame {
    const char *name;
    fg_kind kind;
} fg_frame;

typedef struct fg_node {
    uint32_t name;                    /* offset in the string arena */
    uint32_t parent, child, sibling;  /* node indices; 0 = none (node 0 is the root) */
    uint64_t self, total;
    unsigned char kind;
} fg_node;

typedef struct fg_tree {
    fg_node *nodes;
    size_t n, cap;
    char *str;                        /* interned names, NUL-terminated */
    size_t str_len, str_cap;
    ix_hash names;                    /* the interned names, by their offsets in str */
    ix_hash kids;                     /* the nodes but the root, by (parent, name) */
    size_t depth;                     /* deepest stack, root excluded */
} fg_tree;

static void *fg__xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) exit(3);
    return q;
}

static uint64_t fg__hash(const char *s)
{
    uint64_t h = 14695981039346656037u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static int fg__name_eq(const void *ctx, size_t off, const void *key)
{
    return !strcmp(((const fg_tree *)ctx)->str + off, (const char *)key);
}

static uint64_t fg__name_rehash(const void *ctx, size_t off)
{
    return fg__hash(((const fg_tree *)ctx)->str + off);
}

/* Names are compared as interned offsets, so a child is found by one integer test. */
static uint32_t fg__intern(fg_tree *t, const char *s)
{
    int found;
    size_t len = strlen(s), slot = ix_find(&t->names, fg__hash(s), t, s, fg__name_eq, fg__name_rehash, &found);
    if (found) return t->names.slot[slot] - 1;
    while (t->str_len + len + 1 > t->str_cap) {
        t->str_cap = t->str_cap ? t->str_cap * 2 : 65536;
        t->str = (char *)fg__xrealloc(t->str, t->str_cap);
    }
    if (t->str_len + len + 1 > UINT32_MAX) exit(3);
    memcpy(t->str + t->str_len, s, len + 1);
    ix_put(&t->names, slot, t->str_len);
    t->str_len += len + 1;
    return (uint32_t)(t->str_len - len - 1);
}

/* A child by (parent, name): a hash, not a walk of the siblings: a process can have tens
   of thousands of JIT functions right under it. */
typedef struct fg__kid_key {
    uint32_t parent, name;
} fg__kid_key;

static uint64_t fg__kid_hash(uint32_t parent, uint32_t name)
{
    return (uint64_t)parent << 32 | name;
}

static int fg__kid_eq(const void *ctx, size_t node, const void *key)
{
    const fg_node *nd = &((const fg_tree *)ctx)->nodes[node];
    return nd->parent == ((const fg__kid_key *)key)->parent && nd->name == ((const fg__kid_key *)key)->name;
}

static uint64_t fg__kid_rehash(const void *ctx, size_t node)
{
    const fg_node *nd = &((const fg_tree *)ctx)->nodes[node];
    return fg__kid_hash(nd->parent, nd->name);
}

static uint32_t fg__node(fg_tree *t, uint32_t parent, uint32_t name, fg_kind kind)
{
    fg_node *nd;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->nodes = (fg_node *)fg__xrealloc(t->nodes, t->cap * sizeof *t->nodes);
    }
    if (t->n >= UINT32_MAX) exit(3);
    nd = &t->nodes[t->n];
    memset(nd, 0, sizeof *nd);
    nd->name = name;
    nd->kind = (unsigned char)kind;
    nd->parent = parent;
    if (t->n) {
        nd->sibling = t->nodes[parent].child;
        t->nodes[parent].child = (uint32_t)t->n;
    }
    return (uint32_t)t->n++;
}

/* The child of `parent` called `name`, made (of that kind) when there is none. */
static uint32_t fg__child(fg_tree *t, uint32_t parent, uint32_t name, fg_kind kind)
{
    fg__kid_key k;
    int found;
    size_t slot;
    k.parent = parent;
    k.name = name;
    slot = ix_find(&t->kids, fg__kid_hash(parent, name), t, &k, fg__kid_eq, fg__kid_rehash, &found);
    if (found) return t->kids.slot[slot] - 1;
    ix_put(&t->kids, slot, fg__node(t, parent, name, kind));
    return t->kids.slot[slot] - 1;
}

static void fg_init(fg_tree *t)
{
    memset(t, 0, sizeof *t);
    (void)fg__node(t, 0, fg__intern(t, "all"), FG_OTHER);
}

static void fg_release(fg_tree *t)
{
    free(t->nodes);
    free(t->str);
    ix_release(&t->names);
    ix_release(&t->kids);
    memset(t, 0, sizeof *t);
}

/* One stack, root first, seen `count` times. */
static void fg_add(fg_tree *t, const fg_frame *frames, size_t n, uint64_t count)
{
    uint32_t at = 0, c;
    size_t i;
    t->nodes[0].total += count;
    for (i = 0; i < n; i++) {
        c = fg__child(t, at, fg__intern(t, frames[i].name), frames[i].kind);
        t->nodes[c].total += count;
        at = c;
    }
    t->nodes[at].self += count;
    if (n > t->depth) t->depth = n;
}

/* One of the root's children: with one frame per sample, a flat profile's line. */
typedef struct fg_count {
    const char *name; /* in the tree's arena */
    uint64_t count;
    fg_kind kind;
} fg_count;

static int fg__by_count(const void *a, const void *b)
{
    const fg_count *x = (const fg_count *)a, *y = (const fg_count *)b;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

/* The root's children, most samples first (ties by name): *n of them, in an array the
   caller frees; valid while the tree is. */
static fg_count *fg_top(const fg_tree *t, size_t *n)
{
    fg_count *v = (fg_count *)fg__xrealloc(NULL, t->n * sizeof *v);
    uint32_t c;
    *n = 0;
    for (c = t->n ? t->nodes[0].child : 0; c; c = t->nodes[c].sibling, ++*n) {
        v[*n].name = t->str + t->nodes[c].name;
        v[*n].count = t->nodes[c].total;
        v[*n].kind = (fg_kind)t->nodes[c].kind;
    }
    if (*n) qsort(v, *n, sizeof *v, fg__by_count);
    return v;
}

static int fg__cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every distinct stack with its count, one line each, sorted (byte order). */
static void fg_write_folded(const fg_tree *t, FILE *f)
{
    char **lines = NULL, *path = NULL;
    size_t nlines = 0, cap = 0, pcap = 0, i;
    for (i = 1; i < t->n; i++) {
        const fg_node *nd = &t->nodes[i];
        size_t len = 0, need = 32;
        uint32_t k;
        if (!nd->self) continue;
        for (k = (uint32_t)i; k; k = t->nodes[k].parent) need += strlen(t->str + t->nodes[k].name) + 1;
        if (need > pcap) path = (char *)fg__xrealloc(path, pcap = need);
        /* written leaf to root from the end of the buffer, then moved to the front */
        len = need - 1;
        path[len] = 0;
        for (k = (uint32_t)i; k; k = t->nodes[k].parent) {
            size_t l = strlen(t->str + t->nodes[k].name);
            if (k != i) path[--len] = ';';
            len -= l;
            memcpy(path + len, t->str + t->nodes[k].name, l);
        }
        if (nlines == cap) lines = (char **)fg__xrealloc(lines, (cap = cap ? cap * 2 : 1024) * sizeof *lines);
        lines[nlines] = (char *)fg__xrealloc(NULL, need - len + 24);
        snprintf(lines[nlines++], need - len + 24, "%s %llu", path + len, (unsigned long long)nd->self);
    }
    if (nlines) qsort(lines, nlines, sizeof *lines, fg__cmp_str);
    for (i = 0; i < nlines; i++) {
        fprintf(f, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    free(path);
}

/* ---- SVG --------------------------------------------------------------------------- */

#define FG_WIDTH 1200
#define FG_PAD 10
#define FG_ROW 16
#define FG_TOP 60    /* title, buttons */
#define FG_BOTTOM 46 /* details line, legend */
#define FG_CHAR 6.4  /* average glyph width of the 11px font, for labels that fit */

/* Text and attribute values: XML escapes; bytes that would make the file invalid XML
   (control characters, malformed UTF-8) become '?'. */
static void fg__xml(FILE *f, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p && n < max) {
        unsigned c = *p, len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        unsigned k;
        for (k = 1; k < len; k++)
            if ((p[k] & 0xc0) != 0x80) len = 0;
        if (len == 2 && c < 0xc2) len = 0;
        if (!len || (len == 1 && c < 0x20 && c != '\t')) {
            fputc('?', f);
            p++;
        } else if (c == '&') fputs("&amp;", f), p++;
        else if (c == '<') fputs("&lt;", f), p++;
        else if (c == '>') fputs("&gt;", f), p++;
        else if (c == '"') fputs("&quot;", f), p++;
        else {
            fwrite(p, 1, len, f);
            p += len;
        }
        n++;
    }
}

/* Colours: one hue per kind, the shade varying with the name so neighbours differ. */
static void fg__colour(const char *name, unsigned kind, unsigned *r, unsigned *g, unsigned *b)
{
    unsigned v = (unsigned)(fg__hash(name) % 1000);
    double x = v / 1000.0;
    switch (kind) {
    case FG_JIT: *r = 40 + (unsigned)(60 * x); *g = 175 + (unsigned)(50 * x); *b = 40 + (unsigned)(40 * x); break;
    case FG_PERFMAP: *r = 50 + (unsigned)(40 * x); *g = 185 + (unsigned)(35 * x); *b = 195 + (unsigned)(35 * x); break;
    case FG_KERNEL: *r = 235 + (unsigned)(15 * x); *g = 130 + (unsigned)(50 * x); *b = 40 + (unsigned)(30 * x); break;
    case FG_NATIVE: *r = 225 + (unsigned)(25 * x); *g = 195 + (unsigned)(40 * x); *b = 70 + (unsigned)(50 * x); break;
    case FG_UNKNOWN: *r = *g = *b = 175 + (unsigned)(30 * x); break;
    default: *r = 200 + (unsigned)(20 * x); *g = 200 + (unsigned)(20 * x); *b = 220 + (unsigned)(20 * x); break;
    }
}

typedef struct fg__kid_ref {
    const char *name;
    uint32_t id;
} fg__kid_ref;

static int fg__by_name(const void *a, const void *b)
{
    return strcmp(((const fg__kid_ref *)a)->name, ((const fg__kid_ref *)b)->name);
}

/* Children in name order (the flame graph convention: x says nothing about time). */
static void fg__sort_children(const fg_tree *t, uint32_t parent, fg__kid_ref **buf, size_t *cap, size_t *n)
{
    uint32_t c;
    *n = 0;
    for (c = t->nodes[parent].child; c; c = t->nodes[c].sibling) {
        if (*n == *cap) *buf = (fg__kid_ref *)fg__xrealloc(*buf, (*cap = *cap ? *cap * 2 : 64) * sizeof **buf);
        (*buf)[*n].name = t->str + t->nodes[c].name;
        (*buf)[(*n)++].id = c;
    }
    if (*n > 1) qsort(*buf, *n, sizeof **buf, fg__by_name);
}

static void fg__label(FILE *f, const char *name, double width)
{
    size_t fit = width > 6 ? (size_t)((width - 6) / FG_CHAR) : 0, len = strlen(name);
    if (fit < 3) return;
    if (len <= fit) fg__xml(f, name, len);
    else {
        fg__xml(f, name, fit - 2);
        fputs("..", f);
    }
}

static const char fg__script[] =
    "var W=0,PAD=0,CH=7,frames=[],details,matched,searchBtn,query=null;\n"
    "function init(){var s=document.documentElement;W=+s.getAttribute('width');PAD=+s.getAttribute('data-pad');CH=+s.getAttribute('data-ch');\n"
    " frames=[].slice.call(document.querySelectorAll('g.f'));details=document.getElementById('details');\n"
    " matched=document.getElementById('matched');searchBtn=document.getElementById('search');\n"
    " frames.forEach(function(g){g.fgName=nameOf(g);g.fgFill=g.querySelector('rect').getAttribute('fill');});\n"
    " var fr=document.getElementById('frames');\n"
    " fr.addEventListener('click',function(e){var g=e.target.closest('g.f');if(g)zoom(g);});\n"
    " fr.addEventListener('mouseover',function(e){var g=e.target.closest('g.f');details.textContent=g?g.querySelector('title').textContent:' ';});\n"
    " fr.addEventListener('mouseout',function(){details.textContent=' ';});\n"
    " document.getElementById('reset').addEventListener('click',function(){zoom(null);});\n"
    " searchBtn.addEventListener('click',function(){if(query!==null)search(null);else search(prompt('Search frames (regular expression)',''));});\n"
    " window.addEventListener('keydown',function(e){if((e.ctrlKey&&e.key==='f')||e.key==='/'){e.preventDefault();search(prompt('Search frames (regular expression)',''));}\n"
    "  else if(e.key==='Escape'){zoom(null);search(null);}});\n"
    " var q=/[?&]s=([^&]*)/.exec(location.search);if(q)search(decodeURIComponent(q[1]));}\n"
    "function nameOf(g){var t=g.querySelector('title').textContent,i=t.lastIndexOf(' (');return i<0?t:t.slice(0,i);}\n"
    "function place(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
    " if(w<0.5){g.style.display='none';return;}g.style.display='';r.setAttribute('x',x.toFixed(2));r.setAttribute('width',w.toFixed(2));\n"
    " t.setAttribute('x',(x+3).toFixed(2));var n=Math.floor((w-6)/CH),s=g.fgName;t.textContent=n<3?'':s.length<=n?s:s.slice(0,n-2)+'..';}\n"
    "function zoom(z){var zx=z?+z.getAttribute('data-x'):0,zw=z?+z.getAttribute('data-w'):1,zd=z?+z.getAttribute('data-d'):0,span=W-2*PAD,e=1e-9;\n"
    " frames.forEach(function(g){var x=+g.getAttribute('data-x'),w=+g.getAttribute('data-w'),d=+g.getAttribute('data-d');\n"
    "  if(d<zd){if(x<=zx+e&&x+w>=zx+zw-e){place(g,PAD,span);g.setAttribute('opacity','0.6');}else g.style.display='none';}\n"
    "  else if(x>=zx-e&&x+w<=zx+zw+e){place(g,PAD+(x-zx)/zw*span,w/zw*span);g.removeAttribute('opacity');}\n"
    "  else g.style.display='none';});}\n"
    "function search(re){query=null;var hits=[],rx=null;\n"
    " if(re){try{rx=new RegExp(re);}catch(err){rx=null;}}\n"
    " frames.forEach(function(g){var r=g.querySelector('rect');\n"
    "  if(rx&&rx.test(g.fgName)){r.setAttribute('fill','rgb(230,0,230)');hits.push([+g.getAttribute('data-x'),+g.getAttribute('data-w')]);}\n"
    "  else r.setAttribute('fill',g.fgFill);});\n"
    " if(!rx){matched.textContent=' ';searchBtn.textContent='Search';return;}\n"
    " query=re;searchBtn.textContent='Reset search';hits.sort(function(a,b){return a[0]-b[0];});\n"
    " var sum=0,end=0;hits.forEach(function(h){var s=Math.max(h[0],end),t=h[0]+h[1];if(t>s){sum+=t-s;}if(t>end)end=t;});\n"
    " matched.textContent='Matched: '+(100*sum).toFixed(1)+'%';}\n";

/* The SVG: the root at the bottom, every frame a <g class="f"> holding its <title>
   (what hovering shows), <rect> and label, with its place as fractions of the whole
   (data-x, data-w) and its depth (data-d) for the zoom script.  Frames narrower than
   FG_MIN_PX at full width are left out. */
#define FG_MIN_PX 0.05
static void fg_write_svg(const fg_tree *t, FILE *f, const char *title)
{
    double span = FG_WIDTH - 2 * FG_PAD, total = (double)t->nodes[0].total;
    int height = FG_TOP + (int)(t->depth + 1) * FG_ROW + FG_BOTTOM;
    /* breadth first with explicit positions: x0 of each node as a fraction */
    uint32_t *queue;
    fg__kid_ref *kids = NULL;
    double *x0;
    size_t head = 0, tail = 0, kcap = 0, nk, i, *depth;
    static const char *const legend[FG_KINDS] = {"", "JIT (jitdump)", "JIT (perf map)", "kernel", "native", "unknown"};
    queue = (uint32_t *)fg__xrealloc(NULL, t->n * sizeof *queue);
    x0 = (double *)fg__xrealloc(NULL, t->n * sizeof *x0);
    depth = (size_t *)fg__xrealloc(NULL, t->n * sizeof *depth);
    if (total <= 0) total = 1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" data-pad=\"%d\" data-ch=\"%.1f\" onload=\"init()\">\n",
            FG_WIDTH, height, FG_WIDTH, height, FG_PAD, FG_CHAR);
    fputs("<style>text{font-family:Verdana,Helvetica,sans-serif;font-size:11px;fill:#000}"
          "g.f text{pointer-events:none}g.f:hover rect{stroke:#000;stroke-width:0.7}"
          ".btn{cursor:pointer;fill:#335}.btn:hover{text-decoration:underline}#title{font-size:17px}#sub{font-size:12px}</style>\n",
          f);
    fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", fg__script);
    fputs("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f6f6f0\"/>\n", f);
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"26\" text-anchor=\"middle\">", FG_WIDTH / 2);
    fg__xml(f, title ? title : "Flame Graph", 200);
    fprintf(f, "</text>\n<text id=\"sub\" x=\"%d\" y=\"46\" text-anchor=\"middle\" fill=\"#555\">%llu samples; hover for names, "
               "click to zoom, Search or Ctrl-F to highlight</text>\n",
            FG_WIDTH / 2, (unsigned long long)t->nodes[0].total);
    fprintf(f, "<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"26\">Reset zoom</text>\n", FG_PAD);
    fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"26\" text-anchor=\"end\">Search</text>\n", FG_WIDTH - FG_PAD);
    fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", FG_PAD, height - 28);
    fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n", FG_WIDTH - FG_PAD, height - 28);
    {
        double lx = FG_PAD;
        unsigned k, r, g, b;
        for (k = 1; k < FG_KINDS; k++) {
            fg__colour("legend", k, &r, &g, &b);
            fprintf(f, "<rect x=\"%.0f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"rgb(%u,%u,%u)\"/>"
                       "<text x=\"%.0f\" y=\"%d\">%s</text>\n",
                    lx, height - 18, r, g, b, lx + 16, height - 8, legend[k]);
            lx += 16 + FG_CHAR * (double)strlen(legend[k]) + 24;
        }
    }
    fputs("<g id=\"frames\">\n", f);
    queue[tail++] = 0;
    x0[0] = 0;
    depth[0] = 0;
    while (head < tail) {
        uint32_t id = queue[head++];
        const fg_node *nd = &t->nodes[id];
        const char *name = t->str + nd->name;
        double w = (double)nd->total / total, px = FG_PAD + x0[id] * span, pw = w * span, cx = x0[id];
        double y = height - FG_BOTTOM - (double)(depth[id] + 1) * FG_ROW;
        unsigned r, g, b;
        if (pw < FG_MIN_PX) continue; /* and so are its children */
        fg__colour(name, nd->kind, &r, &g, &b);
        fprintf(f, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\"><title>", x0[id], w, (unsigned)depth[id]);
        fg__xml(f, name, (size_t)-1);
        fprintf(f, " (%llu samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
                   "fill=\"rgb(%u,%u,%u)\"/><text x=\"%.2f\" y=\"%.0f\">",
                (unsigned long long)nd->total, 100.0 * w, px, y, pw, FG_ROW - 1, r, g, b, px + 3, y + FG_ROW - 4);
        fg__label(f, name, pw);
        fputs("</text></g>\n", f);
        fg__sort_children(t, id, &kids, &kcap, &nk);
        for (i = 0; i < nk; i++) {
            uint32_t k = kids[i].id;
            queue[tail++] = k;
            x0[k] = cx;
            depth[k] = depth[id] + 1;
            cx += (double)t->nodes[k].total / total;
        }
    }
    fputs("</g>\n</svg>\n", f);
    free(queue);
    free(x0);
    free(depth);
    free(kids);
}

#endif /* FLAMEGRAPH_H */
