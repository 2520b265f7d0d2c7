/* Reading and writing contact-map files, format version 1 (docs/contact-map-format.md). The
 * reader tokenises the whole file with line numbers so every message names file, line and node. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactmap_internal.h"

typedef struct Reader {
    const char *path;
    char *p;  /* next character */
    int line; /* of the next character */
    int token_line;
    char token[CONTACT_MAP_TEXT_MAX];
    IssimError *err;
} Reader;

static void skip_space(Reader *r) {
    for (;;) {
        while (*r->p && isspace((unsigned char)*r->p)) {
            if (*r->p == '\n')
                r->line++;
            r->p++;
        }
        if (*r->p != '#')
            return;
        while (*r->p && *r->p != '\n')
            r->p++;
    }
}

/* Next token into r->token; false at the end of the file. */
static bool next_token(Reader *r) {
    skip_space(r);
    r->token_line = r->line;
    size_t n = 0;
    while (*r->p && !isspace((unsigned char)*r->p) && *r->p != '#') {
        if (n + 1 < sizeof r->token)
            r->token[n++] = *r->p;
        r->p++;
    }
    r->token[n] = '\0';
    return n > 0;
}

/* The rest of the line (after the key), trimmed, comments dropped. */
static void rest_of_line(Reader *r, char *out, size_t size) {
    while (*r->p == ' ' || *r->p == '\t')
        r->p++;
    size_t n = 0;
    while (*r->p && *r->p != '\n' && *r->p != '#') {
        if (n + 1 < size)
            out[n++] = *r->p;
        r->p++;
    }
    while (n > 0 && isspace((unsigned char)out[n - 1]))
        n--;
    out[n] = '\0';
}

static IssimStatus fail(Reader *r, IssimStatus status, const char *what) {
    return issim_error_set(r->err, status, "%s:%d: %s", r->path, r->token_line, what);
}

static IssimStatus read_double(Reader *r, const char *what, double *out) {
    if (!next_token(r)) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s: missing (end of file)", what);
        return fail(r, ISSIM_ERR_INVALID, msg);
    }
    char *end = NULL;
    errno = 0;
    *out = strtod(r->token, &end);
    if (end == r->token || *end != '\0' || !isfinite(*out)) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: '%s' is not a finite number", what, r->token);
        return fail(r, ISSIM_ERR_INVALID, msg);
    }
    return ISSIM_OK;
}

static IssimStatus read_int(Reader *r, const char *what, long lo, long hi, int *out) {
    double v = 0.0;
    IssimStatus s = read_double(r, what, &v);
    if (s != ISSIM_OK)
        return s;
    if (v != floor(v) || v < (double)lo || v > (double)hi) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: %s (must be a whole number in %ld ... %ld)", what, r->token,
                 lo, hi);
        return fail(r, ISSIM_ERR_RANGE, msg);
    }
    *out = (int)v;
    return ISSIM_OK;
}

static IssimStatus read_vec(Reader *r, const char *what, Vec3 *v) {
    IssimStatus s = read_double(r, what, &v->x);
    if (s == ISSIM_OK)
        s = read_double(r, what, &v->y);
    if (s == ISSIM_OK)
        s = read_double(r, what, &v->z);
    return s;
}

static IssimStatus expect(Reader *r, const char *word, const char *context) {
    if (next_token(r) && strcmp(r->token, word) == 0)
        return ISSIM_OK;
    char msg[400];
    snprintf(msg, sizeof msg, "%s: expected '%s', found '%s'", context, word,
             r->token[0] ? r->token : "end of file");
    return fail(r, ISSIM_ERR_INVALID, msg);
}

typedef struct Header {
    ContactMapSpec spec;
    bool have_body, have_dimension, have_period, have_samples, have_nodes;
} Header;

