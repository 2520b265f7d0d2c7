/* The contact pair's vocabularies (contact.h): each name table indexed by its enum, its length
 * checked against the enum's count (thing.h, "Vocabularies"). The contact-map ones
 * (map_quadrature, map_convolution) are contactmap.h's. */
#include "contact_internal.h"

const char *const contact_resolver_names[] = {
    [CONTACT_RESOLVER_FORCE_LAW] = "force_law",
    [CONTACT_RESOLVER_COMPLEMENTARITY] = "complementarity",
    [CONTACT_RESOLVER_REDUCED] = "reduced",
};
_Static_assert(sizeof contact_resolver_names / sizeof contact_resolver_names[0] ==
                   CONTACT_RESOLVER_COUNT,
               "a name for every ContactResolverKind");

const char *contact_resolver_name(ContactResolverKind kind) {
    return vocabulary_name(contact_resolver_names, CONTACT_RESOLVER_COUNT, (int)kind);
}

const char *const contact_solver_names[] = {
    [CONTACT_SOLVER_AUTO] = "auto",
    [CONTACT_SOLVER_PGS] = "pgs",
    [CONTACT_SOLVER_REFERENCE] = "reference",
    [CONTACT_SOLVER_LEMKE] = "lemke",
    [CONTACT_SOLVER_FISCHER_NEWTON] = "fischer_newton",
};
_Static_assert(sizeof contact_solver_names / sizeof contact_solver_names[0] == CONTACT_SOLVER_COUNT,
               "a name for every ContactSolverKind");

const char *contact_solver_name(ContactSolverKind kind) {
    return vocabulary_name(contact_solver_names, CONTACT_SOLVER_COUNT, (int)kind);
}

const char *const contact_damping_from_names[] = {
    [CONTACT_DAMPING_FROM_RESTITUTION] = "restitution",
    [CONTACT_DAMPING_FROM_VALUE] = "value",
};
_Static_assert(sizeof contact_damping_from_names / sizeof contact_damping_from_names[0] ==
                   CONTACT_DAMPING_FROM_COUNT,
               "a name for every ContactDampingFrom");

const char *contact_damping_from_name(ContactDampingFrom from) {
    return vocabulary_name(contact_damping_from_names, CONTACT_DAMPING_FROM_COUNT, (int)from);
}

const char *const contact_smooth_friction_names[] = {
    [CONTACT_SMOOTH_FRICTION_STICK_SLIP] = "stick_slip",
    [CONTACT_SMOOTH_FRICTION_SLIDING] = "sliding",
};
_Static_assert(sizeof contact_smooth_friction_names / sizeof contact_smooth_friction_names[0] ==
                   CONTACT_SMOOTH_FRICTION_COUNT,
               "a name for every ContactSmoothFriction");

const char *contact_smooth_friction_name(ContactSmoothFriction friction) {
    return vocabulary_name(contact_smooth_friction_names, CONTACT_SMOOTH_FRICTION_COUNT,
                           (int)friction);
}

const char *const contact_map_node_choice_names[] = {
    [CONTACT_MAP_NODE_NEAREST] = "nearest",
    [CONTACT_MAP_NODE_INTERPOLATE] = "interpolate",
};
_Static_assert(sizeof contact_map_node_choice_names / sizeof contact_map_node_choice_names[0] ==
                   CONTACT_MAP_NODE_COUNT,
               "a name for every ContactMapNodeChoice");

const char *contact_map_node_choice_name(ContactMapNodeChoice node) {
    return vocabulary_name(contact_map_node_choice_names, CONTACT_MAP_NODE_COUNT, (int)node);
}
