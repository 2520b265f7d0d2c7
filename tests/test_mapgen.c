/* issim-mapgen (tools/mapgen, docs/contact-map-generator.md): the explicit plane-strain solver
 * against the analytic 1D wave solution (the impulse rho c w whatever the time step), a static
 * solve, mesh refinement and its energy; V10 (VALIDATION.md; seed 000 4.4, Table 4.2) on a
 * coarse bar mesh; the deformation-only map's steady state against the free body's; bad input
 * refused (no map nodes, runs estimated too large before meshing); help under mpirun; one
 * output from threads and from `mpirun -np 2`; a resumed run recomputes nothing it finished,
 * a finished one leaves no partial files. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "mapgen.h"

/* Gmsh 4.8's 3D surface mesher keeps a few hundred bytes it never frees (GFace::mesh): not
 * ours to fix, and not to hide our own leaks behind, so only that library is suppressed. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libgmsh.so\n";
}

typedef struct Body {
    MapgenMesh mesh;
    MapgenModel model;
} Body;

static void body_build(Body *b, const MapgenGeometry *g, const MapgenMaterial *m) {
    IssimError err = {0};
    assert_int_equal(mapgen_mesh_build(g, &b->mesh, &err), ISSIM_OK);
    assert_int_equal(mapgen_model_build(&b->mesh, m, &b->model, &err), ISSIM_OK);
}

static void rectangle(Body *b, double length, double width, double element,
                      const MapgenMaterial *m) {
    double v[] = {0, 0, length, 0, length, width, 0, width, 0, 0};
    MapgenGeometry g = {.dimension = 2,
                        .shape = MAPGEN_SHAPE_POLYGON,
                        .vertices = v,
                        .vertex_count = 5,
                        .element_size = element};
    body_build(b, &g, m);
}

static void body_free(Body *b) {
    mapgen_model_free(&b->model);
    mapgen_mesh_free(&b->mesh);
}

/* Nodes with |x - at| below a tolerance: an end of a rectangle. */
static int nodes_at_x(const MapgenMesh *mesh, double at, int *nodes) {
    int n = 0;
    for (int i = 0; i < mesh->node_count; i++)
        if (fabs(mesh->points[2 * i] - at) < 1e-9)
            nodes[n++] = i;
    return n;
}

/* 1D strip: lateral displacement held everywhere, so the plane-strain equations reduce to the
 * 1D wave equation with speed c1 (000 eq. 3.2). A step D at x = 0 (free end at L) gives the
 * force Z w D delta(t) (Z = rho c1, w the width), then -2 Z w D delta(t - 2L/c1) when the
 * wave returns from the free end. The impulses (momentum) and the return time are checked. */
static void test_strip_matches_1d_wave(void **state) {
    MapgenMaterial steel = mapgen_material_steel_bar();
    const double length = 0.1, width = 0.01;
    Body b;
    rectangle(&b, length, width, 1e-3, &steel);
    int *driven = malloc((size_t)b.mesh.node_count * sizeof *driven);
    unsigned char *held = calloc((size_t)b.model.dof_count, 1);
    for (int i = 0; i < b.mesh.node_count; i++)
        held[2 * i + 1] = 1;
    MapgenDrive drive = {.nodes = driven, .direction = {-1, 0}, .held = held};
    drive.node_count = nodes_at_x(&b.mesh, 0.0, driven);
    double c1 = mapgen_c1(&steel), period = 0.5 * b.model.dt_cfl;
    double travel = length / c1;
    int samples = (int)ceil(3.0 * travel / period);
    double *h = malloc((size_t)samples * sizeof *h);
    IssimError err = {0};
    assert_int_equal(
        mapgen_step_response(&b.model, &drive, period, samples, 0.9, h, NULL, NULL, &err),
        ISSIM_OK);
    double first = 0.0, second = 0.0, t_min = 0.0, h_min = INFINITY;
    for (int k = 0; k < samples; k++) {
        double t = (k + 1) * period;
        if (t < 1.5 * travel)
            first += period * h[k];
        else if (t < 3.0 * travel)
            second += period * h[k];
        if (t > 1.5 * travel && h[k] < h_min) {
            h_min = h[k];
            t_min = t;
        }
    }
    double z_w = steel.density * c1 * width;
    printf("1D strip: impulse %.5g (Z w = %.5g), return %.5g (-2 Z w = %.5g), at %.4g us "
           "(2L/c1 = %.4g us)\n",
           first, z_w, second, -2 * z_w, 1e6 * t_min, 2e6 * travel);
    assert_true(fabs(first / z_w - 1.0) < 0.02);
    assert_true(fabs(second / (-2.0 * z_w) - 1.0) < 0.03);
    assert_true(fabs(t_min / (2.0 * travel) - 1.0) < 0.03);
    free(h);
    free(held);
    free(driven);
    body_free(&b);
}

/* The strip of test_strip_matches_1d_wave driven over its whole end x = 0, laterally held
 * (the 1D wave equation, speed c1) or free (the long waves travel at the plane-strain plate
 * speed): the step response at `safety`, T = `period`, until 3 L / c1. */
