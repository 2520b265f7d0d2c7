/* issim-mapgen: the command line. Reads a body description and material, checks everything
 * (before any computing), meshes, solves each map node's step response (seed 000 3.5, eqs.
 * 3.11-3.12) on threads and MPI ranks, writes the map through contact_map_write
 * (docs/contact-map-format.md) and reads it back with contact_map_read to validate it.
 * Usage: docs/contact-map-generator.md, or `issim-mapgen --help`.
 *
 * MPI: started by mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE set), rank r solves nodes
 * j % ranks == r and sends them to rank 0, which writes the one output. Started alone, the
 * program never initialises MPI.
 */
#include "mapgen.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ANGLES "18,30,42,54,66,78,90"

typedef struct Options {
    MapgenGeometry geometry;
    MapgenMaterial material;
    const char *output, *polygon, *partial_dir, *body, *points;
    double angles[MAPGEN_MAX_ANGLES];
    int every;
    double period, segment, thickness, safety;
    int samples, threads;
    bool quiet, by_angle, mirror, deformation_only, every_set, force, keep_partial, help;
} Options;

/* A run estimated beyond these is refused unless --force: it would not end in a working day
 * or not fit in memory. Beyond the hard limit the solver's int indices overflow. */
#define LIMIT_WALL_SECONDS (24.0 * 3600.0)
#define LIMIT_MEMORY_FRACTION 0.5
#define LIMIT_HARD_MESH_NODES 5e7

static void usage(FILE *to) {
    fprintf(to,
            "usage: issim-mapgen -o OUT.map [options]\n"
            "  body:     --shape bar|circle|sphere|polygon (bar) --length L (0.2) --diameter D\n"
            "            (0.0125) --radius R --polygon FILE (x y per line, last = first)\n"
            "            --body NAME (bar)\n"
            "            --dimension 2|3 (2: plane strain; 3: the solid bar or sphere)\n"
            "  material: --youngs E (5.46e11 Pa) --poisson NU (0.3) --density RHO (7876.74)\n"
            "  mesh:     --element-size H (5e-4 m)\n"
            "  nodes:    --angles A,B,... (bar, degrees, default " DEFAULT_ANGLES ")\n"
            "            --every K (every k-th boundary node) --at X,Y[,Z][:...] (points, m)\n"
            "            --segment S (driven arc length around a node, m; 0: the node alone)\n"
            "  map:      --period T (1e-6 s) --samples N (1000) --thickness W (m; default the\n"
            "            bar's or circle's diameter, 1 for a polygon)\n"
            "  run:      --threads N (1) --resume-dir DIR (OUT.partial, removed when the map\n"
            "            is written) --keep-partial --safety F (0.9) --quiet\n"
            "            --force (run although the estimate printed before meshing exceeds\n"
            "            half the memory or 24 hours)\n"
            "  bar:      --mirror (also write each node's images in x = 0 and y = 0)\n"
            "  physics:  --deformation-only (the rigid-body modes removed: the map of the\n"
            "            deformation, which settles to a steady compliance)\n");
}

static int parse_list(const char *text, double *values, int max, const char *sep) {
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        values[n++] = strtod(p, &end);
        if (end == p)
            return -1;
        p = end;
        if (*p && !strchr(sep, *p))
            return -1;
        if (*p)
            p++;
    }
    return *p ? -1 : n;
}

static IssimStatus parse_number(const char *name, const char *text, double *out, IssimError *err) {
    char *end;
    double v = text ? strtod(text, &end) : NAN;
    if (!text || end == text || *end || !isfinite(v))
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: expected a number, got \"%s\"", name,
                               text ? text : "(nothing)");
    *out = v;
    return ISSIM_OK;
}

