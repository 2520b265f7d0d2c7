/* `issim map FILE [--plot PNG] [--nodes LIST] [--until T]`: prints a contact-response map
 * (docs/contact-map-format.md) and plots its step and impulse responses per node with gnuplot
 * (the impulse response g(kT) = (h(kT) - h((k-1)T)) / T of 000 eq. 3.16). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "issim/core.h"

int cmd_map(int argc, char **argv);

static void map_usage(FILE *out) {
    fputs("usage: issim map FILE [--plot PNG] [--nodes LIST] [--until T]\n"
          "       issim map --write FILE --body NAME \"flat K [period T]\"\n"
          "       issim map --write FILE --body NAME \"transient K PEAK DECAY [period T] [samples "
          "N]\"\n"
          "  --write makes a synthetic map (000 4.2-4.3: a flat step of K N/m, or K plus a\n"
          "  transient PEAK exp(-t / DECAY)) and writes it in the map format\n"
          "  prints the map's header, provenance and a line per node (position, normal,\n"
          "  angle, h(T), peak, steady state h(NT)); --plot writes the step and impulse\n"
          "  responses of the nodes in LIST (comma-separated indices, default all, at most 12)\n"
          "  up to T seconds (default the whole map) as a PNG through gnuplot\n",
          out);
}

static void print_map(const ContactMap *map) {
    const ContactMapProvenance *pv = contact_map_provenance(map);
    printf("map        %s\nbody       %s\ndimension  %d\nperiod     %g s\nsamples    %d "
           "(memory %g s)\nnodes      %d\n",
           contact_map_origin(map), contact_map_body(map), contact_map_dimension(map),
           contact_map_period(map), contact_map_samples(map),
           contact_map_samples(map) * contact_map_period(map), contact_map_node_count(map));
    if (pv->generator[0])
        printf("generator  %s\n", pv->generator);
    if (isfinite(pv->youngs))
        printf("material   E %g Pa, nu %g, rho %g kg/m^3\n", pv->youngs, pv->poisson, pv->density);
    if (isfinite(pv->mesh_size))
        printf("mesh size  %g m\n", pv->mesh_size);
    if (isfinite(pv->thickness))
        printf("thickness  %g m\n", pv->thickness);
    if (pv->created[0])
        printf("created    %s\n", pv->created);
    printf("%5s %30s %26s %7s %12s %12s %12s\n", "node", "position [m]", "normal", "angle",
           "h(T) [N/m]", "peak [N/m]", "h(NT) [N/m]");
    int n = contact_map_samples(map);
    for (int j = 0; j < contact_map_node_count(map); j++) {
        const ContactMapNode *node = contact_map_node(map, j);
        const double *h = contact_map_step(map, j);
        double peak = h[0];
        for (int k = 1; k < n; k++)
            peak = fabs(h[k]) > fabs(peak) ? h[k] : peak;
        printf("%5d (%9.4g %9.4g %9.4g) (%7.4f %7.4f %7.4f) %7.2f %12.5g %12.5g %12.5g\n", j,
               node->position.x, node->position.y, node->position.z, node->normal.x, node->normal.y,
               node->normal.z, node->angle, h[0], peak, h[n - 1]);
    }
}

/* Nodes to plot from "1,3,5" (NULL: all, up to 12). Returns the count. */
static int parse_nodes(const char *list, int node_count, int *out) {
    int count = 0;
    if (!list) {
        for (int j = 0; j < node_count && count < 12; j++)
            out[count++] = j;
        return count;
    }
    for (const char *p = list; *p && count < 12;) {
        char *end;
        long j = strtol(p, &end, 10);
        if (end == p || j < 0 || j >= node_count)
            return -1;
        out[count++] = (int)j;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return count;
}

static int plot_map(const ContactMap *map, const char *png, const int *nodes, int count,
                    double until) {
    char data[] = "/tmp/issim-map-XXXXXX";
    int fd = mkstemp(data);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "issim map: cannot write a temporary file\n");
        return 1;
    }
    double T = contact_map_period(map);
    int n = contact_map_samples(map);
    int last = until > 0.0 ? (int)fmin(n, ceil(until / T)) : n;
    for (int k = 0; k < last; k++) {
        fprintf(f, "%.9g", (k + 1) * T * 1e6);
        for (int i = 0; i < count; i++) {
            const double *h = contact_map_step(map, nodes[i]);
            double prev = k > 0 ? h[k - 1] : 0.0;
            fprintf(f, " %.9g %.9g", h[k], (h[k] - prev) / T);
        }
        fputc('\n', f);
    }
    fclose(f);
    FILE *gp = popen("gnuplot", "w");
    if (!gp) {
        fprintf(stderr, "issim map: cannot start gnuplot (Debian package gnuplot-nox)\n");
        unlink(data);
        return 1;
    }
    fprintf(gp, "set terminal pngcairo size 1100,800 noenhanced\nset output '%s'\n", png);
    fprintf(gp, "set multiplot layout 2,1 title '%s (body %s, T = %g s)'\n",
            contact_map_origin(map), contact_map_body(map), T);
    fprintf(gp, "set grid\nset key outside right\nset xlabel 't [us]'\n");
    const char *titles[2] = {"step response h(kT) [N/m]", "impulse response g(kT) [N/(m s)]"};
    for (int panel = 0; panel < 2; panel++) {
        fprintf(gp, "set ylabel '%s'\nplot ", titles[panel]);
        for (int i = 0; i < count; i++) {
            const ContactMapNode *node = contact_map_node(map, nodes[i]);
            char label[64];
            if (isfinite(node->angle))
                snprintf(label, sizeof label, "node %d (%g deg)", nodes[i], node->angle);
            else
                snprintf(label, sizeof label, "node %d", nodes[i]);
            fprintf(gp, "%s'%s' using 1:%d with lines title '%s'", i ? ", " : "", data,
                    2 + 2 * i + panel, label);
        }
        fputc('\n', gp);
    }
    fprintf(gp, "unset multiplot\n");
    int rc = pclose(gp);
    unlink(data);
    if (rc != 0) {
        fprintf(stderr, "issim map: gnuplot failed writing %s\n", png);
        return 1;
    }
    printf("plot       %s (%d nodes, %d samples each)\n", png, count, last);
    return 0;
}