static int strip_response(bool held_lateral, double safety, double period, double **h) {
    MapgenMaterial steel = mapgen_material_steel_bar();
    Body b;
    rectangle(&b, 0.1, 0.01, 1e-3, &steel);
    int *driven = malloc((size_t)b.mesh.node_count * sizeof *driven);
    unsigned char *held = calloc((size_t)b.model.dof_count, 1);
    for (int i = 0; i < b.mesh.node_count; i++)
        held[2 * i + 1] = held_lateral;
    MapgenDrive drive = {.nodes = driven, .direction = {-1, 0}, .held = held};
    drive.node_count = nodes_at_x(&b.mesh, 0.0, driven);
    int samples = (int)ceil(3.0 * 0.1 / mapgen_c1(&steel) / period);
    *h = malloc((size_t)samples * sizeof **h);
    IssimError err = {0};
    assert_int_equal(
        mapgen_step_response(&b.model, &drive, period, samples, safety, *h, NULL, NULL, &err),
        ISSIM_OK);
    free(held);
    free(driven);
    body_free(&b);
    return samples;
}

/* The impulse the strip takes before the reflection returns, per unit displacement, over
 * rho c w (c1 held, the plate speed free): the running impulse sum h T averaged over
 * 5 us .. 0.9 x 2L/c1 (its mesh-scale ringing, about 2 % from sample to sample, and the free
 * strip's width resonance, aliased by T, average out). */
static double strip_impulse(bool held_lateral, double safety, double period) {
    MapgenMaterial steel = mapgen_material_steel_bar();
    double c1 = mapgen_c1(&steel), nu = steel.poisson;
    double c = held_lateral ? c1 : sqrt(steel.youngs / (steel.density * (1 - nu * nu)));
    double *h, impulse = 0.0, mean = 0.0;
    int n = strip_response(held_lateral, safety, period, &h), count = 0;
    for (int k = 0; k < n; k++) {
        impulse += h[k] * period;
        double t = (k + 1) * period;
        if (t >= 5e-6 && t <= 0.9 * 2.0 * 0.1 / c1) {
            mean += impulse;
            count++;
        }
    }
    free(h);
    return mean / count / (steel.density * c * 0.01);
}

/* V10's absolute check: a strip driven over its whole end takes the impulse rho c w before
 * the reflection returns, within 1 %. The jump at t = 0 gives the largest impulse of all in
 * its first step (about the Courant number times rho c w): a map that left it out took a
 * third of the impulse at the default safety. */
static void test_strip_takes_the_impulse_rho_c_w(void **state) {
    double held = strip_impulse(true, 0.9, 2.5e-7), free_strip = strip_impulse(false, 0.9, 2.5e-7);
    printf("strip impulse before the reflection / rho c w: laterally held (c1) %.4f, free (plate "
           "speed) %.4f\n",
           held, free_strip);
    assert_true(fabs(held - 1.0) < 0.01);
    assert_true(fabs(free_strip - 1.0) < 0.01);
}

/* The map is a property of the body, not of the solver's internal step: the free strip's
 * impulse at T = 1 us (the default) with --safety 0.9, 0.3 and 0.1. */
static void test_strip_impulse_independent_of_safety(void **state) {
    const double safety[] = {0.9, 0.3, 0.1};
    double impulse[3], low = INFINITY, high = -INFINITY;
    for (int s = 0; s < 3; s++) {
        impulse[s] = strip_impulse(false, safety[s], 1e-6);
        low = fmin(low, impulse[s]);
        high = fmax(high, impulse[s]);
    }
    printf("strip impulse / rho c w at T = 1 us: %.4f, %.4f, %.4f at safety 0.9, 0.3, 0.1\n",
           impulse[0], impulse[1], impulse[2]);
    assert_true(high / low - 1.0 < 0.01);
    for (int s = 0; s < 3; s++)
        assert_true(fabs(impulse[s] - 1.0) < 0.01);
}

/* A block 0.04 x 0.02 m clamped at x = 0 (both dofs held) and driven over its whole end
 * x = 0.04 m. */
typedef struct ClampedBlock {
    Body body;
    int *driven;
    unsigned char *held;
    MapgenDrive drive;
} ClampedBlock;

static void clamped_block(ClampedBlock *c, double element) {
    MapgenMaterial steel = mapgen_material_steel_bar();
    rectangle(&c->body, 0.04, 0.02, element, &steel);
    int n = c->body.mesh.node_count;
    c->driven = malloc((size_t)n * sizeof *c->driven);
    c->held = calloc((size_t)c->body.model.dof_count, 1);
    int clamped = nodes_at_x(&c->body.mesh, 0.0, c->driven);
    for (int k = 0; k < clamped; k++)
        c->held[2 * c->driven[k]] = c->held[2 * c->driven[k] + 1] = 1;
    c->drive = (MapgenDrive){.nodes = c->driven, .direction = {1, 0}, .held = c->held};
    c->drive.node_count = nodes_at_x(&c->body.mesh, 0.04, c->driven);
}

static void clamped_block_free(ClampedBlock *c) {
    free(c->driven);
    free(c->held);
    body_free(&c->body);
}

/* Without damping the clamped block's step response oscillates about the static answer
 * forever, so its long-time mean must equal the static solve (conjugate gradients) on the
 * same mesh. */
static void test_late_time_mean_equals_static(void **state) {
    ClampedBlock c;
    clamped_block(&c, 4e-3);
    IssimError err = {0};
    double reaction = 0.0;
    assert_int_equal(mapgen_static_response(&c.body.model, &c.drive, &reaction, &err), ISSIM_OK);
    const double period = 2e-7;
    const int samples = 20000; /* 4 ms, about 240 periods of the lowest mode */
    double *h = malloc(samples * sizeof *h);
    assert_int_equal(
        mapgen_step_response(&c.body.model, &c.drive, period, samples, 0.9, h, NULL, NULL, &err),
        ISSIM_OK);
    double mean = 0.0;
    for (int k = samples / 2; k < samples; k++)
        mean += h[k] / (samples - samples / 2);
    printf("steady state: mean of the step response %.6g Pa, static solve %.6g Pa (%.2f %%)\n",
           mean, reaction, 100.0 * (mean / reaction - 1.0));
    assert_true(reaction > 0.0);
    assert_true(fabs(mean / reaction - 1.0) < 0.02);
    free(h);
    clamped_block_free(&c);
}