static IssimStatus parse_args(int argc, char **argv, Options *o, IssimError *err) {
    *o = (Options){.material = mapgen_material_steel_bar(),
                   .period = 1e-6,
                   .samples = 1000,
                   .safety = MAPGEN_CFL_SAFETY,
                   .threads = 1,
                   .body = "bar"};
    o->geometry = mapgen_geometry_steel_bar(2, 5e-4, NULL, 0);
    const char *angles = NULL;
    IssimStatus st = ISSIM_OK;
    for (int i = 1; i < argc && st == ISSIM_OK; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x = 0.0;
        bool value = true;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            o->output = v;
        else if (strcmp(a, "--shape") == 0) {
            if (v && strcmp(v, "bar") == 0)
                o->geometry.shape = MAPGEN_SHAPE_BAR;
            else if (v && (strcmp(v, "circle") == 0 || strcmp(v, "sphere") == 0))
                o->geometry.shape = MAPGEN_SHAPE_CIRCLE;
            else if (v && strcmp(v, "polygon") == 0)
                o->geometry.shape = MAPGEN_SHAPE_POLYGON;
            else
                st = issim_error_set(err, ISSIM_ERR_INVALID,
                                     "--shape: \"%s\" is not bar, circle (sphere) or polygon",
                                     v ? v : "(nothing)");
        } else if (strcmp(a, "--polygon") == 0) {
            o->polygon = v;
            o->geometry.shape = MAPGEN_SHAPE_POLYGON;
        } else if (strcmp(a, "--body") == 0)
            o->body = v;
        else if (strcmp(a, "--angles") == 0)
            angles = v;
        else if (strcmp(a, "--at") == 0)
            o->points = v;
        else if (strcmp(a, "--resume-dir") == 0)
            o->partial_dir = v;
        else if (strcmp(a, "--quiet") == 0 || strcmp(a, "--mirror") == 0 ||
                 strcmp(a, "--deformation-only") == 0 || strcmp(a, "--force") == 0 ||
                 strcmp(a, "--keep-partial") == 0) {
            bool *flag = a[2] == 'q'   ? &o->quiet
                         : a[2] == 'm' ? &o->mirror
                         : a[2] == 'd' ? &o->deformation_only
                         : a[2] == 'f' ? &o->force
                                       : &o->keep_partial;
            *flag = true;
            value = false;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = true;
            return ISSIM_OK;
        } else {
            static const struct {
                const char *flag;
                size_t offset;
            } numbers[] = {
                {"--length", offsetof(Options, geometry.length)},
                {"--diameter", offsetof(Options, geometry.diameter)},
                {"--radius", offsetof(Options, geometry.radius)},
                {"--element-size", offsetof(Options, geometry.element_size)},
                {"--youngs", offsetof(Options, material.youngs)},
                {"--poisson", offsetof(Options, material.poisson)},
                {"--density", offsetof(Options, material.density)},
                {"--period", offsetof(Options, period)},
                {"--segment", offsetof(Options, segment)},
                {"--thickness", offsetof(Options, thickness)},
                {"--safety", offsetof(Options, safety)},
            };
            size_t k = 0;
            for (; k < sizeof numbers / sizeof numbers[0]; k++)
                if (strcmp(a, numbers[k].flag) == 0)
                    break;
            if (k < sizeof numbers / sizeof numbers[0]) {
                st = parse_number(a, v, (double *)((char *)o + numbers[k].offset), err);
            } else if (strcmp(a, "--samples") == 0 || strcmp(a, "--threads") == 0 ||
                       strcmp(a, "--every") == 0 || strcmp(a, "--dimension") == 0) {
                st = parse_number(a, v, &x, err);
                if (st == ISSIM_OK && (x != floor(x) || fabs(x) > 1e9))
                    st = issim_error_set(err, ISSIM_ERR_INVALID, "%s: %g is not an integer", a, x);
                int *target = a[2] == 's'   ? &o->samples
                              : a[2] == 't' ? &o->threads
                              : a[2] == 'd' ? &o->geometry.dimension
                                            : &o->every;
                *target = (int)x;
                o->every_set = o->every_set || target == &o->every;
            } else {
                st = issim_error_set(err, ISSIM_ERR_INVALID,
                                     "unknown option \"%s\" (--help lists them)", a);
            }
        }
        if (value && st == ISSIM_OK && !v)
            st = issim_error_set(err, ISSIM_ERR_INVALID, "%s needs a value", a);
        i += value;
    }
    if (st != ISSIM_OK)
        return st;
    if (!o->output)
        return issim_error_set(err, ISSIM_ERR_INVALID, "no output: give -o OUT.map");
    o->by_angle = o->geometry.shape == MAPGEN_SHAPE_BAR && !o->every_set && !o->points;
    if (o->by_angle || angles) {
        if (o->geometry.shape != MAPGEN_SHAPE_BAR)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "--angles: impact angles are defined on the bar only");
        int n = parse_list(angles ? angles : DEFAULT_ANGLES, o->angles, MAPGEN_MAX_ANGLES, ",");
        if (n <= 0)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "--angles: expected up to %d comma-separated degrees, got "
                                   "\"%s\"",
                                   MAPGEN_MAX_ANGLES, angles);
        o->geometry.angles = o->angles;
        o->geometry.angle_count = n;
        o->by_angle = true;
    }
    return ISSIM_OK;
}