static IssimStatus read_header_key(Reader *r, Header *h) {
    ContactMapSpec *s = &h->spec;
    ContactMapProvenance *pv = &s->provenance;
    const char *k = r->token;
    if (strcmp(k, "body") == 0) {
        h->have_body = true;
        if (!next_token(r))
            return fail(r, ISSIM_ERR_INVALID, "body: missing name");
        issim_strlcpy(s->body, r->token, sizeof s->body);
        return ISSIM_OK;
    }
    if (strcmp(k, "dimension") == 0)
        return h->have_dimension = true, read_int(r, "dimension", 2, 3, &s->dimension);
    if (strcmp(k, "period") == 0) {
        h->have_period = true;
        IssimStatus st = read_double(r, "period", &s->period);
        if (st != ISSIM_OK)
            return st;
        if (!(s->period > 0.0))
            return fail(r, ISSIM_ERR_RANGE, "period: must be > 0 s");
        if (s->period < CONTACT_MAP_MIN_PERIOD) { /* the reason: contactmap.h */
            char msg[200];
            snprintf(msg, sizeof msg,
                     "period %g s is below %g s: the engine takes one step per sample, %.3g per "
                     "millisecond of simulated time",
                     s->period, CONTACT_MAP_MIN_PERIOD, 1e-3 / s->period);
            return fail(r, ISSIM_ERR_RANGE, msg);
        }
        return ISSIM_OK;
    }
    if (strcmp(k, "samples") == 0)
        return h->have_samples = true,
               read_int(r, "samples", 1, CONTACT_MAP_MAX_SAMPLES, &s->samples);
    if (strcmp(k, "nodes") == 0)
        return h->have_nodes = true, read_int(r, "nodes", 1, CONTACT_MAP_MAX_NODES, &s->node_count);
    if (strcmp(k, "generator") == 0)
        return rest_of_line(r, pv->generator, sizeof pv->generator), ISSIM_OK;
    if (strcmp(k, "note") == 0)
        return rest_of_line(r, pv->note, sizeof pv->note), ISSIM_OK;
    if (strcmp(k, "created") == 0)
        return rest_of_line(r, pv->created, sizeof pv->created), ISSIM_OK;
    if (strcmp(k, "material") == 0) {
        IssimStatus st = read_double(r, "material: Young's modulus", &pv->youngs);
        if (st == ISSIM_OK)
            st = read_double(r, "material: Poisson's ratio", &pv->poisson);
        return st == ISSIM_OK ? read_double(r, "material: density", &pv->density) : st;
    }
    if (strcmp(k, "mesh_size") == 0)
        return read_double(r, "mesh_size", &pv->mesh_size);
    if (strcmp(k, "thickness") == 0)
        return read_double(r, "thickness", &pv->thickness);
    char msg[400];
    snprintf(msg, sizeof msg,
             "unknown key '%s' (known: body dimension period samples nodes generator material "
             "mesh_size thickness created note node)",
             k);
    return fail(r, ISSIM_ERR_INVALID, msg);
}

static IssimStatus read_header(Reader *r, Header *h) {
    if (!next_token(r) || strcmp(r->token, "issim-contact-map") != 0)
        return fail(r, ISSIM_ERR_INVALID,
                    "not a contact map (the file must start with 'issim-contact-map 1')");
    int version = 0;
    IssimStatus s = read_int(r, "format version", 1, 1000000, &version);
    if (s != ISSIM_OK)
        return s;
    if (version != CONTACT_MAP_FORMAT_VERSION) {
        char msg[200];
        snprintf(msg, sizeof msg, "format version %d: this build reads version %d", version,
                 CONTACT_MAP_FORMAT_VERSION);
        return fail(r, ISSIM_ERR_INVALID, msg);
    }
    h->spec.provenance = (ContactMapProvenance){
        .youngs = NAN, .poisson = NAN, .density = NAN, .mesh_size = NAN, .thickness = NAN};
    while (next_token(r) && strcmp(r->token, "node") != 0)
        if ((s = read_header_key(r, h)) != ISSIM_OK)
            return s;
    const char *missing = !h->have_body        ? "body"
                          : !h->have_dimension ? "dimension"
                          : !h->have_period    ? "period"
                          : !h->have_samples   ? "samples"
                          : !h->have_nodes     ? "nodes"
                                               : NULL;
    if (missing) {
        char msg[200];
        snprintf(msg, sizeof msg, "the header has no '%s' line before the first node", missing);
        return fail(r, ISSIM_ERR_INVALID, msg);
    }
    return ISSIM_OK;
}

/* Sample k of node j, parsed where it stands: the samples are nearly all of a map's text (26,000
 * numbers in assets/maps/steel_bar.map), and copying each into r->token and formatting its
 * message beforehand was a third of the read (docs/performance.md, "Sweep start-up"). Anything
 * the fast path does not accept goes through read_double, whose message names the token. */
static IssimStatus read_sample(Reader *r, int j, int k, int samples, double *out) {
    skip_space(r);
    char *end = NULL;
    *out = strtod(r->p, &end);
    bool token_ends = *end == '\0' || *end == '#' || isspace((unsigned char)*end);
    if (end != r->p && token_ends && isfinite(*out)) {
        r->token_line = r->line;
        r->p = end;
        return ISSIM_OK;
    }
    char what[96];
    snprintf(what, sizeof what, "node %d: sample %d of %d", j, k + 1, samples);
    return read_double(r, what, out);
}

