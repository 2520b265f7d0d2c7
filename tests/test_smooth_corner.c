/* Patch corners (seed 002 4.5.4): a contact whose path runs exactly through a vertex where six
 * patches meet. The rattleback cap rests on its lowest point (its net is symmetric, so that point
 * lies under the centre of mass) on the flat bottom of the Loop dish (assets/loop_plate.obj, the
 * dish turned over), frictionless, translating: the contact point moves on a straight line at
 * constant speed whatever patches it crosses, and the line is aimed at a vertex. After the
 * corner the contact must be on the straight line still, the energy unchanged and the body's
 * motion continuous: a wrong edge or neighbour at the corner would put it elsewhere. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/smooth_contact.h"
#include "issim/surface.h"

static const double GRAVITY = 9.81;

typedef struct Scene {
    SmoothSurface *cap, *dish;
    LoopMesh *mesh;
    SmoothContactSystem sys;
} Scene;

static void scene_make(Scene *sc) {
    IssimError err = {0};
    BezierPatch cap;
    bezier_patch_rattleback(&cap);
    sc->cap = smooth_surface_from_bezier(&cap, &err);
    sc->mesh = loop_mesh_load(test_source_path("assets/loop_plate.obj"), &err);
    if (!sc->mesh)
        fail_msg("%s", err.message);
    sc->dish = smooth_surface_from_loop(sc->mesh, 1, SURFACE_EXTRAORDINARY_EXACT, &err);
    if (!sc->cap || !sc->dish)
        fail_msg("%s", err.message);
    /* turned over about x: the flat bottom (z = 0, outward normal -z) faces up at z = 0 */
    sc->sys = (SmoothContactSystem){.surface_a = sc->cap,
                                    .surface_b = sc->dish,
                                    .mass = 5.0,
                                    .inertia = vec3(1, 10, 10),
                                    .orient_b = (Quat){0.0, 1.0, 0.0, 0.0}};
}

static void scene_free(Scene *sc) {
    smooth_surface_destroy(sc->cap);
    smooth_surface_destroy(sc->dish);
    loop_mesh_destroy(sc->mesh);
}

/* A triangular patch of the dish's bottom whose corner 0 lies within 1 of the centre (the bottom
 * is a hexagonal lattice of radius 4: its interior vertices are regular). */
static int bottom_patch_near_centre(const Scene *sc) {
    IssimError err = {0};
    for (int p = 0; p < smooth_surface_patch_count(sc->dish); p++) {
        const SurfaceDomain *d = smooth_surface_domain(sc->dish, p);
        if (d->count != 3)
            continue;
        SurfacePoint at;
        if (smooth_surface_evaluate(sc->dish, p, d->corner[0][0], d->corner[0][1], &at, &err) !=
            ISSIM_OK)
            continue;
        Vec3 x = at.x[SURFACE_VALUE];
        if (fabs(x.z) < 1e-9 && hypot(x.x, x.y) < 1.0 && at.normal[0].z < -0.999999)
            return p;
    }
    return -1;
}

static double energy(const SmoothContactSystem *sys, const SmoothContactState *st,
                     SmoothBodyMotion *m) {
    IssimError err = {0};
    if (smooth_contact_motion(sys, st, m, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return smooth_contact_kinetic_energy(sys, m) + sys->mass * GRAVITY * m->pos.z;
}

static void test_contact_through_a_six_patch_corner(void **state) {
    (void)state;
    Scene sc;
    scene_make(&sc);
    int patch = bottom_patch_near_centre(&sc);
    assert_true(patch >= 0);
    const SurfaceDomain *d = smooth_surface_domain(sc.dish, patch);
    /* start 0.1 of the way from corner 0 towards the domain's centroid, aimed at corner 0 */
    double cs = (d->corner[0][0] + d->corner[1][0] + d->corner[2][0]) / 3.0;
    double ct = (d->corner[0][1] + d->corner[1][1] + d->corner[2][1]) / 3.0;
    double ds = cs - d->corner[0][0], dt_ = ct - d->corner[0][1];
    SmoothContactState st = {.patch_a = 0, .patch_b = patch, .mode = SMOOTH_SLIDING};
    st.q[0] = st.q[1] = 0.5;
    st.q[2] = d->corner[0][0] + 0.1 * ds;
    st.q[3] = d->corner[0][1] + 0.1 * dt_;
    st.rate[2] = -0.5 * ds; /* the corner after 0.2 s */
    st.rate[3] = -0.5 * dt_;
    SmoothBodyMotion m0;
    double e0 = energy(&sc.sys, &st, &m0);
    IssimError err = {0};
    Vec3 gravity = vec3(0, 0, -sc.sys.mass * GRAVITY);
    const double h = 1e-3;
    int crossings = 0, patches_seen = 1, last_patch = patch;
    double worst_line = 0.0, worst_energy = 0.0, worst_speed = 0.0;
    for (int i = 1; i <= 400; i++) {
        SmoothContactState before = st;
        if (smooth_contact_rk4(&sc.sys, &st, h, gravity, vec3(0, 0, 0), &err) != ISSIM_OK)
            fail_msg("step %d: %s", i, err.message);
        int crossed = 0;
        if (smooth_contact_traverse(&sc.sys, &before, &st, h, gravity, vec3(0, 0, 0), &crossed,
                                    &err) != ISSIM_OK)
            fail_msg("step %d: %s", i, err.message);
        crossings += crossed;
        if (st.patch_b != last_patch) {
            patches_seen++;
            last_patch = st.patch_b;
        }
        SmoothBodyMotion m;
        worst_energy = fmax(worst_energy, fabs(energy(&sc.sys, &st, &m) - e0));
        /* uniform straight translation: the centre of mass where m0's velocity takes it */
        Vec3 expected = vec3_add(m0.pos, vec3_scale(m0.vel, i * h));
        worst_line = fmax(worst_line, vec3_norm(vec3_sub(m.pos, expected)));
        worst_speed = fmax(worst_speed, vec3_norm(vec3_sub(m.vel, m0.vel)) + vec3_norm(m.angvel));
    }
    print_message("through the corner of patch %d: %d crossings, ended on patch %d (%d patch "
                  "changes); off the straight line %.2e m, speed change %.2e, energy change "
                  "%.2e J\n",
                  patch, crossings, st.patch_b, patches_seen - 1, worst_line, worst_speed,
                  worst_energy);
    assert_true(crossings >= 3); /* through the vertex: into the opposite one of its six faces */
    assert_true(st.patch_b != patch);
    assert_true(worst_line < 1e-9);
    assert_true(worst_speed < 1e-8); /* m/s + rad/s: the rates re-solved at each crossing (4.54) */
    assert_true(worst_energy < 1e-9);
    scene_free(&sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contact_through_a_six_patch_corner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