/* The clamped block's static stiffness on meshes of 4, 2 and 1 mm: the differences shrink
 * at a rate (printed) set by the clamped corners' singularity. */
static void test_refinement_converges(void **state) {
    const double sizes[] = {4e-3, 2e-3, 1e-3};
    double k[3];
    for (int r = 0; r < 3; r++) {
        ClampedBlock c;
        clamped_block(&c, sizes[r]);
        IssimError err = {0};
        assert_int_equal(mapgen_static_response(&c.body.model, &c.drive, k + r, &err), ISSIM_OK);
        clamped_block_free(&c);
    }
    double rate = log2(fabs(k[0] - k[1]) / fabs(k[1] - k[2]));
    printf("refinement: stiffness %.6g, %.6g, %.6g Pa at 4, 2, 1 mm: rate %.2f\n", k[0], k[1], k[2],
           rate);
    /* Displacement FEM is stiffer than the solution and converges from above. */
    assert_true(k[0] > k[1] && k[1] > k[2]);
    assert_true(rate > 0.7);
}

/* Central differences conserve a modified energy exactly; the plain energy at whole steps
 * oscillates about it by O(dt^2): halving dt divides the swing by about 4. */
static double energy_swing(const Body *b, double dt, int steps) {
    double *v = malloc((size_t)b->model.dof_count * sizeof *v);
    for (int k = 0; k < b->model.dof_count; k++) /* a breathing mode: strains, not rigid */
        v[k] = b->mesh.points[k] / 0.01 / (1 + k % b->mesh.dimension);
    double *e = malloc((size_t)(steps + 1) * sizeof *e), swing = 0.0;
    mapgen_free_run(&b->model, v, dt, steps, e);
    for (int n = 0; n <= steps; n++)
        swing = fmax(swing, fabs(e[n] / e[0] - 1.0));
    free(v);
    free(e);
    return swing;
}

/* A free disc (2D) or ball (3D) of radius 1 cm, 20 us at dt = 0.2 dt_cfl and dt / 2. */
static void free_energy_order(int d, double element) {
    MapgenMaterial steel = mapgen_material_steel_bar();
    MapgenGeometry g = {
        .dimension = d, .shape = MAPGEN_SHAPE_CIRCLE, .radius = 0.01, .element_size = element};
    Body b;
    body_build(&b, &g, &steel);
    double dt = 0.2 * b.model.dt_cfl;
    int steps = (int)(2e-5 / dt);
    double coarse = energy_swing(&b, dt, steps), fine = energy_swing(&b, 0.5 * dt, 2 * steps);
    printf("energy (%dD): swing %.3g at dt, %.3g at dt/2: order %.2f\n", d, coarse, fine,
           log2(coarse / fine));
    assert_true(coarse < 0.02);
    assert_true(fabs(log2(coarse / fine) - 2.0) < 0.3);
    body_free(&b);
}

static void test_free_energy_conserved_to_second_order(void **state) {
    free_energy_order(2, 2e-3);
    free_energy_order(3, 3e-3);
}

/* Local maxima of h above a fraction of the initial peak in (from, to). */
static int count_peaks(const double *h, int samples, double period, double from, double to,
                       double level) {
    int peaks = 0;
    for (int k = 1; k + 1 < samples; k++) {
        double t = (k + 1) * period;
        if (t > from && t < to && h[k] > level && h[k] >= h[k - 1] && h[k] > h[k + 1])
            peaks++;
    }
    return peaks;
}

/* The step responses of the given boundary nodes (mapgen_run, no resume files). */
static void run_nodes(const MapgenModel *model, int count, const int *index,
                      const double *directions, double period, int samples, int threads,
                      double *h) {
    MapgenJob job = {.model = model,
                     .node_count = count,
                     .boundary_index = index,
                     .directions = directions,
                     .period = period,
                     .samples = samples,
                     .safety = 0.9,
                     .threads = threads,
                     .quiet = true,
                     .rank_count = 1};
    IssimError err = {0};
    assert_int_equal(mapgen_run(&job, h, NULL, &err), ISSIM_OK);
}

