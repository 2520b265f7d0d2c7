/* issim thing database: hierarchical named things with typed properties (000 App. B.4.5-B.4.6).
 *
 * A thing is a simulation entity: the universe (laws of physics, integrator settings), a rigid
 * body, a fixed obstacle, a user/handle thing, or a contact pair (the contact model between two
 * materials). Every thing carries typed properties, each with a unit, range, default,
 * description and mutability: editable while running (PROP_LIVE) or fixed during a run
 * (PROP_FIXED_DURING_RUN, the "immutable during simulation execution" property type of
 * 000 B.3.3).
 *
 * Paths: a thing's path is its name prefixed by its ancestors' names ("arm.link1"); a property
 * path is a thing path followed by the property name, which may itself contain dots
 * ("bar.mass", "bar_floor.model", "universe.gravity"). Resolution takes the longest thing path
 * that prefixes the text.
 *
 * Threading: a ThingDb is not thread-safe; it has one owner thread at a time. While a simulation
 * runs, the engine thread owns the live database; other threads change it only through the
 * registry's edit queue and read copies (thingdb_clone) published by the owner.
 *
 * Ids: things are referred to by ThingId {index, generation} passed by value; the null id has
 * index 0. A stale id (thing removed) is detected by thingdb_valid, never dereferenced.
 */
#ifndef ISSIM_THING_H
#define ISSIM_THING_H

#include "issim/core.h"
#include "issim/math.h"

typedef struct ThingId {
    uint32_t index; /* 1-based slot; 0 = null */
    uint32_t generation;
} ThingId;

static inline ThingId thing_id_null(void) {
    return (ThingId){0, 0};
}
static inline bool thing_id_is_null(ThingId id) {
    return id.index == 0;
}
static inline bool thing_id_equal(ThingId a, ThingId b) {
    return a.index == b.index && a.generation == b.generation;
}

typedef enum ThingKind {
    THING_GROUP,          /* container for child things; no properties of its own */
    THING_UNIVERSE,       /* exactly one, named "universe": gravity, planar mode, integrator */
    THING_RIGID_BODY,     /* 3D rigid body (or planar when the universe is planar) */
    THING_FIXED_OBSTACLE, /* static geometry: never moves, never propagates wake-ups */
    THING_USER,           /* user / haptic handle thing: external state */
    THING_CONTACT_PAIR,   /* contact model between two materials */
    THING_KIND_COUNT
} ThingKind;

/* "group", "universe", "body", "obstacle", "user", "contact" (parse with vocabulary_parse). */
extern const char *const thing_kind_names[];
/* "unknown" out of range. */
const char *thing_kind_name(ThingKind kind);

/* ===== Vocabularies =====
 * Every enum-valued property is defined once (STYLE.md 17): an enum, its name table indexed by
 * the enum (what scenes and the command line spell) and a typed name function, in the header
 * of the module that owns the meaning; core.h's vocabulary_parse / vocabulary_name /
 * vocabulary_list serve every table (one lookup, not one per vocabulary). The schema's
 * PropDef.enum_names point at these tables, so a property's index is the enum value and nobody
 * mirrors the order. The scene's own vocabularies (shapes, the universe's integrator and sleep
 * policy) live here because the thing schema owns them; contact pairs' are in contact.h and
 * contactmap.h, a smooth surface's in surface.h. Names out of range give "?". Thread: any (the
 * tables are constant). */

/* A rigid body's "shape". */
typedef enum BodyShape {
    BODY_SHAPE_POINTS, /* contact vertices only (the vertex-plane contacts of 004) */
    BODY_SHAPE_SPHERE,
    BODY_SHAPE_CAPSULE,
    BODY_SHAPE_BOX,
    BODY_SHAPE_HULL,
    BODY_SHAPE_POLYGON, /* planar scenes */
    BODY_SHAPE_SMOOTH,  /* a smooth surface (surface_* properties) */
    BODY_SHAPE_COUNT
} BodyShape;
extern const char *const body_shape_names[];
const char *body_shape_name(BodyShape shape);

/* A fixed obstacle's "shape". */
typedef enum ObstacleShape {
    OBSTACLE_SHAPE_PLANE, /* normal and offset; the only shape without a pose */
    OBSTACLE_SHAPE_BOX,
    OBSTACLE_SHAPE_MESH,
    OBSTACLE_SHAPE_SMOOTH,
    OBSTACLE_SHAPE_COUNT
} ObstacleShape;
extern const char *const obstacle_shape_names[];
const char *obstacle_shape_name(ObstacleShape shape);

/* The universe's "integrator" (and `issim run --integrator`). */
typedef enum IntegratorKind {
    INTEGRATOR_BDF,   /* CVODE BDF, Newton with SUNDIALS' dense direct solver: stiff contact */
    INTEGRATOR_ADAMS, /* CVODE Adams-Moulton, fixed-point iteration: non-stiff */
    INTEGRATOR_RK4,   /* classical fixed-step Runge-Kutta with event location */
    INTEGRATOR_COUNT
} IntegratorKind;
extern const char *const integrator_names[];
const char *integrator_name(IntegratorKind kind);

