/* The thing schema's vocabularies (thing.h, "Vocabularies"): each name table is indexed by its
 * enum through designated initialisers and its length checked against the enum's count, so a
 * value added to an enum without a name (or a name without a value) does not compile, and a
 * name left out in the middle is a NULL the vocabulary test finds. */
#include "thing_internal.h"

/* ===== Thing kinds ===== */

const char *const thing_kind_names[] = {
    [THING_GROUP] = "group",     [THING_UNIVERSE] = "universe",
    [THING_RIGID_BODY] = "body", [THING_FIXED_OBSTACLE] = "obstacle",
    [THING_USER] = "user",       [THING_CONTACT_PAIR] = "contact",
};
_Static_assert(sizeof thing_kind_names / sizeof thing_kind_names[0] == THING_KIND_COUNT,
               "a name for every ThingKind");

const char *thing_kind_name(ThingKind kind) {
    return (unsigned)kind < THING_KIND_COUNT ? thing_kind_names[kind] : "unknown";
}

/* ===== Body shapes ===== */

const char *const body_shape_names[] = {
    [BODY_SHAPE_POINTS] = "points",   [BODY_SHAPE_SPHERE] = "sphere",
    [BODY_SHAPE_CAPSULE] = "capsule", [BODY_SHAPE_BOX] = "box",
    [BODY_SHAPE_HULL] = "hull",       [BODY_SHAPE_POLYGON] = "polygon",
    [BODY_SHAPE_SMOOTH] = "smooth",
};
_Static_assert(sizeof body_shape_names / sizeof body_shape_names[0] == BODY_SHAPE_COUNT,
               "a name for every BodyShape");

const char *body_shape_name(BodyShape shape) {
    return vocabulary_name(body_shape_names, BODY_SHAPE_COUNT, (int)shape);
}

/* ===== Obstacle shapes ===== */

const char *const obstacle_shape_names[] = {
    [OBSTACLE_SHAPE_PLANE] = "plane",
    [OBSTACLE_SHAPE_BOX] = "box",
    [OBSTACLE_SHAPE_MESH] = "mesh",
    [OBSTACLE_SHAPE_SMOOTH] = "smooth",
};
_Static_assert(sizeof obstacle_shape_names / sizeof obstacle_shape_names[0] == OBSTACLE_SHAPE_COUNT,
               "a name for every ObstacleShape");

const char *obstacle_shape_name(ObstacleShape shape) {
    return vocabulary_name(obstacle_shape_names, OBSTACLE_SHAPE_COUNT, (int)shape);
}

/* ===== Integrators ===== */

const char *const integrator_names[] = {
    [INTEGRATOR_BDF] = "bdf",
    [INTEGRATOR_ADAMS] = "adams",
    [INTEGRATOR_RK4] = "rk4",
};
_Static_assert(sizeof integrator_names / sizeof integrator_names[0] == INTEGRATOR_COUNT,
               "a name for every IntegratorKind");

const char *integrator_name(IntegratorKind kind) {
    return vocabulary_name(integrator_names, INTEGRATOR_COUNT, (int)kind);
}

/* ===== Sleep policies ===== */

const char *const sleep_policy_names[] = {
    [SLEEP_POLICY_EQUILIBRIUM] = "equilibrium",
    [SLEEP_POLICY_STILL] = "still",
    [SLEEP_POLICY_NEVER] = "never",
};
_Static_assert(sizeof sleep_policy_names / sizeof sleep_policy_names[0] == SLEEP_POLICY_COUNT,
               "a name for every SleepPolicy");

const char *sleep_policy_name(SleepPolicy policy) {
    return vocabulary_name(sleep_policy_names, SLEEP_POLICY_COUNT, (int)policy);
}

/* ===== Collision thread policies ===== */

const char *const collision_thread_names[] = {
    [COLLISION_THREAD_AUTO] = "auto",
    [COLLISION_THREAD_ON] = "on",
    [COLLISION_THREAD_OFF] = "off",
};
_Static_assert(sizeof collision_thread_names / sizeof collision_thread_names[0] ==
                   COLLISION_THREAD_COUNT,
               "a name for every CollisionThreadPolicy");

const char *collision_thread_name(CollisionThreadPolicy policy) {
    return vocabulary_name(collision_thread_names, COLLISION_THREAD_COUNT, (int)policy);
}