/* V10 on a coarse mesh (1.25 mm): the steel bar of 000 Table 4.2, nodes at 18..90 degrees. */
static void test_v10_steel_bar(void **state) {
    static const double angles[] = {18, 30, 42, 54, 66, 78, 90};
    enum { NODES = 7 };
    MapgenMaterial steel = mapgen_material_steel_bar();
    MapgenGeometry g = mapgen_geometry_steel_bar(2, 1.25e-3, angles, NODES);
    Body b;
    IssimError err = {0};
    body_build(&b, &g, &steel);
    int index[NODES];
    double directions[2 * NODES];
    for (int j = 0; j < NODES; j++) {
        double p[2];
        mapgen_bar_cap_point(&g, angles[j], p, directions + 2 * j);
        assert_int_equal(mapgen_boundary_nearest(&b.mesh, p, "node", index + j, &err), ISSIM_OK);
        const double *q = b.mesh.points + 2 * b.mesh.boundary[index[j]];
        assert_true(hypot(q[0] - p[0], q[1] - p[1]) < 1e-9); /* a mesh node exactly there */
    }
    const double period = 5e-7;
    const int samples = 120; /* 60 us */
    double *h = malloc(NODES * samples * sizeof *h);
    run_nodes(&b.model, NODES, index, directions, period, samples, 2, h);
    double shear = steel.youngs / (2 * (1 + steel.poisson));
    double two_l_c1 = 2 * 0.2 / mapgen_c1(&steel);
    int peaks[NODES];
    double onsets[NODES];
    for (int j = 0; j < NODES; j++) {
        const double *hj = h + j * samples;
        double peak = 0.0;
        onsets[j] = NAN;
        for (int k = 0; (k + 1) * period < 2e-6; k++)
            peak = fmax(peak, hj[k]);
        /* The return: the first dip below -10 % of the initial peak after 30 us. */
        for (int k = 0; k < samples && isnan(onsets[j]); k++)
            if ((k + 1) * period > 30e-6 && hj[k] < -0.1 * peak)
                onsets[j] = (k + 1) * period;
        peaks[j] = count_peaks(hj, samples, period, 5e-6, 40e-6, 0.15 * peak);
        printf("V10 %2.0f deg: initial peak %.3g Pa (G = %.3g, E = %.3g), peaks before the "
               "return %d, return onset %.1f us\n",
               angles[j], peak, shear, steel.youngs, peaks[j], 1e6 * onsets[j]);
        assert_true(peak > 0.2 * shear && peak < 5 * steel.youngs);
    }
    /* 90 degrees, the tip: the first return wave arrives after about 2L/c1 = 41 us. */
    assert_true(onsets[6] > 0.95 * two_l_c1 && onsets[6] < 1.15 * two_l_c1);
    assert_true(peaks[0] > peaks[6]); /* more reflections at 18 than at 90 degrees */
    assert_true(peaks[0] >= 2);
    free(h);
    body_free(&b);
}

/* The driven node's share of the boundary: the hat function's integral over the outline
 * (2D, a length) or the surface (3D, an area): half the two edges, or a third of the faces. */
static double node_patch(const MapgenMesh *mesh, int b) {
    int d = mesh->dimension;
    if (d == 2) {
        int n = mesh->boundary_count;
        double before = mesh->arclength[b] - mesh->arclength[(b + n - 1) % n];
        double after = mesh->arclength[(b + 1) % n] - mesh->arclength[b];
        before = before < 0 ? before + mesh->perimeter : before;
        after = after < 0 ? after + mesh->perimeter : after;
        return 0.5 * (before + after);
    }
    /* The surface faces through the node: faces of its tetrahedra that no other of them
     * shares (every tetrahedron holding such a face holds the node). */
    int node = mesh->boundary[b], faces[256][3], count = 0;
    for (int t = 0; t < mesh->cell_count && count < 252; t++) {
        const int *v = mesh->cells + 4 * t;
        if (v[0] != node && v[1] != node && v[2] != node && v[3] != node)
            continue;
        for (int f = 0; f < 4; f++) {
            int m = 0, *c = faces[count];
            for (int k = 0; k < 4; k++)
                if (k != f)
                    c[m++] = v[k];
            if (c[0] == node || c[1] == node || c[2] == node)
                count++;
        }
    }
    double area = 0.0;
    for (int i = 0; i < count; i++) {
        int shared = 0;
        for (int j = 0; j < count; j++) {
            int same = 0;
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++)
                    same += faces[i][k] == faces[j][l];
            shared += j != i && same == 3;
        }
        if (shared)
            continue;
        const double *p0 = mesh->points + 3 * faces[i][0], *p1 = mesh->points + 3 * faces[i][1],
                     *p2 = mesh->points + 3 * faces[i][2];
        double e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
        double e2[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
        double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2],
               cz = e1[0] * e2[1] - e1[1] * e2[0];
        area += 0.5 * sqrt(cx * cx + cy * cy + cz * cz) / 3.0;
    }
    return area;
}

/* The tip response of the bar (90 degrees) on a mesh of dimension d. */
static void bar_tip(int d, double element, double period, int samples, double *h, double *patch) {
    static const double tip[] = {90};
    MapgenGeometry g = mapgen_geometry_steel_bar(d, element, tip, 1);
    MapgenMaterial steel = mapgen_material_steel_bar();
    Body b;
    IssimError err = {0};
    body_build(&b, &g, &steel);
    double p[3] = {0.1, 0, 0};
    int index;
    assert_int_equal(mapgen_boundary_nearest(&b.mesh, p, "tip", &index, &err), ISSIM_OK);
    double direction[3] = {1, 0, 0};
    run_nodes(&b.model, 1, &index, direction, period, samples, 1, h);
    *patch = node_patch(&b.mesh, index);
    body_free(&b);
}

static double first_below(const double *h, int samples, double period, double from, double level) {
    for (int k = 0; k < samples; k++)
        if ((k + 1) * period > from && h[k] < level)
            return (k + 1) * period;
    return NAN;
}