/* The universe's "sleep" policy (004 4.8.5; docs/architecture.md, "Equilibrium and sleeping
 * bodies"). */
typedef enum SleepPolicy {
    SLEEP_POLICY_EQUILIBRIUM, /* a body sleeps when its contacts' models report equilibrium */
    SLEEP_POLICY_STILL,       /* also on force laws without an equilibrium test, once still */
    SLEEP_POLICY_NEVER,
    SLEEP_POLICY_COUNT
} SleepPolicy;
extern const char *const sleep_policy_names[];
const char *sleep_policy_name(SleepPolicy policy);

/* The universe's "collision_thread": where an interactive run updates its collision world
 * (docs/architecture.md, "Collision manager thread"). */
typedef enum CollisionThreadPolicy {
    COLLISION_THREAD_AUTO, /* its own thread from ENGINE_COLLISION_THREAD_MIN_BODIES shaped
                              bodies on, else the engine's */
    COLLISION_THREAD_ON,   /* always the collision manager's own thread */
    COLLISION_THREAD_OFF,  /* always the engine's thread, as headless runs */
    COLLISION_THREAD_COUNT
} CollisionThreadPolicy;
extern const char *const collision_thread_names[];
const char *collision_thread_name(CollisionThreadPolicy policy);

/* ===== Properties ===== */

typedef enum PropType {
    PROP_REAL,
    PROP_INT,
    PROP_BOOL,
    PROP_ENUM,   /* one of def->enum_names */
    PROP_STRING, /* free text (material names) */
    PROP_VEC3,
    PROP_QUAT,   /* (w, x, y, z); normalised on set */
    PROP_POINTS, /* list of up to PROP_MAX_POINTS Vec3 */
} PropType;

typedef enum PropMutability {
    PROP_LIVE,             /* editable while the simulation runs */
    PROP_FIXED_DURING_RUN, /* editable only while stopped (000 B.3.3) */
} PropMutability;

#define PROP_MAX_POINTS 32
#define PROP_STRING_MAX 256
#define PROP_MAX_ENUM 16

typedef struct PropValue {
    PropType type;
    double real;                  /* PROP_REAL */
    int64_t integer;              /* PROP_INT, and PROP_ENUM's index */
    bool boolean;                 /* PROP_BOOL */
    double vec[4];                /* PROP_VEC3 (x, y, z), PROP_QUAT (w, x, y, z) */
    char string[PROP_STRING_MAX]; /* PROP_STRING */
    int point_count;              /* PROP_POINTS */
    Vec3 points[PROP_MAX_POINTS];
} PropValue;

/* Static description of a property. The strings it points to must outlive the database (string
 * literals in practice); thing_add_prop copies the struct, the schema's own are shared. */
typedef struct PropDef {
    const char *name; /* "mass", "contact.model" */
    PropType type;
    const char *unit;        /* SI: "kg", "m/s^2", "N/m", "" for dimensionless */
    const char *description; /* one line, shown in the property editor and scene docs */
    double min, max;         /* inclusive range for REAL/INT, per component for VEC3/POINTS */
    bool min_exclusive;      /* range is (min, max] (masses, stiffnesses) */
    PropMutability mutability;
    const char *const *enum_names; /* PROP_ENUM: enum_count names */
    int enum_count;
    PropValue default_value;
} PropDef;

/* Checks v against def (type, range, enum index, finite numbers). On failure returns
 * ISSIM_ERR_RANGE / ISSIM_ERR_INVALID with a message such as
 * "mass = -1 kg is out of range: must be > 0". Thread: any. */
IssimStatus prop_validate(const PropDef *def, const PropValue *v, IssimError *err);
/* Parses text per def->type: "2.5", "true", "spring_damper", "0 0 -9.81" or "{0, 0, -9.81}",
 * points as "{{0,0,0.1},{0,0,-0.1}}". Validates too. Thread: any. */
IssimStatus prop_parse(const PropDef *def, const char *text, PropValue *out, IssimError *err);
/* Parses text per def->type like prop_parse but without the range check, for readers that
 * validate when they store (thing_set) and name the property themselves: on failure err holds
 * the bare reason ("cannot read 'x' as a number (kg)"), no property name. Thread: any. */
IssimStatus prop_parse_unvalidated(const PropDef *def, const char *text, PropValue *out,
                                   IssimError *err);
/* Formats a value the way prop_parse reads it (and as a Lua expression: numbers with %.17g,
 * vectors as {x, y, z}, strings and enums quoted when lua_syntax). Thread: any. */
void prop_format(const PropDef *def, const PropValue *v, bool lua_syntax, char *buf, size_t size);
/* What a value of the type looks like, for messages: "a number", "a vector {x, y, z}". Static
 * storage. Thread: any. */
const char *prop_type_phrase(PropType type);
bool prop_value_equal(const PropValue *a, const PropValue *b);

