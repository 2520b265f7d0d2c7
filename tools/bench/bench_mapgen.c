/* issim-bench mapgen: the contact-map generator (tools/mapgen) on the steel bar of seed 000
 * Table 4.2 at the default mesh (element 0.5 mm). Prints the mesh, the seconds per node for a
 * 1 ms response at T = 1 us (one thread), the estimate for the 7 angles on 2 cores, and the
 * speed-ups of 2 threads over 1 (mapgen_run, 2 nodes of 200 us) and of `mpirun -np 2` over
 * `-np 1` (the issim-mapgen executable, the same 2 nodes, wall time including start-up).
 * Usage: issim-bench mapgen [--samples N] (the single-node run's samples, default 1000). */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mapgen.h"

static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double children_cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_CHILDREN, &r);
    return (double)r.ru_utime.tv_sec + 1e-6 * (double)r.ru_utime.tv_usec +
           (double)r.ru_stime.tv_sec + 1e-6 * (double)r.ru_stime.tv_usec;
}

/* The machine is shared: the 1-minute load average says how much of it a run could have. */
static double load_average(void) {
    double load = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1.0;
        fclose(f);
    }
    return load;
}

/* Wall seconds; *cpu_seconds gets the process CPU time it used. */
static double run_nodes(const MapgenModel *model, const int *index, const double *directions,
                        int nodes, int samples, int threads, double *cpu_seconds) {
    MapgenJob job = {.model = model,
                     .node_count = nodes,
                     .boundary_index = index,
                     .directions = directions,
                     .period = 1e-6,
                     .samples = samples,
                     .safety = MAPGEN_CFL_SAFETY,
                     .threads = threads,
                     .quiet = true,
                     .rank_count = 1};
    double *h = malloc((size_t)nodes * (size_t)samples * sizeof *h);
    IssimError err = {0};
    double start = wall(), cpu_start = cpu();
    IssimStatus st = h ? mapgen_run(&job, h, NULL, &err) : ISSIM_ERR_NOMEM;
    double seconds = wall() - start;
    *cpu_seconds = cpu() - cpu_start;
    free(h);
    if (st != ISSIM_OK)
        fprintf(stderr, "mapgen: %s\n", err.message);
    return st == ISSIM_OK ? seconds : -1.0;
}

static double run_mpi(int ranks, double *cpu_seconds) {
    char command[2048];
    snprintf(command, sizeof command,
             "cd /tmp && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s -np %d "
             "--oversubscribe %s -o /tmp/issim-bench-mapgen-%d.map --angles 90,18 --samples 200 "
             "--quiet --resume-dir /tmp/issim-bench-mapgen-%d-%ld >/dev/null 2>&1",
             ISSIM_MPIRUN, ranks, ISSIM_MAPGEN_BINARY, ranks, ranks, (long)time(NULL));
    double start = wall(), cpu_start = children_cpu();
    int rc = system(command);
    double seconds = wall() - start;
    *cpu_seconds = children_cpu() - cpu_start;
    return rc == 0 ? seconds : -1.0;
}

int bench_mapgen(int argc, char **argv) {
    int samples = 1000;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--samples") == 0)
            samples = atoi(argv[i + 1]);
    static const double angles[] = {90, 18};
    MapgenGeometry g = mapgen_geometry_steel_bar(2, 5e-4, angles, 2);
    MapgenMaterial steel = mapgen_material_steel_bar();
    MapgenMesh mesh;
    MapgenModel model;
    IssimError err = {0};
    double start = wall();
    if (mapgen_mesh_build(&g, &mesh, &err) != ISSIM_OK ||
        mapgen_model_build(&mesh, &steel, &model, &err) != ISSIM_OK) {
        fprintf(stderr, "mapgen: %s\n", err.message);
        return 1;
    }
    double setup = wall() - start;
    int index[2];
    double directions[4];
    for (int j = 0; j < 2; j++) {
        double p[2];
        mapgen_bar_cap_point(&g, angles[j], p, directions + 2 * j);
        mapgen_boundary_nearest(&mesh, p, "node", index + j, &err);
    }
    double dt = mapgen_time_step(&model, 1e-6, MAPGEN_CFL_SAFETY);
    printf("mapgen: steel bar 0.2 m x 12.5 mm, element 0.5 mm: %d nodes, %d triangles; mesh + "
           "model %.2f s; dt %.4g s (%d steps per us)\n",
           mesh.node_count, mesh.cell_count, setup, dt, (int)(1e-6 / dt + 0.5));
    printf("mapgen: load average %.2f on this 2-core machine at the start\n", load_average());
    double c1 = 0, c2 = 0;
    double one = run_nodes(&model, index, directions, 1, samples, 1, &c1);
    printf("mapgen: one node, %d us response at T = 1 us, 1 thread: %.2f s per node (CPU %.2f s; "
           "target: 1 ms within 60 s)\n",
           samples, one, c1);
    printf("mapgen: 7 angles on 2 threads, estimated from it: %.0f s (target 300 s)\n",
           one * 1000.0 / samples * 4.0);
    double t1 = run_nodes(&model, index, directions, 2, 200, 1, &c1);
    double t2 = run_nodes(&model, index, directions, 2, 200, 2, &c2);
    printf("mapgen: 2 nodes x 200 us: 1 thread %.2f s (CPU %.2f s), 2 threads %.2f s (CPU %.2f "
           "s): speed-up %.2f\n",
           t1, c1, t2, c2, t1 / t2);
    double m1 = run_mpi(1, &c1), m2 = run_mpi(2, &c2);
    printf("mapgen: 2 nodes x 200 us via mpirun (whole program): -np 1 %.2f s (CPU %.2f s), -np 2 "
           "%.2f s (CPU %.2f s): speed-up %.2f\n",
           m1, c1, m2, c2, m1 / m2);
    printf("mapgen: load average %.2f at the end\n", load_average());
    mapgen_model_free(&model);
    mapgen_mesh_free(&mesh);
    mapgen_mesh_shutdown();
    return 0;
}