/* d x area / perimeter (2D) or d x volume / surface (3D): about half the body's width. */
static double body_width(const MapgenMesh *mesh) {
    return mesh->dimension * mesh->measure / mesh->perimeter;
}

/* The checks that need no mesh, so bad input is refused before Gmsh runs. */
static IssimStatus check_options(const Options *o, IssimError *err) {
    IssimStatus st = mapgen_material_check(&o->material, err);
    if (st == ISSIM_OK && o->geometry.shape != MAPGEN_SHAPE_POLYGON)
        st = mapgen_geometry_check(&o->geometry, err);
    if (st != ISSIM_OK)
        return st;
    if (!(o->period > 0.0))
        return issim_error_set(err, ISSIM_ERR_RANGE, "--period T = %g s: must be positive",
                               o->period);
    if (o->samples < 1 || o->samples > CONTACT_MAP_MAX_SAMPLES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "--samples %d: must be in [1, %d]", o->samples,
                               CONTACT_MAP_MAX_SAMPLES);
    if (o->threads < 1 || o->threads > 256)
        return issim_error_set(err, ISSIM_ERR_RANGE, "--threads %d: must be in [1, 256]",
                               o->threads);
    if (o->every_set && o->every < 1)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "--every %d: must be at least 1 (every K-th boundary node around "
                               "the outline; 1 takes them all)",
                               o->every);
    if (!o->by_angle && !o->every_set && !o->points)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "no map nodes: a %s takes --every K (K >= 1) or --at X,Y[:...] "
                               "(impact angles are the bar's)",
                               o->geometry.shape == MAPGEN_SHAPE_CIRCLE ? "circle or sphere"
                                                                        : "polygon");
    if (!(o->safety > 0.0 && o->safety <= 1.0))
        return issim_error_set(err, ISSIM_ERR_RANGE, "--safety %g: must be in (0, 1]", o->safety);
    if (!(o->segment >= 0.0) || !(o->thickness >= 0.0))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "--segment %g m, --thickness %g m: must not be negative", o->segment,
                               o->thickness);
    if (o->mirror && o->geometry.shape == MAPGEN_SHAPE_POLYGON)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "--mirror: a polygon need not be symmetric in x = 0 and y = 0 "
                               "(the bar and the circle or sphere are)");
    if (strlen(o->body) == 0 || strlen(o->body) >= CONTACT_MAP_NAME_MAX ||
        strcspn(o->body, " \t\n#") != strlen(o->body))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "--body \"%s\": one word of 1 to %d characters", o->body,
                               CONTACT_MAP_NAME_MAX - 1);
    return ISSIM_OK;
}

static void human_bytes(double bytes, char *out, size_t size) {
    if (bytes < 1e9)
        snprintf(out, size, "%.0f MB", bytes / 1e6);
    else
        snprintf(out, size, "%.3g GB", bytes / 1e9);
}

static void human_seconds(double s, char *out, size_t size) {
    if (s < 120.0)
        snprintf(out, size, "%.0f s", s);
    else if (s < 7200.0)
        snprintf(out, size, "%.0f min", s / 60.0);
    else if (s < 2.0 * 86400.0)
        snprintf(out, size, "%.1f h", s / 3600.0);
    else
        snprintf(out, size, "%.3g days", s / 86400.0);
}

