/* issim engine diagnostics: measurements of the engine's internals that tests and benchmarks read
 * (how deep contacts overlap, sleeping bodies' equilibrium lists) and the thread-count policy
 * behind EngineOptions.threads = 0, exposed for its test. Nothing in the program's own paths needs
 * them, so they stay out of engine.h. Thread: as engine.h (the engine thread, or the creator
 * before it starts); engine_threads_for is pure. */
#ifndef ISSIM_ENGINE_DIAGNOSTICS_H
#define ISSIM_ENGINE_DIAGNOSTICS_H

#include <stdint.h>

#include "issim/engine.h"

/* What threads = 0 means for a scene of `shaped_bodies` bodies with collision shapes:
 * engine_threads_for with the processors online and the 1-minute load average. */
#define ENGINE_PARALLEL_MIN_BODIES 64
int engine_threads_auto(int shaped_bodies);
/* Two threads (at most `processors`) from ENGINE_PARALLEL_MIN_BODIES bodies on, where the narrow
 * phase is long enough to pay for waking a worker each step, and only while a core is free
 * (load <= processors - 1): on a busy machine the worker is descheduled inside its share and
 * the step waits for it. Else 1. The choice never changes results (the same bits for every
 * count). */
int engine_threads_for(int shaped_bodies, int processors, double load);

/* Contact geometry measured from the poses alone, against what the contact models are given:
 * pose_depth is the deepest overlap of any body pair holding a manifold contact, as the collision
 * module's signed distance of the two shapes at the bodies' current poses (independent of the
 * contacts' anchors and depth offsets); model_depth the deepest depth an active manifold contact's
 * model is given; largest_offset the largest depth offset a contact carries (an overlap the
 * bodies' motion could not pay for, healing: docs/contact-models.md, "Energy at contact
 * changes"), offset_contacts how many carry one; hidden_depth, per pair, how much deeper the
 * poses say the pair overlaps than the deepest depth any of its contacts' models is given (the
 * depth a model does not see: offsets, and anchors that drift from the shapes between collision
 * updates). Vertex ("points") and smooth contacts are not counted. Engine thread. */
typedef struct EnginePenetration {
    double pose_depth, model_depth, largest_offset, hidden_depth; /* m */
    int offset_contacts;
} EnginePenetration;
EnginePenetration engine_penetration(const Engine *engine);

/* A hash of the engine's model (EngineModel and the arrays it owns: bodies, obstacles, pairs,
 * materials, layout, variable names). The model changes only by edits, never by a step, so the
 * digest is the same before and after engine_advance (tests/test_engine_model_const.c). */
uint64_t engine_model_digest(const Engine *engine);

/* The bodies on a sleeping body's equilibrium list (empty while awake), ascending. Writes at most
 * max and returns the full count. */
int engine_body_equilibrium_list(const Engine *engine, int body, int *out, int max);

#endif