/* One node record; r->token holds "node" (or whatever came instead). */
static IssimStatus read_node(Reader *r, int j, int samples, ContactMapNode *node, double *step) {
    char ctx[64];
    snprintf(ctx, sizeof ctx, "node %d", j);
    if (strcmp(r->token, "node") != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "expected 'node' for node %d, found '%s'", j,
                 r->token[0] ? r->token : "end of file");
        return fail(r, ISSIM_ERR_INVALID, msg);
    }
    int index = -1;
    IssimStatus s = read_int(r, "node index", 0, CONTACT_MAP_MAX_NODES, &index);
    if (s == ISSIM_OK && index != j) {
        char msg[200];
        snprintf(msg, sizeof msg, "node %d: out of order (node %d expected here)", index, j);
        return fail(r, ISSIM_ERR_INVALID, msg);
    }
    if (s == ISSIM_OK && (s = expect(r, "position", ctx)) == ISSIM_OK)
        s = read_vec(r, ctx, &node->position);
    if (s == ISSIM_OK && (s = expect(r, "normal", ctx)) == ISSIM_OK)
        s = read_vec(r, ctx, &node->normal);
    if (s != ISSIM_OK)
        return s;
    node->angle = NAN;
    char *save = r->p;
    int save_line = r->line;
    if (next_token(r) && strcmp(r->token, "angle") == 0)
        s = read_double(r, ctx, &node->angle);
    else {
        r->p = save;
        r->line = save_line;
    }
    for (int k = 0; s == ISSIM_OK && k < samples; k++)
        s = read_sample(r, j, k, samples, &step[k]);
    return s;
}

/* ===== Node records parsed by several threads (contact_map_read_threads) =====
 * The records start at the word "node" first on a line (as contact_map_write puts them); each
 * task parses a run of records with its own Reader and checks that the run ends where the next
 * one starts, so every record is read from the place the serial reader would read it. Anything
 * else (records sharing lines, a bad value) sends the caller back to the serial reader: its
 * messages, and its map. Task 0 makes the FFT plans meanwhile (contact_map_fft_plan). */

/* The starts of the node_count records from node 0's (first); false unless exactly that many. */
static bool find_records(char *first, char **starts, int node_count) {
    int found = 0;
    for (char *line = first; line;) {
        char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        bool record = strncmp(p, "node", 4) == 0 &&
                      (p[4] == '\0' || p[4] == '#' || isspace((unsigned char)p[4]));
        if (record && found == node_count)
            return false;
        if (record)
            starts[found++] = p;
        line = strchr(p, '\n');
        if (line)
            line++;
    }
    return found == node_count;
}

typedef struct RecordJob {
    const char *path;
    char **starts;
    int samples, node_count, chunks;
    ContactMapNode *nodes;
    double *step;
    atomic_bool failed;
} RecordJob;

static void record_task(void *context, int task) {
    RecordJob *job = context;
    if (task == 0) {
        contact_map_fft_plan(job->samples);
        return;
    }
    int first = (int)((long long)(task - 1) * job->node_count / job->chunks);
    int end = (int)((long long)task * job->node_count / job->chunks);
    IssimError unused;
    Reader r = {.path = job->path, .p = job->starts[first], .line = 1, .err = &unused};
    bool ok = true;
    for (int j = first; ok && j < end; j++)
        ok = next_token(&r) && read_node(&r, j, job->samples, &job->nodes[j],
                                         job->step + (size_t)j * (size_t)job->samples) == ISSIM_OK;
    if (ok && end < job->node_count) {
        skip_space(&r);
        ok = r.p == job->starts[end];
    } else if (ok) {
        ok = !next_token(&r);
    }
    if (!ok)
        atomic_store(&job->failed, true);
}

/* r holds node 0's "node" token. True when every record was read. */
static bool parse_records_parallel(Reader *r, const ContactMapSpec *spec, int threads,
                                   ContactMapNode *nodes, double *step) {
    char **starts = malloc(sizeof *starts * (size_t)spec->node_count);
    bool ok = starts && find_records(r->p - strlen("node"), starts, spec->node_count);
    if (ok) {
        int chunks = 4 * threads < spec->node_count ? 4 * threads : spec->node_count;
        RecordJob job = {.path = r->path,
                         .starts = starts,
                         .samples = spec->samples,
                         .node_count = spec->node_count,
                         .chunks = chunks,
                         .nodes = nodes,
                         .step = step};
        atomic_init(&job.failed, false);
        contact_map_parallel(threads, chunks + 1, record_task, &job);
        ok = !atomic_load(&job.failed);
    }
    free(starts);
    return ok;
}