/* 3D: the solid bar's tip map against the plane-strain one on the same element size. */
static void test_3d_bar_tip_matches_plane_strain(void **state) {
    const double period = 5e-7, element = 2.5e-3;
    enum { SAMPLES = 120 };
    double h2[SAMPLES], h3[SAMPLES], w2, a3;
    bar_tip(2, element, period, SAMPLES, h2, &w2);
    bar_tip(3, element, period, SAMPLES, h3, &a3);
    double t2 = first_below(h2, SAMPLES, period, 30e-6, -0.1 * h2[0]);
    double t3 = first_below(h3, SAMPLES, period, 30e-6, -0.1 * h3[0]);
    double i2 = 0, i3 = 0;
    for (int k = 0; (k + 1) * period <= 2e-6; k++) {
        i2 += period * h2[k];
        i3 += period * h3[k];
    }
    printf("3D bar tip: h(T) %.4g N/m, impulse to 2 us %.4g N s/m, return onset %.1f us; "
           "2D per unit thickness: h(T) %.4g Pa, impulse %.4g, onset %.1f us; driven patch "
           "3D %.4g m^2, 2D %.4g m: ratio 3D / 2D %.4g m, impulse ratio %.4g m\n",
           h3[0], i3, 1e6 * t3, h2[0], i2, 1e6 * t2, a3, w2, a3 / w2, i3 / i2);
    /* The return comes back at the bar's long-wave speed: the rod speed sqrt(E / rho) in 3D,
     * the plane-strain plate speed sqrt(E / (rho (1 - nu^2))) in 2D. */
    MapgenMaterial m = mapgen_material_steel_bar();
    double rod = sqrt(m.youngs / m.density);
    double plate = rod / sqrt(1 - m.poisson * m.poisson);
    printf("3D bar tip: 2L / c_rod = %.1f us, 2L / c_plate = %.1f us\n", 0.4e6 / rod,
           0.4e6 / plate);
    assert_true(fabs(t3 / (0.4 / rod) - 1.0) < 0.08);
    assert_true(fabs(t2 / (0.4 / plate) - 1.0) < 0.08);
    assert_true(t3 > t2);
    /* A point contact loads a patch; the 2D map stands for a line load across the thickness.
     * The effective thickness h3 / h2 lies between the node's patch (the plane-wave limit)
     * and the bar's diameter. */
    double thickness = h3[0] / h2[0];
    assert_true(thickness > a3 / w2 && thickness < 0.0125);
}

/* The deformation-only map (mapgen_relief.c; 000 3.7.2: a map settles to "the characteristic
 * solution for the geometry") against the free body's, on one node of a body and drive.
 * h0: the first samples; means: of WINDOWS windows of WINDOW samples ending at the last. */
enum { WINDOWS = 10 };
typedef struct TwoMaps {
    int driven; /* nodes */
    double free_h0, deformation_h0, steady, early_free, early_deformation;
    double free_means[WINDOWS], deformation_means[WINDOWS];
} TwoMaps;

static void window_means(const double *h, int samples, int window, double *means) {
    for (int w = 0; w < WINDOWS; w++) {
        means[w] = 0.0;
        for (int k = samples - (WINDOWS - w) * window; k < samples - (WINDOWS - w - 1) * window;
             k++)
            means[w] += h[k] / window;
    }
}

/* The mean of samples k with from <= (k + 1) T <= to. */
static double mean_between(const double *h, double period, double from, double to) {
    double sum = 0.0;
    int n = 0;
    for (int k = 0; (k + 1) * period <= to; k++)
        if ((k + 1) * period >= from) {
            sum += h[k];
            n++;
        }
    return sum / n;
}

/* The node nearest point, with the boundary nodes within segment / 2 of it (0: alone). */
static void two_maps(const Body *b, const double *point, double segment, double period, int samples,
                     int window, TwoMaps *out) {
    IssimError err = {0};
    int index;
    assert_int_equal(mapgen_boundary_nearest(&b->mesh, point, "node", &index, &err), ISSIM_OK);
    int *nodes = malloc((size_t)b->mesh.boundary_count * sizeof *nodes);
    MapgenDrive drive = {.nodes = nodes,
                         .node_count = mapgen_segment_nodes(&b->mesh, index, segment, nodes)};
    memcpy(drive.direction, b->mesh.normals + 2 * index, 2 * sizeof(double));
    out->driven = drive.node_count;
    double *h[2] = {malloc(samples * sizeof(double)), malloc(samples * sizeof(double))};
    for (int m = 0; m < 2; m++) {
        drive.deformation_only = m == 1;
        assert_int_equal(
            mapgen_step_response(&b->model, &drive, period, samples, 0.9, h[m], NULL, NULL, &err),
            ISSIM_OK);
    }
    assert_int_equal(mapgen_static_response(&b->model, &drive, &out->steady, &err), ISSIM_OK);
    out->free_h0 = h[0][0];
    out->deformation_h0 = h[1][0];
    out->early_free = mean_between(h[0], period, 5e-6, 40e-6);
    out->early_deformation = mean_between(h[1], period, 5e-6, 40e-6);
    if (window > 0) {
        window_means(h[0], samples, window, out->free_means);
        window_means(h[1], samples, window, out->deformation_means);
    }
    free(h[0]);
    free(h[1]);
    free(nodes);
}

/* A disc (r = 1 cm, 1 mm elements, its lowest modes above 100 kHz), one boundary node and a
 * 2.5 mm segment around it (the node and its two neighbours: coupled constraints), 2 ms each.
 * Neither response decays (no damping: the waves reverberate in the closed body for ever), so
 * "settles" is measured on the means of 100 us windows over the last millisecond: the
 * deformation map's stay within 1 % of its static inertia-relief stiffness (a separate
 * conjugate-gradient solve; measured 0.2 %); the free body's have no such level: they scatter
 * about zero, below 5 % of it in size (measured 3.6 %), because a held node of a free body is, in
 * the end, a rigid translation at no force. */