/* Convenience constructors for default values. */
PropValue prop_real(double x);
PropValue prop_int(int64_t i);
PropValue prop_bool(bool b);
PropValue prop_enum(int index);
PropValue prop_string(const char *s);
PropValue prop_vec3(Vec3 v);
PropValue prop_quat(Quat q);
PropValue prop_points(const Vec3 *points, int count);

/* ===== Database ===== */

typedef struct ThingDb ThingDb;

ThingDb *thingdb_create(void);
void thingdb_destroy(ThingDb *db);
/* Deep copy (definitions, values, hierarchy, ids preserved). Returns NULL on out of memory. */
ThingDb *thingdb_clone(const ThingDb *db);

/* Adds a thing with the standard properties of its kind (see thing_kind_props), set to their
 * defaults. Names are [A-Za-z_][A-Za-z0-9_]*, unique among siblings. parent may be null (top
 * level). Returns the null id on error. */
ThingId thingdb_add(ThingDb *db, const char *name, ThingKind kind, ThingId parent, IssimError *err);
/* Adds an extra property to one thing (contact models add their parameters this way). The
 * value starts at def->default_value. Fails if the name exists on that thing. */
IssimStatus thing_add_prop(ThingDb *db, ThingId id, const PropDef *def, IssimError *err);
/* Removes a thing and its children; their ids become stale. */
IssimStatus thingdb_remove(ThingDb *db, ThingId id, IssimError *err);

bool thingdb_valid(const ThingDb *db, ThingId id);
/* Number of live things and the i-th in insertion order (parents before children). */
int thingdb_count(const ThingDb *db);
/* Bytes the database holds (its things and their properties): what a copy of it costs, for
 * estimates before large builds. */
size_t thingdb_memory_bytes(const ThingDb *db);
ThingId thingdb_at(const ThingDb *db, int i);
/* Finds a thing by path ("bar", "arm.link1"). Null id if absent. */
ThingId thingdb_find(const ThingDb *db, const char *path);
/* First thing of a kind (the universe), or null. */
ThingId thingdb_find_kind(const ThingDb *db, ThingKind kind);

/* Borrowed: valid while the thing exists. */
const char *thing_name(const ThingDb *db, ThingId id);
ThingKind thing_kind(const ThingDb *db, ThingId id);
ThingId thing_parent(const ThingDb *db, ThingId id);
/* Deepest nesting a thing path can name: a top-level thing is at depth 1. thing_path walks at
 * most this many ancestors, so deeper things would get truncated, ambiguous paths. */
#define THING_MAX_DEPTH 64

/* Writes the full dotted path. Returns buf. */
char *thing_path(const ThingDb *db, ThingId id, char *buf, size_t size);

/* Properties by index (0 .. count-1, in definition order) and by name. */
int thing_prop_count(const ThingDb *db, ThingId id);
const PropDef *thing_prop_def(const ThingDb *db, ThingId id, int prop);
const PropValue *thing_prop_value(const ThingDb *db, ThingId id, int prop);
/* -1 if absent. */
int thing_prop_find(const ThingDb *db, ThingId id, const char *name);
/* The thing's property names, comma-separated in definition order ("mass, inertia, ..."), into
 * buf (truncated to size; "(none)" when it has none), for messages that list what is known. */
void thing_prop_list(const ThingDb *db, ThingId id, char *buf, size_t size);

/* Typed getters by property name. A missing property or a type mismatch is a programming
 * error (assert); callers use names from the kind's schema. */
double thing_real(const ThingDb *db, ThingId id, const char *name);
int64_t thing_int(const ThingDb *db, ThingId id, const char *name);
bool thing_bool(const ThingDb *db, ThingId id, const char *name);
int thing_enum(const ThingDb *db, ThingId id, const char *name);
const char *thing_enum_name(const ThingDb *db, ThingId id, const char *name);
const char *thing_string(const ThingDb *db, ThingId id, const char *name);
Vec3 thing_vec3(const ThingDb *db, ThingId id, const char *name);
Quat thing_quat(const ThingDb *db, ThingId id, const char *name);
/* Borrowed pointer to the property's value. */
const PropValue *thing_get(const ThingDb *db, ThingId id, const char *name);

/* Resolves "bar.contact.model" into (thing, property index). */
IssimStatus thingdb_resolve(const ThingDb *db, const char *path, ThingId *thing, int *prop,
                            IssimError *err);
/* Validates and stores a value. When running is true, PROP_FIXED_DURING_RUN properties are
 * refused with ISSIM_ERR_READONLY and a message naming the property. On any failure the old
 * value is kept. */
IssimStatus thing_set(ThingDb *db, ThingId id, int prop, const PropValue *v, bool running,
                      IssimError *err);
/* Parses text for the property at path and sets it (the --set and edit-queue path). Error
 * messages name the path: "bar.mass: -1 kg is out of range: must be > 0". */
IssimStatus thingdb_set_text(ThingDb *db, const char *path, const char *text, bool running,
                             IssimError *err);

/* The standard property schema of a kind: *count definitions (static storage). */
const PropDef *thing_kind_props(ThingKind kind, int *count);

#endif