static IssimStatus parse_records(Reader *r, const ContactMapSpec *spec, ContactMapNode *nodes,
                                 double *step) {
    IssimStatus s = ISSIM_OK;
    for (int j = 0; s == ISSIM_OK && j < spec->node_count; j++) {
        if (j > 0)
            next_token(r);
        s = read_node(r, j, spec->samples, &nodes[j], step + (size_t)j * (size_t)spec->samples);
    }
    if (s == ISSIM_OK && next_token(r)) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "'%s' after the last of %d nodes (is 'nodes' or 'samples' wrong?)", r->token,
                 spec->node_count);
        s = fail(r, ISSIM_ERR_INVALID, msg);
    }
    return s;
}

static IssimStatus parse_map(Reader *r, const char *path, ContactMap **out) {
    Header h = {0};
    IssimStatus s = read_header(r, &h);
    if (s != ISSIM_OK)
        return s;
    ContactMapSpec *spec = &h.spec;
    if ((size_t)spec->samples * (size_t)spec->node_count > CONTACT_MAP_MAX_VALUES)
        return fail(r, ISSIM_ERR_RANGE, "nodes x samples is over the 2^26 values a map may hold");
    ContactMapNode *nodes = calloc((size_t)spec->node_count, sizeof *nodes);
    double *step = malloc((size_t)spec->samples * (size_t)spec->node_count * sizeof *step);
    if (!nodes || !step)
        s = fail(r, ISSIM_ERR_NOMEM, "out of memory");
    int threads = contact_map_read_thread_count();
    bool parsed = s == ISSIM_OK && threads > 1 && strcmp(r->token, "node") == 0 &&
                  parse_records_parallel(r, spec, threads, nodes, step);
    if (s == ISSIM_OK && !parsed)
        s = parse_records(r, spec, nodes, step);
    if (s == ISSIM_OK) {
        spec->nodes = nodes;
        spec->step = step;
        s = contact_map_create_threads(spec, path, threads, out, r->err);
    }
    free(nodes);
    free(step);
    return s;
}

IssimStatus contact_map_read(const char *path, ContactMap **out, IssimError *err) {
    *out = NULL;
    char *text = NULL;
    size_t size = 0;
    IssimStatus s =
        issim_read_file(path, CONTACT_MAP_FILE_MAX_BYTES, "contact map", &text, &size, err);
    if (s != ISSIM_OK)
        return s;
    if (strlen(text) != size) {
        free(text);
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: contains a NUL byte (a contact map is a text file)", path);
    }
    Reader r = {.path = path, .p = text, .line = 1, .token_line = 1, .err = err};
    s = parse_map(&r, path, out);
    free(text);
    return s;
}

static void write_provenance(FILE *f, const ContactMapProvenance *pv) {
    if (pv->generator[0])
        fprintf(f, "generator %s\n", pv->generator);
    if (isfinite(pv->youngs) && isfinite(pv->poisson) && isfinite(pv->density))
        fprintf(f, "material %.17g %.17g %.17g\n", pv->youngs, pv->poisson, pv->density);
    if (isfinite(pv->mesh_size))
        fprintf(f, "mesh_size %.17g\n", pv->mesh_size);
    if (isfinite(pv->thickness))
        fprintf(f, "thickness %.17g\n", pv->thickness);
    if (pv->created[0])
        fprintf(f, "created %s\n", pv->created);
    if (pv->note[0])
        fprintf(f, "note %s\n", pv->note);
}

static void write_node(FILE *f, const ContactMap *map, int j) {
    const ContactMapNode *n = &map->nodes[j];
    fprintf(f, "node %d position %.17g %.17g %.17g normal %.17g %.17g %.17g", j, n->position.x,
            n->position.y, n->position.z, n->normal.x, n->normal.y, n->normal.z);
    if (isfinite(n->angle))
        fprintf(f, " angle %.17g", n->angle);
    const double *h = contact_map_step(map, j);
    for (int k = 0; k < map->samples; k++)
        fprintf(f, "%s%.17g", k % 8 == 0 ? "\n  " : " ", h[k]);
    fputc('\n', f);
}

IssimStatus contact_map_write(const ContactMap *map, const char *path, IssimError *err) {
    FILE *f = fopen(path, "w");
    if (!f)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot write contact map %s: %s", path,
                               strerror(errno));
    fprintf(f, "issim-contact-map %d\n# docs/contact-map-format.md\n", CONTACT_MAP_FORMAT_VERSION);
    fprintf(f, "body %s\ndimension %d\nperiod %.17g\nsamples %d\nnodes %d\n",
            map->body[0] ? map->body : "-", map->dimension, map->period, map->samples,
            map->node_count);
    write_provenance(f, &map->provenance);
    for (int j = 0; j < map->node_count; j++)
        write_node(f, map, j);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot write contact map %s: %s", path,
                               strerror(errno));
    return ISSIM_OK;
}