static void test_deformation_only_map_settles_free_map_does_not(void **state) {
    MapgenMaterial steel = mapgen_material_steel_bar();
    MapgenGeometry g = {
        .dimension = 2, .shape = MAPGEN_SHAPE_CIRCLE, .radius = 0.01, .element_size = 1e-3};
    Body b;
    body_build(&b, &g, &steel);
    for (int segment = 0; segment < 2; segment++) {
        TwoMaps t;
        two_maps(&b, (double[]){0.01, 0.0}, segment * 2.5e-3, 5e-7, 4000, 200, &t);
        printf("disc, segment %g mm (%d nodes): h(T) %.4g (free) %.4g (deformation) Pa; static "
               "inertia "
               "relief %.4g Pa\n100 us means over 1-2 ms / static: free, deformation\n",
               segment * 2.5, t.driven, t.free_h0, t.deformation_h0, t.steady);
        for (int w = 0; w < WINDOWS; w++)
            printf("  %6.3f  %6.3f\n", t.free_means[w] / t.steady,
                   t.deformation_means[w] / t.steady);
        assert_true(t.steady > 0.0);
        for (int w = 0; w < WINDOWS; w++) {
            assert_true(fabs(t.deformation_means[w] / t.steady - 1.0) < 0.01);
            assert_true(fabs(t.free_means[w] / t.steady) < 0.05);
        }
    }
    body_free(&b);
}

/* The steel bar's 66 degree node (1.25 mm elements, 60 us): on the time scale of an impact the
 * free body's response pulls (its mean over 5-40 us is negative: the body recoils as a whole,
 * what the engine integrates again), the deformation's pushes; the first sample, the wave's,
 * is the same (the rigid-body motion has not moved yet). The bar's own late response is
 * dominated by its bending modes (about 2.3 kHz), which 1 ms does not average out. */
static void test_deformation_only_bar_map_pushes_free_map_pulls(void **state) {
    static const double angle = 66;
    MapgenMaterial steel = mapgen_material_steel_bar();
    MapgenGeometry g = mapgen_geometry_steel_bar(2, 1.25e-3, &angle, 1);
    Body b;
    body_build(&b, &g, &steel);
    double p[2], n[2];
    mapgen_bar_cap_point(&g, angle, p, n);
    TwoMaps t;
    two_maps(&b, p, 0.0, 5e-7, 120, 0, &t);
    printf("bar 66 deg: h(T) %.4g (free) %.4g (deformation) Pa; static %.4g Pa; mean over "
           "5-40 us / static: free %.3f, deformation %.3f\n",
           t.free_h0, t.deformation_h0, t.steady, t.early_free / t.steady,
           t.early_deformation / t.steady);
    assert_true(t.early_free < 0.0 && t.early_deformation > 0.0);
    assert_true(fabs(t.deformation_h0 / t.free_h0 - 1.0) < 0.05);
    body_free(&b);
}

/* Refused: a deformation-only drive on a supported body (no rigid-body motion to remove). */
static void test_deformation_only_refuses_supports(void **state) {
    ClampedBlock c;
    clamped_block(&c, 4e-3);
    c.drive.deformation_only = true;
    IssimError err = {0};
    double h[4];
    assert_int_equal(
        mapgen_step_response(&c.body.model, &c.drive, 2e-7, 4, 0.9, h, NULL, NULL, &err),
        ISSIM_ERR_INVALID);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "held dofs"));
    clamped_block_free(&c);
}

/* ------------------------------------------------------------------------------------------
 * The executable: bad input, threads vs MPI ranks, resume
 */
static int run_mapgen(const char *launcher, const char *args, char *out, size_t size) {
    char command[4096];
    snprintf(command, sizeof command,
             "cd /tmp && ASAN_OPTIONS=detect_leaks=0 OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s %s %s 2>&1",
             launcher, ISSIM_MAPGEN_BINARY, args);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char scratch[256];

static const char *scratch_path(const char *name) {
    static char path[4][512];
    static int slot;
    slot = (slot + 1) % 4;
    snprintf(path[slot], sizeof path[slot], "%s/%s", scratch, name);
    return path[slot];
}

static void expect_refused(const char *args, const char *needle) {
    char out[8192], full[2048];
    snprintf(full, sizeof full, "-o %s --quiet %s", scratch_path("bad.map"), args);
    int rc = run_mapgen("", full, out, sizeof out);
    printf("refused: %s -> %s", args, out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, needle));
    assert_int_not_equal(access(scratch_path("bad.map"), F_OK), 0);
}

static void test_bad_input_refused(void **state) {
    FILE *f = fopen(scratch_path("open.txt"), "w");
    fprintf(f, "0 0\n0.01 0\n0.01 0.01\n0 0.01\n");
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "--polygon %s --every 4", scratch_path("open.txt"));
    expect_refused(args, "does not close");
    expect_refused("--element-size 0.02", "larger than the body");
    expect_refused("--poisson 0.5", "(-1, 0.5)");
    expect_refused("--density 0", "rho");
    expect_refused("--youngs -1", "Young's modulus");
    expect_refused("--element-size 2e-3 --at 0,0", "not on the boundary");
    expect_refused("--element-size 2e-3 --period 1e-5", "--period");
    expect_refused("--angles 120", "(0, 90]");
}

/* Issue 34: a circle with --every 0 dereferenced the missing --at list (SIGSEGV); a shape
 * without angles and without --every or --at has no map nodes at all. */