/* Before meshing: what the run will take, printed, and refused beyond the limits unless
 * --force (Gmsh alone, on an element size far below the body's, would run for minutes and
 * take gigabytes before any check that needs the mesh). */
static IssimStatus check_estimate(const Options *o, int rank, int ranks, IssimError *err) {
    MapgenEstimate e;
    mapgen_estimate(&o->geometry, &o->material, &e);
    double map_nodes = 1.0;
    if (o->by_angle)
        map_nodes = o->geometry.angle_count;
    else if (o->every_set)
        map_nodes = ceil(e.boundary_nodes / o->every);
    else
        for (const char *p = o->points; *p; p++)
            map_nodes += *p == ':';
    double substeps = ceil(o->period / (o->safety * e.dt_cfl));
    double steps = substeps * o->samples;
    double cpu = map_nodes * steps * e.node_step_seconds * (o->deformation_only ? 1.6 : 1.0);
    double workers = fmin(map_nodes, (double)o->threads * ranks);
    double wall = e.setup_seconds + cpu / workers;
    double bytes = e.bytes + map_nodes * o->samples * sizeof(double) * (o->mirror ? 8.0 : 2.0);
    double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    char b[32], m[32], w[32], c[32];
    human_bytes(bytes, b, sizeof b);
    human_bytes(memory, m, sizeof m);
    human_seconds(wall, w, sizeof w);
    human_seconds(e.setup_seconds + cpu, c, sizeof c);
    char summary[512];
    snprintf(summary, sizeof summary,
             "about %.3g mesh nodes (element %g m), %s per process (of %s), %s on %d rank(s) x "
             "%d thread(s) (%s CPU): %.0f map node(s) x %d samples x %.0f steps of %.3g s",
             e.mesh_nodes, o->geometry.element_size, b, m, w, ranks, o->threads, c, map_nodes,
             o->samples, substeps, o->period / substeps);
    if (e.mesh_nodes > LIMIT_HARD_MESH_NODES)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "--element-size %g m: %s; at most %.0e mesh nodes (the solver's "
                               "indices), even with --force: a larger element size",
                               o->geometry.element_size, summary, LIMIT_HARD_MESH_NODES);
    if (!o->force && bytes > LIMIT_MEMORY_FRACTION * memory)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "--element-size %g m: %s: more than half this machine's memory; "
                               "a larger element size, or --force",
                               o->geometry.element_size, summary);
    if (!o->force && wall > LIMIT_WALL_SECONDS)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "%s: more than %.0f hours; a larger element size or --period, "
                               "fewer --samples or nodes, more --threads or ranks, or --force",
                               summary, LIMIT_WALL_SECONDS / 3600.0);
    if (rank == 0 && !o->quiet)
        fprintf(stderr, "mapgen: estimate: %s\n", summary);
    return ISSIM_OK;
}

/* A node by angle on the bar's rounded end. 2D: Gmsh put a mesh node exactly there. 3D: the
 * nearest surface node; its normal is the cap's radial direction there and the angle stored is
 * the one that node answers. */
static IssimStatus node_by_angle(const Options *o, const MapgenMesh *mesh, int j, int *index,
                                 double *normal, double *angle, IssimError *err) {
    double p[3] = {0, 0, 0}, n2[2];
    mapgen_bar_cap_point(&o->geometry, o->angles[j], p, n2);
    char what[64];
    snprintf(what, sizeof what, "map node %d (angle %g)", j, o->angles[j]);
    IssimStatus st = mapgen_boundary_nearest(mesh, p, what, index, err);
    *angle = o->angles[j];
    normal[0] = n2[0];
    normal[1] = n2[1];
    if (st != ISSIM_OK || mesh->dimension == 2)
        return st;
    const double *q = mesh->points + 3 * mesh->boundary[*index];
    double centre = 0.5 * o->geometry.length - 0.5 * o->geometry.diameter;
    double r[3] = {q[0] - centre, q[1], q[2]};
    double len = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int a = 0; a < 3; a++)
        normal[a] = r[a] / len;
    *angle = 90.0 - acos(fmax(-1.0, fmin(1.0, normal[0]))) * 180.0 / M_PI;
    return ISSIM_OK;
}