static int write_synthetic(const char *path, const char *body, const char *spec) {
    ContactMap *map = NULL;
    IssimError err = {0};
    if (!body || !spec) {
        fprintf(stderr, "issim map: --write needs --body NAME and a synthetic map spec\n");
        return 2;
    }
    if (!contact_map_is_synthetic(spec)) {
        fprintf(stderr, "issim map: '%s': expected \"flat K ...\" or \"transient K ...\"\n", spec);
        return 2;
    }
    if (contact_map_load(spec, NULL, body, &map, &err) != ISSIM_OK ||
        contact_map_write(map, path, &err) != ISSIM_OK) {
        fprintf(stderr, "issim map: %s\n", err.message);
        contact_map_release(map);
        return 1;
    }
    contact_map_release(map);
    printf("wrote      %s (%s)\n", path, spec);
    return 0;
}

int cmd_map(int argc, char **argv) {
    const char *file = NULL, *png = NULL, *list = NULL, *write = NULL, *body = NULL;
    double until = 0.0;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            map_usage(stdout);
            return 0;
        } else if (strcmp(arg, "--plot") == 0 && has_value) {
            png = argv[++i];
        } else if (strcmp(arg, "--write") == 0 && has_value) {
            write = argv[++i];
        } else if (strcmp(arg, "--body") == 0 && has_value) {
            body = argv[++i];
        } else if (strcmp(arg, "--nodes") == 0 && has_value) {
            list = argv[++i];
        } else if (strcmp(arg, "--until") == 0 && has_value) {
            until = strtod(argv[++i], NULL);
        } else if (arg[0] != '-' && !file) {
            file = arg;
        } else {
            fprintf(stderr, "issim map: unexpected '%s'\n", arg);
            map_usage(stderr);
            return 2;
        }
    }
    if (write)
        return write_synthetic(write, body, file);
    if (!file) {
        map_usage(stderr);
        return 2;
    }
    ContactMap *map = NULL;
    IssimError err = {0};
    if (contact_map_read(file, &map, &err) != ISSIM_OK) {
        fprintf(stderr, "issim map: %s\n", err.message);
        return 1;
    }
    print_map(map);
    int rc = 0;
    if (png) {
        int nodes[12];
        int count = parse_nodes(list, contact_map_node_count(map), nodes);
        if (count <= 0) {
            fprintf(stderr, "issim map: --nodes '%s': indices 0 ... %d, comma-separated\n", list,
                    contact_map_node_count(map) - 1);
            rc = 2;
        } else {
            rc = plot_map(map, png, nodes, count, until);
        }
    }
    contact_map_release(map);
    return rc;
}