static void test_no_map_nodes_refused(void **state) {
    expect_refused("--shape circle --radius 0.01 --every 0 --samples 5",
                   "--every 0: must be at least 1");
    expect_refused("--every 0 --samples 5", "--every 0: must be at least 1");
    expect_refused("--shape circle --radius 0.01 --samples 5", "no map nodes");
}

/* Issue 34: an element size far below the body's meshed for minutes into gigabytes before any
 * check. Now the estimate comes first: 1e-9 m on the bar is about 2.8e15 nodes, refused even
 * with --force (the solver's int indices); 1e-5 m (2.8e7 nodes, tens of GB, weeks) is refused
 * unless --force; a polygon in kilometres, or far from its origin, is no contact body. */
static void test_oversized_runs_refused_before_meshing(void **state) {
    expect_refused("--element-size 1e-9", "mesh nodes");
    expect_refused("--element-size 1e-9 --force", "even with --force");
    expect_refused("--element-size 1e-5", "or --force");
    FILE *f = fopen(scratch_path("huge.txt"), "w");
    fprintf(f, "0 0\n1e7 0\n1e7 1e7\n0 1e7\n0 0\n");
    fclose(f);
    f = fopen(scratch_path("far.txt"), "w");
    fprintf(f, "1e4 0\n10000.01 0\n10000.01 0.01\n1e4 0.01\n1e4 0\n");
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "--polygon %s --every 4", scratch_path("huge.txt"));
    expect_refused(args, "body extent 1e+07 m");
    snprintf(args, sizeof args, "--polygon %s --every 4", scratch_path("far.txt"));
    expect_refused(args, "lies 10000 m from the origin");
}

/* The estimate printed before meshing against the mesh Gmsh then makes: the bar at 2 mm and
 * the disc at 1 mm (2D), the bar at 2.5 mm (3D). */
static void test_estimate_matches_the_mesh(void **state) {
    static const char *const jobs[] = {
        "--element-size 2e-3 --samples 4 --angles 90",
        "--shape circle --radius 0.01 --element-size 1e-3 --every 50 --samples 4",
        "--dimension 3 --element-size 2.5e-3 --samples 4 --angles 90",
    };
    for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
        char out[16384], args[2048];
        snprintf(args, sizeof args, "%s --period 2e-7 -o %s", jobs[j], scratch_path("est.map"));
        assert_int_equal(run_mapgen("", args, out, sizeof out), 0);
        const char *estimate = strstr(out, "estimate: about "), *mesh = strstr(out, "mapgen: ");
        while (mesh && (mesh[8] < '0' || mesh[8] > '9'))
            mesh = strstr(mesh + 1, "mapgen: ");
        assert_non_null(estimate);
        assert_non_null(mesh);
        assert_true(estimate < mesh); /* printed before meshing */
        double estimated = atof(estimate + strlen("estimate: about ")), meshed = atof(mesh + 8);
        printf("estimate %.0f mesh nodes, meshed %.0f (%+.1f %%): %s\n", estimated, meshed,
               100.0 * (estimated / meshed - 1.0), jobs[j]);
        assert_true(fabs(estimated / meshed - 1.0) < 0.25);
    }
}

/* Issue 34: `mpirun -np 2 issim-mapgen --help` ended in an MPI error (exit() after MPI_Init
 * without MPI_Finalize). Help needs no MPI: exit 0, printed once. */
static void test_help_under_mpirun(void **state) {
    char out[16384], launcher[512];
    snprintf(launcher, sizeof launcher, "%s -np 2 --oversubscribe -x ASAN_OPTIONS", ISSIM_MPIRUN);
    int rc = run_mapgen(launcher, "--help", out, sizeof out);
    printf("mpirun -np 2 issim-mapgen --help: exit %d\n", rc);
    assert_int_equal(rc, 0);
    const char *first = strstr(out, "usage: issim-mapgen");
    assert_non_null(first);
    assert_null(strstr(first + 1, "usage: issim-mapgen"));
    assert_null(strstr(out, "MPI"));
}

static ContactMap *read_map(const char *path) {
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_read(path, &map, &err), ISSIM_OK);
    return map;
}

static void assert_same_maps(const char *a, const char *b) {
    ContactMap *x = read_map(a), *y = read_map(b);
    assert_int_equal(contact_map_node_count(x), contact_map_node_count(y));
    int n = contact_map_samples(x);
    assert_int_equal(n, contact_map_samples(y));
    for (int j = 0; j < contact_map_node_count(x); j++)
        assert_memory_equal(contact_map_step(x, j), contact_map_step(y, j), n * sizeof(double));
    contact_map_release(x);
    contact_map_release(y);
}

#define SMALL_JOB "--element-size 2e-3 --samples 40 --period 5e-7 --quiet"