/* Map nodes: by angle on the bar's rounded end, every k-th boundary node, or listed points. */
static IssimStatus choose_nodes(const Options *o, const MapgenMesh *mesh, int *count, int **index,
                                double **normals, double **angles, IssimError *err) {
    int d = mesh->dimension;
    int max = o->by_angle ? o->geometry.angle_count
              : o->every  ? (mesh->boundary_count + o->every - 1) / o->every
                          : 1 + (int)(strlen(o->points) / 2);
    if (max > CONTACT_MAP_MAX_NODES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "%d nodes: a map holds at most %d", max,
                               CONTACT_MAP_MAX_NODES);
    *index = malloc((size_t)max * sizeof **index);
    *normals = malloc((size_t)max * (size_t)d * sizeof **normals);
    *angles = malloc((size_t)max * sizeof **angles);
    double *at = malloc((size_t)max * (size_t)d * sizeof *at);
    if (!*index || !*normals || !*angles || !at) {
        free(at);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "nodes: out of memory");
    }
    int n = 0;
    IssimStatus st = ISSIM_OK;
    if (o->by_angle) {
        for (; n < o->geometry.angle_count && st == ISSIM_OK; n++)
            st = node_by_angle(o, mesh, n, *index + n, *normals + d * n, *angles + n, err);
    } else if (o->every) {
        for (int b = 0; b < mesh->boundary_count; b += o->every, n++) {
            (*index)[n] = b;
            memcpy(*normals + d * n, mesh->normals + d * b, (size_t)d * sizeof *at);
            (*angles)[n] = NAN;
        }
    } else {
        n = parse_list(o->points, at, d * max, ",:");
        if (n <= 0 || n % d)
            st = issim_error_set(err, ISSIM_ERR_INVALID,
                                 "--at: expected %s triples separated by ':', got \"%s\"",
                                 d == 3 ? "X,Y,Z" : "X,Y", o->points);
        n /= d;
        for (int j = 0; j < n && st == ISSIM_OK; j++) {
            char what[64];
            snprintf(what, sizeof what, "map node %d", j);
            st = mapgen_boundary_nearest(mesh, at + d * j, what, *index + j, err);
            if (st == ISSIM_OK)
                memcpy(*normals + d * j, mesh->normals + d * (*index)[j], (size_t)d * sizeof *at);
            (*angles)[j] = NAN;
        }
    }
    free(at);
    *count = n;
    return st;
}

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t size) {
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static unsigned long long job_key(const Options *o, const MapgenMesh *mesh, const MapgenJob *job) {
    /* Version 2 counts the jump's impulse: partial files of version 1 must not be resumed. */
    static const char method[] = "issim-mapgen 2: interval impulses";
    unsigned long long h = fnv1a(14695981039346656037ull, method, sizeof method);
    h = fnv1a(h, &o->material, sizeof o->material);
    int d = mesh->dimension;
    h = fnv1a(h, mesh->points, (size_t)mesh->node_count * (size_t)d * sizeof *mesh->points);
    h = fnv1a(h, mesh->cells, (size_t)mesh->cell_count * (size_t)(d + 1) * sizeof *mesh->cells);
    h = fnv1a(h, job->boundary_index, (size_t)job->node_count * sizeof *job->boundary_index);
    h = fnv1a(h, job->directions, (size_t)job->node_count * (size_t)d * sizeof *job->directions);
    double scalars[3] = {job->segment, job->period, job->safety};
    h = fnv1a(h, scalars, sizeof scalars);
    if (job->deformation_only) /* the free body's keys stay those of earlier versions */
        h = fnv1a(h, "deformation only", 16);
    return fnv1a(h, &job->samples, sizeof job->samples);
}

/* The map's node records and responses (N/m): the computed nodes and, with --mirror, their
 * images in the bar's two symmetry planes x = 0 and y = 0 (the same response by symmetry;
 * an image that coincides with a node already listed is left out). */
static IssimStatus map_rows(const Options *o, const MapgenMesh *mesh, const MapgenJob *job,
                            const double *normals, const double *angles, const double *h,
                            double thickness, ContactMapNode **nodes, double **step, int *count,
                            IssimError *err) {
    static const double images[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    int d = mesh->dimension, copies = o->mirror ? 4 : 1, n = 0;
    size_t samples = (size_t)job->samples;
    *nodes = calloc((size_t)job->node_count * (size_t)copies, sizeof **nodes);
    *step = malloc((size_t)job->node_count * (size_t)copies * samples * sizeof **step);
    if (!*nodes || !*step)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "map: out of memory");
    for (int c = 0; c < copies; c++) {
        for (int j = 0; j < job->node_count; j++) {
            const double *p = mesh->points + d * mesh->boundary[job->boundary_index[j]];
            const double *nj = normals + d * j, *s = images[c];
            /* A 2D outline lies in the body's x-z plane (docs/contact-map-format.md: the plane
             * planar scenes move in), the mesher's y being the body's -z: the nodes at y > 0 are
             * on the side a bar turned by a positive angle about y lands on. */
            ContactMapNode node =
                d == 3 ? (ContactMapNode){.position = {s[0] * p[0], s[1] * p[1], p[2]},
                                          .normal = {s[0] * nj[0], s[1] * nj[1], nj[2]}}
                       : (ContactMapNode){.position = {s[0] * p[0], 0.0, -s[1] * p[1]},
                                          .normal = {s[0] * nj[0], 0.0, -s[1] * nj[1]}};
            node.angle = angles[j];
            bool seen = false;
            for (int k = 0; k < n && !seen; k++)
                seen = vec3_norm(vec3_sub((*nodes)[k].position, node.position)) < 1e-12;
            if (seen)
                continue;
            (*nodes)[n] = node;
            for (size_t k = 0; k < samples; k++)
                (*step)[n * samples + k] = thickness * h[j * samples + k];
            n++;
        }
    }
    *count = n;
    return ISSIM_OK;
}

/* Writes the map and reads it back: every value must come back as written. */
static IssimStatus write_verified(const ContactMapSpec *spec, const char *path, IssimError *err) {
    ContactMap *map = NULL, *back = NULL;
    IssimStatus st = contact_map_create(spec, path, &map, err);
    if (st == ISSIM_OK)
        st = contact_map_write(map, path, err);
    if (st == ISSIM_OK)
        st = contact_map_read(path, &back, err);
    if (st == ISSIM_OK && (contact_map_node_count(back) != spec->node_count ||
                           contact_map_samples(back) != spec->samples))
        st = issim_error_set(err, ISSIM_ERR_IO, "%s: read back with %d nodes x %d samples", path,
                             contact_map_node_count(back), contact_map_samples(back));
    size_t samples = (size_t)spec->samples;
    for (int j = 0; st == ISSIM_OK && j < spec->node_count; j++)
        if (memcmp(contact_map_step(back, j), spec->step + j * samples,
                   samples * sizeof *spec->step) != 0)
            st = issim_error_set(err, ISSIM_ERR_IO, "%s: node %d reads back different values", path,
                                 j);
    if (map)
        contact_map_release(map);
    if (back)
        contact_map_release(back);
    return st;
}

static IssimStatus write_map(const Options *o, const MapgenMesh *mesh, const MapgenModel *model,
                             const MapgenJob *job, const double *normals, const double *angles,
                             const double *h, IssimError *err) {
    int d = mesh->dimension;
    /* Plane strain gives N/m per m of thickness; the format stores N/m. */
    double thickness = d == 3                                     ? 1.0
                       : o->thickness > 0.0                       ? o->thickness
                       : o->geometry.shape == MAPGEN_SHAPE_BAR    ? o->geometry.diameter
                       : o->geometry.shape == MAPGEN_SHAPE_CIRCLE ? 2.0 * o->geometry.radius
                                                                  : 1.0;
    ContactMapNode *nodes = NULL;
    double *step = NULL;
    int count = 0;
    IssimStatus st =
        map_rows(o, mesh, job, normals, angles, h, thickness, &nodes, &step, &count, err);
    ContactMapSpec spec = {.dimension = d,
                           .period = o->period,
                           .samples = o->samples,
                           .node_count = count,
                           .nodes = nodes,
                           .step = step};
    snprintf(spec.body, sizeof spec.body, "%s", o->body);
    ContactMapProvenance *pv = &spec.provenance;
    snprintf(pv->generator, sizeof pv->generator,
             "issim-mapgen %d fem %s lumped-mass central-differences", MAPGEN_VERSION,
             d == 3 ? "3d p1-tetrahedra" : "plane-strain p1-triangles");
    pv->youngs = o->material.youngs;
    pv->poisson = o->material.poisson;
    pv->density = o->material.density;
    pv->mesh_size = o->geometry.element_size;
    pv->thickness = d == 3 ? NAN : thickness;
    time_t now = time(NULL);
    strftime(pv->created, sizeof pv->created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(pv->note, sizeof pv->note,
             "%d nodes %d cells, dt %.4g s (safety %g), segment %g m, c1 %.6g c2 %.6g m/s%s%s",
             mesh->node_count, mesh->cell_count, mapgen_time_step(model, o->period, o->safety),
             o->safety, o->segment, mapgen_c1(&o->material), mapgen_c2(&o->material),
             o->mirror ? ", mirrored in x = 0 and y = 0" : "",
             o->deformation_only ? ", deformation only (rigid-body modes removed by inertia relief)"
                                 : ", free body");
    if (st == ISSIM_OK)
        st = write_verified(&spec, o->output, err);
    free(nodes);
    free(step);
    return st;
}

/* Rank 0 receives every other rank's nodes; the others send theirs. One tag: messages from
 * one rank arrive in the order sent (MPI's non-overtaking rule) and both sides walk the nodes
 * in the same order, so node indices (up to 65,536) never need to fit MPI's tag range. */
static void mpi_collect(const MapgenJob *job, double *h) {
    for (int j = 0; j < job->node_count; j++) {
        int owner = j % job->rank_count;
        double *row = h + (size_t)j * job->samples;
        if (job->rank == 0 && owner != 0)
            MPI_Recv(row, job->samples, MPI_DOUBLE, owner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (job->rank == owner && owner != 0)
            MPI_Send(row, job->samples, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    }
}

static bool under_mpirun(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* Every rank agrees on success: a failure anywhere stops all. */
static IssimStatus agree(bool mpi, IssimStatus st) {
    if (!mpi)
        return st;
    int local = st, worst = 0;
    MPI_Allreduce(&local, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return (IssimStatus)worst;
}

static IssimStatus generate(const Options *o, bool mpi, int rank, int ranks, IssimError *err) {
    MapgenMesh mesh = {0};
    MapgenModel model = {0};
    int count = 0, *index = NULL;
    double *normals = NULL, *angles = NULL, *h = NULL;
    IssimStatus st = mapgen_mesh_build(&o->geometry, &mesh, err);
    if (st == ISSIM_OK)
        st = choose_nodes(o, &mesh, &count, &index, &normals, &angles, err);
    /* The first reflection from the far side returns to a node after the wave crossed the body
     * and came back: a sample period longer than that round trip cannot resolve it. */
    double limit = st == ISSIM_OK ? 2.0 * body_width(&mesh) / mapgen_c1(&o->material) : 0.0;
    if (st == ISSIM_OK && o->period > limit)
        st = issim_error_set(err, ISSIM_ERR_RANGE,
                             "--period T = %g s: must be in (0, %g] s, the time a dilatational "
                             "wave (c1 = %g m/s) takes to cross the body's width (%s = %g m) and "
                             "back: a longer T cannot resolve the reflections",
                             o->period, limit, mapgen_c1(&o->material),
                             mesh.dimension == 3 ? "3 x volume / surface" : "2 x area / perimeter",
                             body_width(&mesh));
    if (st == ISSIM_OK)
        st = mapgen_model_build(&mesh, &o->material, &model, err);
    char partial[4096];
    snprintf(partial, sizeof partial, "%s", o->partial_dir ? o->partial_dir : "");
    if (!o->partial_dir)
        snprintf(partial, sizeof partial, "%s.partial", o->output);
    MapgenJob job = {.model = &model,
                     .node_count = count,
                     .boundary_index = index,
                     .directions = normals,
                     .segment = o->segment,
                     .deformation_only = o->deformation_only,
                     .period = o->period,
                     .samples = o->samples,
                     .safety = o->safety,
                     .threads = o->threads,
                     .partial_dir = partial,
                     .quiet = o->quiet,
                     .rank = rank,
                     .rank_count = ranks};
    if (st == ISSIM_OK) {
        job.key = job_key(o, &mesh, &job);
        h = calloc((size_t)count * (size_t)o->samples, sizeof *h);
        if (!h)
            st = issim_error_set(err, ISSIM_ERR_NOMEM, "%d x %d samples: out of memory", count,
                                 o->samples);
    }
    if (st == ISSIM_OK && rank == 0 && !o->quiet)
        fprintf(stderr,
                "mapgen: %d nodes, %d %s, element %g m; dt %.4g s (CFL %.4g s x %g); "
                "%d map node(s) x %d samples of %g s on %d rank(s) x %d thread(s)\n",
                mesh.node_count, mesh.cell_count, mesh.dimension == 3 ? "tetrahedra" : "triangles",
                o->geometry.element_size, mapgen_time_step(&model, o->period, o->safety),
                model.dt_cfl, o->safety, count, o->samples, o->period, ranks, o->threads);
    st = agree(mpi, st);
    if (st == ISSIM_OK)
        st = agree(mpi, mapgen_run(&job, h, NULL, err));
    if (st == ISSIM_OK && mpi)
        mpi_collect(&job, h);
    if (st == ISSIM_OK && rank == 0)
        st = write_map(o, &mesh, &model, &job, normals, angles, h, err);
    /* The partial files only serve a run that has not written its map: once it is written
     * (and read back), they go, unless asked to stay. */
    st = agree(mpi, st);
    if (st == ISSIM_OK && !o->keep_partial && !mapgen_partial_remove(partial) && rank == 0 &&
        !o->quiet)
        fprintf(stderr, "mapgen: kept %s: it holds files other than this run's\n", partial);
    if (st == ISSIM_OK && rank == 0 && !o->quiet)
        fprintf(stderr, "mapgen: wrote %s (validated by reading it back)\n", o->output);
    free(h);
    free(index);
    free(normals);
    free(angles);
    mapgen_model_free(&model);
    mapgen_mesh_free(&mesh);
    return st;
}

/* This process's rank as mpirun announced it, before (or without) MPI_Init; 0 alone. */
static int launcher_rank(void) {
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (getenv(names[i]))
            return atoi(getenv(names[i]));
    return 0;
}

int main(int argc, char **argv) {
    Options o;
    IssimError err = {0};
    IssimStatus st = parse_args(argc, argv, &o, &err);
    /* Help needs no MPI: every rank exits at once, one prints. */
    if (st == ISSIM_OK && o.help) {
        if (launcher_rank() == 0)
            usage(stdout);
        return 0;
    }
    bool mpi = under_mpirun();
    int rank = 0, ranks = 1;
    if (mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    }
    double *vertices = NULL;
    if (st == ISSIM_OK && o.geometry.shape == MAPGEN_SHAPE_POLYGON) {
        st = o.polygon
                 ? mapgen_polygon_read(o.polygon, &vertices, &o.geometry.vertex_count, &err)
                 : issim_error_set(&err, ISSIM_ERR_INVALID, "--shape polygon needs --polygon FILE");
        o.geometry.vertices = vertices;
        if (st == ISSIM_OK)
            st = mapgen_geometry_check(&o.geometry, &err);
    }
    if (st == ISSIM_OK)
        st = check_options(&o, &err);
    if (st == ISSIM_OK)
        st = check_estimate(&o, rank, ranks, &err);
    if (st == ISSIM_OK)
        st = generate(&o, mpi, rank, ranks, &err);
    if (st != ISSIM_OK && (rank == 0 || err.message[0]))
        fprintf(stderr, "issim-mapgen: error: %s\n",
                err.message[0] ? err.message : "another rank failed");
    free(vertices);
    mapgen_mesh_shutdown();
    if (mpi)
        MPI_Finalize();
    return st == ISSIM_OK ? 0 : 1;
}