static void test_threads_mpi_and_resume_give_one_output(void **state) {
    char out[16384], args[2048];
    /* A finished run leaves no partial files (issue 34), unless asked to keep them. */
    snprintf(args, sizeof args, SMALL_JOB " --threads 2 -o %s", scratch_path("plain.map"));
    assert_int_equal(run_mapgen("", args, out, sizeof out), 0);
    assert_int_equal(access(scratch_path("plain.map"), F_OK), 0);
    assert_int_not_equal(access(scratch_path("plain.map.partial"), F_OK), 0);
    snprintf(args, sizeof args, SMALL_JOB " --threads 2 --keep-partial -o %s",
             scratch_path("threads.map"));
    assert_int_equal(run_mapgen("", args, out, sizeof out), 0);
    assert_same_maps(scratch_path("plain.map"), scratch_path("threads.map"));
    for (int j = 0; j < 7; j++) {
        char name[64];
        snprintf(name, sizeof name, "threads.map.partial/node_%05d.txt", j);
        assert_int_equal(access(scratch_path(name), F_OK), 0);
    }
    snprintf(args, sizeof args, SMALL_JOB " -o %s", scratch_path("mpi.map"));
    char launcher[512];
    snprintf(launcher, sizeof launcher, "%s -np 2 --oversubscribe -x ASAN_OPTIONS", ISSIM_MPIRUN);
    int rc = run_mapgen(launcher, args, out, sizeof out);
    printf("mpirun -np 2: %s", out);
    assert_int_equal(rc, 0);
    assert_int_not_equal(access(scratch_path("mpi.map.partial"), F_OK), 0);
    assert_same_maps(scratch_path("threads.map"), scratch_path("mpi.map"));
    ContactMap *map = read_map(scratch_path("mpi.map"));
    const ContactMapProvenance *pv = contact_map_provenance(map);
    assert_non_null(strstr(pv->generator, "issim-mapgen"));
    assert_true(fabs(pv->thickness - 0.0125) < 1e-15 && pv->mesh_size == 2e-3);
    assert_int_equal(contact_map_node_count(map), 7);
    assert_true(fabs(contact_map_node(map, 6)->angle - 90.0) < 1e-12);
    contact_map_release(map);

    /* As if killed after four nodes: two partial files never written, one cut short (a file
     * that is not whole is solved again), the map not written. */
    for (int j = 4; j < 7; j++) {
        char name[64];
        snprintf(name, sizeof name, "threads.map.partial/node_%05d.txt", j);
        if (j < 6) {
            assert_int_equal(remove(scratch_path(name)), 0);
            continue;
        }
        struct stat st;
        assert_int_equal(stat(scratch_path(name), &st), 0);
        assert_int_equal(truncate(scratch_path(name), st.st_size / 2), 0);
    }
    rename(scratch_path("threads.map"), scratch_path("first.map"));
    snprintf(args, sizeof args, "--element-size 2e-3 --samples 40 --period 5e-7 -o %s",
             scratch_path("threads.map"));
    assert_int_equal(run_mapgen("", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "resumed 4 finished node(s)"));
    assert_non_null(strstr(out, "3/3 nodes done"));
    assert_same_maps(scratch_path("threads.map"), scratch_path("first.map"));
    assert_int_not_equal(access(scratch_path("threads.map.partial"), F_OK), 0);
}

/* --mirror: the bar's responses at the images of each node in x = 0 and y = 0 (the tip's
 * image in y = 0 is itself): 7 x 4 - 2 = 26 nodes, each image with its node's response. */
static void test_mirror_writes_the_symmetric_nodes(void **state) {
    char out[8192], args[2048];
    snprintf(args, sizeof args, SMALL_JOB " --mirror --angles 30,90 -o %s",
             scratch_path("mirror.map"));
    assert_int_equal(run_mapgen("", args, out, sizeof out), 0);
    ContactMap *map = read_map(scratch_path("mirror.map"));
    assert_int_equal(contact_map_node_count(map), 2 * 4 - 2);
    int n = contact_map_samples(map);
    const ContactMapNode *first = contact_map_node(map, 0);
    for (int j = 2; j < 6; j++) {
        const ContactMapNode *image = contact_map_node(map, j);
        if (image->angle != 30.0)
            continue;
        assert_true(fabs(fabs(image->position.x) - first->position.x) < 1e-15);
        assert_true(fabs(fabs(image->position.y) - first->position.y) < 1e-15);
        assert_true(image->position.x * image->normal.x > 0.0);
        assert_memory_equal(contact_map_step(map, j), contact_map_step(map, 0), n * sizeof(double));
    }
    contact_map_release(map);
}

static int setup(void **state) {
    snprintf(scratch, sizeof scratch, "/tmp/issim-test-mapgen-%ld", (long)getpid());
    mkdir(scratch, 0777);
    return 0;
}

static int teardown(void **state) {
    char command[512];
    snprintf(command, sizeof command, "rm -rf %s", scratch);
    int rc = system(command);
    (void)rc;
    mapgen_mesh_shutdown();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_matches_1d_wave),
        cmocka_unit_test(test_strip_takes_the_impulse_rho_c_w),
        cmocka_unit_test(test_strip_impulse_independent_of_safety),
        cmocka_unit_test(test_late_time_mean_equals_static),
        cmocka_unit_test(test_refinement_converges),
        cmocka_unit_test(test_free_energy_conserved_to_second_order),
        cmocka_unit_test(test_v10_steel_bar),
        cmocka_unit_test(test_3d_bar_tip_matches_plane_strain),
        cmocka_unit_test(test_deformation_only_map_settles_free_map_does_not),
        cmocka_unit_test(test_deformation_only_bar_map_pushes_free_map_pulls),
        cmocka_unit_test(test_deformation_only_refuses_supports),
        cmocka_unit_test(test_bad_input_refused),
        cmocka_unit_test(test_no_map_nodes_refused),
        cmocka_unit_test(test_oversized_runs_refused_before_meshing),
        cmocka_unit_test(test_estimate_matches_the_mesh),
        cmocka_unit_test(test_help_under_mpirun),
        cmocka_unit_test(test_threads_mpi_and_resume_give_one_output),
        cmocka_unit_test(test_mirror_writes_the_symmetric_nodes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
