/* The thing database (000 App. B.4.5-B.4.6): things in generational slots, kept in insertion
 * order, each owning a copy of its property definitions and values.
 *
 * Invariants: slot i holds the thing with index i + 1; a free slot's generation has been bumped
 * so every id issued for its previous occupant is stale. `order` lists the live things in
 * insertion order; since a parent must exist before a child is added and parents never change,
 * parents always precede their children in it (removal relies on that).
 */
#include "thing_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* def points into the schema's static table, or (owns_def) at a copy of what thing_add_prop was
 * given: a copy in every property of every thing was half of a body's 61 KB (1e5 bodies, in the
 * three databases a run holds, ran out of memory). */
typedef struct Prop {
    const PropDef *def;
    bool owns_def;
    PropValue value;
} Prop;

typedef struct Thing {
    uint32_t generation;
    bool alive;
    bool doomed; /* scratch flag of thingdb_remove */
    ThingKind kind;
    ThingId parent;
    char name[THING_NAME_MAX + 1];
    Prop *props;
    int prop_count, prop_cap;
} Thing;

struct ThingDb {
    Thing *slots;
    uint32_t slot_count, slot_cap;
    uint32_t *free_slots; /* indices (1-based) of free slots, used last-in first-out */
    uint32_t free_count;
    ThingId *order;
    int count, order_cap;
    /* Name index: open addressing over (parent, name), slot index + 1 per entry (0: empty),
     * at most half full. A scan of every thing per lookup made adding n things quadratic: a
     * 16,000-thing scene took 0.6 s in thingdb_add's duplicate check. Rebuilt on removal. */
    uint32_t *name_index;
    uint32_t name_cap;
};

/* Programming errors (wrong property name or type in engine code) stop the program through
 * the overridable fatal handler: there is no sensible value to return. */
#define thing_fatal(...) issim_fatal("thing database: " __VA_ARGS__)

static Thing *slot_of(const ThingDb *db, ThingId id) {
    if (!db || id.index == 0 || id.index > db->slot_count)
        return NULL;
    Thing *t = &db->slots[id.index - 1];
    return t->alive && t->generation == id.generation ? t : NULL;
}

bool thing_name_valid(const char *name) {
    if (!name || !((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
                   name[0] == '_'))
        return false;
    size_t len = 0;
    for (const char *p = name; *p; p++, len++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return len <= THING_NAME_MAX;
}

/* ===== Lifetime ===== */

ThingDb *thingdb_create(void) {
    return calloc(1, sizeof(ThingDb));
}

static void free_props(Prop *props, int count) {
    for (int i = 0; i < count; i++)
        if (props[i].owns_def)
            free((PropDef *)props[i].def);
    free(props);
}

/* The clone's own copies of the definitions thing_add_prop gave its source. */
static bool copy_owned_defs(Prop *props, int count) {
    for (int i = 0; i < count; i++) {
        if (!props[i].owns_def)
            continue;
        PropDef *copy = malloc(sizeof *copy);
        if (!copy) {
            for (int j = i; j < count; j++)
                props[j].owns_def = false; /* still the source's */
            return false;
        }
        *copy = *props[i].def;
        props[i].def = copy;
    }
    return true;
}

void thingdb_destroy(ThingDb *db) {
    if (!db)
        return;
    for (uint32_t i = 0; i < db->slot_count; i++)
        free_props(db->slots[i].props, db->slots[i].prop_count);
    free(db->slots);
    free(db->free_slots);
    free(db->order);
    free(db->name_index);
    free(db);
}

static bool index_rebuild(ThingDb *db, int need);

ThingDb *thingdb_clone(const ThingDb *db) {
    ThingDb *c = calloc(1, sizeof(ThingDb));
    if (!c)
        return NULL;
    c->slot_count = c->slot_cap = db->slot_count;
    c->free_count = db->free_count;
    c->count = c->order_cap = db->count;
    if (db->slot_count) {
        c->slots = calloc(db->slot_count, sizeof(Thing));
        c->free_slots = malloc(db->slot_count * sizeof(uint32_t));
        if (!c->slots || !c->free_slots)
            goto fail;
        memcpy(c->free_slots, db->free_slots, db->free_count * sizeof(uint32_t));
    }
    if (db->count) {
        c->order = malloc((size_t)db->count * sizeof(ThingId));
        if (!c->order)
            goto fail;
        memcpy(c->order, db->order, (size_t)db->count * sizeof(ThingId));
    }
    for (uint32_t i = 0; i < db->slot_count; i++) {
        const Thing *src = &db->slots[i];
        Thing *dst = &c->slots[i];
        *dst = *src;
        dst->props = NULL;
        dst->prop_cap = 0;
        if (src->prop_count) {
            dst->props = malloc((size_t)src->prop_count * sizeof(Prop));
            if (!dst->props) {
                dst->prop_count = 0;
                goto fail;
            }
            memcpy(dst->props, src->props, (size_t)src->prop_count * sizeof(Prop));
            dst->prop_cap = src->prop_count;
            if (!copy_owned_defs(dst->props, dst->prop_count))
                goto fail;
        }
    }
    if (!index_rebuild(c, c->count))
        goto fail;
    return c;
fail:
    thingdb_destroy(c);
    return NULL;
}

/* ===== Adding and removing ===== */

static uint32_t name_hash(ThingId parent, const char *name, size_t len) {
    uint64_t h = 1469598103934665603ull ^ ((uint64_t)parent.index << 32 | parent.generation);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static bool names_child(const Thing *t, ThingId parent, const char *name, size_t len) {
    return thing_id_equal(t->parent, parent) && strncmp(t->name, name, len) == 0 &&
           t->name[len] == '\0';
}

static ThingId find_child(const ThingDb *db, ThingId parent, const char *name, size_t len) {
    if (db->name_cap == 0)
        return thing_id_null();
    uint32_t mask = db->name_cap - 1;
    for (uint32_t i = name_hash(parent, name, len) & mask;; i = (i + 1) & mask) {
        uint32_t entry = db->name_index[i];
        if (entry == 0)
            return thing_id_null();
        const Thing *t = &db->slots[entry - 1];
        if (t->alive && names_child(t, parent, name, len))
            return (ThingId){entry, t->generation};
    }
}

static void index_insert(uint32_t *table, uint32_t cap, const Thing *t, uint32_t slot_index) {
    uint32_t mask = cap - 1;
    uint32_t i = name_hash(t->parent, t->name, strlen(t->name)) & mask;
    while (table[i] != 0)
        i = (i + 1) & mask;
    table[i] = slot_index;
}

/* (Re)builds the name index with room for `need` things at most half full. */
static bool index_rebuild(ThingDb *db, int need) {
    uint32_t cap = 64;
    while (cap < 2u * (uint32_t)need + 2)
        cap *= 2;
    uint32_t *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    for (int i = 0; i < db->count; i++)
        index_insert(table, cap, &db->slots[db->order[i].index - 1], db->order[i].index);
    free(db->name_index);
    db->name_index = table;
    db->name_cap = cap;
    return true;
}

static bool grow(void **array, int *cap, int need, size_t item) {
    if (need <= *cap)
        return true;
    int next = *cap ? *cap * 2 : 16;
    while (next < need)
        next *= 2;
    void *p = realloc(*array, (size_t)next * item);
    if (!p)
        return false;
    *array = p;
    *cap = next;
    return true;
}

ThingId thingdb_add(ThingDb *db, const char *name, ThingKind kind, ThingId parent,
                    IssimError *err) {
    if ((unsigned)kind >= THING_KIND_COUNT) {
        issim_error_set(err, ISSIM_ERR_INVALID, "unknown thing kind %d", (int)kind);
        return thing_id_null();
    }
    if (!thing_name_valid(name)) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "invalid thing name '%.80s': names are letters, digits and '_', not "
                        "starting with a digit, at most %d characters",
                        name ? name : "", THING_NAME_MAX);
        return thing_id_null();
    }
    if (!thing_id_is_null(parent) && !slot_of(db, parent)) {
        issim_error_set(err, ISSIM_ERR_NOT_FOUND, "cannot add '%s': the parent no longer exists",
                        name);
        return thing_id_null();
    }
    if (kind == THING_UNIVERSE) {
        if (!thing_id_is_null(parent) || strcmp(name, "universe") != 0) {
            issim_error_set(err, ISSIM_ERR_INVALID,
                            "the universe must be a top-level thing named 'universe'");
            return thing_id_null();
        }
        if (!thing_id_is_null(thingdb_find_kind(db, THING_UNIVERSE))) {
            issim_error_set(err, ISSIM_ERR_INVALID, "there is already a universe");
            return thing_id_null();
        }
    }
    if (!thing_id_is_null(find_child(db, parent, name, strlen(name)))) {
        char path[256] = "";
        if (!thing_id_is_null(parent))
            thing_path(db, parent, path, sizeof path);
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "duplicate name '%s'%s%s: names must be unique "
                        "among siblings",
                        name, path[0] ? " in " : "", path);
        return thing_id_null();
    }

    int prop_count;
    const PropDef *defs = thing_kind_props(kind, &prop_count);
    Prop *props = NULL;
    if (prop_count) {
        props = malloc((size_t)prop_count * sizeof(Prop));
        if (!props)
            goto nomem;
        for (int i = 0; i < prop_count; i++) {
            props[i].def = &defs[i];
            props[i].owns_def = false;
            props[i].value = prop_canonical(&defs[i].default_value);
        }
    }
    if (!grow((void **)&db->order, &db->order_cap, db->count + 1, sizeof(ThingId)))
        goto nomem;
    if (2u * (uint32_t)(db->count + 1) + 2 > db->name_cap && !index_rebuild(db, 2 * db->count + 2))
        goto nomem;

    uint32_t index;
    if (db->free_count) {
        index = db->free_slots[--db->free_count];
    } else {
        if (db->slot_count == db->slot_cap) {
            uint32_t cap = db->slot_cap ? db->slot_cap * 2 : 16;
            Thing *slots = realloc(db->slots, cap * sizeof(Thing));
            if (!slots)
                goto nomem;
            db->slots = slots;
            uint32_t *free_slots = realloc(db->free_slots, cap * sizeof(uint32_t));
            if (!free_slots)
                goto nomem;
            db->free_slots = free_slots;
            db->slot_cap = cap;
        }
        index = ++db->slot_count;
        db->slots[index - 1] = (Thing){.generation = 1};
    }
    Thing *t = &db->slots[index - 1];
    t->alive = true;
    t->doomed = false;
    t->kind = kind;
    t->parent = parent;
    issim_strlcpy(t->name, name, sizeof t->name);
    t->props = props;
    t->prop_count = t->prop_cap = prop_count;
    ThingId id = {index, t->generation};
    db->order[db->count++] = id;
    index_insert(db->name_index, db->name_cap, t, index);
    return id;
nomem:
    free(props);
    issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory adding thing '%s'", name);
    return thing_id_null();
}

IssimStatus thing_add_prop(ThingDb *db, ThingId id, const PropDef *def, IssimError *err) {
    Thing *t = slot_of(db, id);
    if (!t)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND, "cannot add a property: stale thing id");
    char path[256];
    thing_path(db, id, path, sizeof path);
    if (!def->name || !def->name[0])
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: a property needs a name", path);
    if (thing_prop_find(db, id, def->name) >= 0)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s already has a property '%s'", path,
                               def->name);
    char msg[400];
    IssimStatus status = prop_check(def, &def->default_value, msg, sizeof msg);
    if (status != ISSIM_OK)
        return issim_error_set(err, status, "%s.%s: invalid default: %s", path, def->name, msg);
    if (t->prop_count == t->prop_cap) {
        int cap = t->prop_cap ? t->prop_cap * 2 : 8;
        Prop *props = realloc(t->props, (size_t)cap * sizeof(Prop));
        if (!props)
            return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory adding %s.%s", path,
                                   def->name);
        t->props = props;
        t->prop_cap = cap;
    }
    PropDef *copy = malloc(sizeof *copy);
    if (!copy)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory adding %s.%s", path, def->name);
    *copy = *def;
    t->props[t->prop_count].def = copy;
    t->props[t->prop_count].owns_def = true;
    t->props[t->prop_count].value = prop_canonical(&def->default_value);
    t->prop_count++;
    return ISSIM_OK;
}

IssimStatus thingdb_remove(ThingDb *db, ThingId id, IssimError *err) {
    Thing *target = slot_of(db, id);
    if (!target)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND, "cannot remove: stale thing id");
    /* Parents precede children in `order`, so one pass marks the whole subtree. */
    target->doomed = true;
    for (int i = 0; i < db->count; i++) {
        Thing *t = slot_of(db, db->order[i]);
        Thing *p = slot_of(db, t->parent);
        if (p && p->doomed)
            t->doomed = true;
    }
    int kept = 0;
    for (int i = 0; i < db->count; i++) {
        ThingId tid = db->order[i];
        Thing *t = &db->slots[tid.index - 1];
        if (!t->doomed) {
            db->order[kept++] = tid;
            continue;
        }
        free_props(t->props, t->prop_count);
        t->props = NULL;
        t->prop_count = t->prop_cap = 0;
        t->alive = false;
        t->doomed = false;
        t->generation++;
        if (t->generation == 0)
            t->generation = 1;
        db->free_slots[db->free_count++] = tid.index;
    }
    db->count = kept;
    /* Removing from open addressing would need tombstones; removals are rare (editing a
     * scene), so the index is built again. On failure the old index is kept: it still names
     * every live thing and skips dead slots. */
    index_rebuild(db, db->count);
    return ISSIM_OK;
}

/* ===== Lookup ===== */

bool thingdb_valid(const ThingDb *db, ThingId id) {
    return slot_of(db, id) != NULL;
}
int thingdb_count(const ThingDb *db) {
    return db->count;
}

size_t thingdb_memory_bytes(const ThingDb *db) {
    size_t bytes = sizeof *db + db->slot_cap * (sizeof(Thing) + sizeof(uint32_t)) +
                   (size_t)db->order_cap * sizeof(ThingId) + db->name_cap * sizeof(*db->name_index);
    for (uint32_t i = 0; i < db->slot_count; i++)
        bytes += (size_t)db->slots[i].prop_cap * sizeof(Prop);
    return bytes;
}

ThingId thingdb_at(const ThingDb *db, int i) {
    return i >= 0 && i < db->count ? db->order[i] : thing_id_null();
}

/* Finds the thing at path[0 .. len). */
static ThingId find_path(const ThingDb *db, const char *path, size_t len) {
    ThingId current = thing_id_null();
    size_t start = 0;
    if (len == 0)
        return current;
    for (;;) {
        size_t end = start;
        while (end < len && path[end] != '.')
            end++;
        if (end == start)
            return thing_id_null();
        current = find_child(db, current, path + start, end - start);
        if (thing_id_is_null(current) || end == len)
            return current;
        start = end + 1;
    }
}

ThingId thingdb_find(const ThingDb *db, const char *path) {
    return path ? find_path(db, path, strlen(path)) : thing_id_null();
}

ThingId thingdb_find_kind(const ThingDb *db, ThingKind kind) {
    for (int i = 0; i < db->count; i++)
        if (db->slots[db->order[i].index - 1].kind == kind)
            return db->order[i];
    return thing_id_null();
}

const char *thing_name(const ThingDb *db, ThingId id) {
    const Thing *t = slot_of(db, id);
    return t ? t->name : NULL;
}

ThingKind thing_kind(const ThingDb *db, ThingId id) {
    const Thing *t = slot_of(db, id);
    return t ? t->kind : THING_KIND_COUNT;
}

ThingId thing_parent(const ThingDb *db, ThingId id) {
    const Thing *t = slot_of(db, id);
    return t ? t->parent : thing_id_null();
}

char *thing_path(const ThingDb *db, ThingId id, char *buf, size_t size) {
    const Thing *chain[THING_MAX_DEPTH];
    int depth = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (const Thing *t = slot_of(db, id); t && depth < THING_MAX_DEPTH; t = slot_of(db, t->parent))
        chain[depth++] = t;
    size_t used = 0;
    for (int i = depth - 1; i >= 0 && used < size; i--)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i == depth - 1 ? "" : ".",
                                 chain[i]->name);
    return buf;
}

/* ===== Properties ===== */

int thing_prop_count(const ThingDb *db, ThingId id) {
    const Thing *t = slot_of(db, id);
    return t ? t->prop_count : 0;
}

const PropDef *thing_prop_def(const ThingDb *db, ThingId id, int prop) {
    const Thing *t = slot_of(db, id);
    return t && prop >= 0 && prop < t->prop_count ? t->props[prop].def : NULL;
}

const PropValue *thing_prop_value(const ThingDb *db, ThingId id, int prop) {
    const Thing *t = slot_of(db, id);
    return t && prop >= 0 && prop < t->prop_count ? &t->props[prop].value : NULL;
}

int thing_prop_find(const ThingDb *db, ThingId id, const char *name) {
    const Thing *t = slot_of(db, id);
    if (!t || !name)
        return -1;
    for (int i = 0; i < t->prop_count; i++)
        if (strcmp(t->props[i].def->name, name) == 0)
            return i;
    return -1;
}

void thing_prop_list(const ThingDb *db, ThingId id, char *buf, size_t size) {
    const Thing *t = slot_of(db, id);
    size_t used = 0;
    buf[0] = '\0';
    if (!t || t->prop_count == 0) {
        snprintf(buf, size, "(none)");
        return;
    }
    for (int i = 0; i < t->prop_count && used < size; i++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", t->props[i].def->name);
}

/* Value of a named property of the expected type, or a fatal programming error. */
static const PropValue *get_typed(const ThingDb *db, ThingId id, const char *name, PropType type) {
    const Thing *t = slot_of(db, id);
    if (!t)
        thing_fatal("property '%s' read through a stale thing id", name);
    int i = thing_prop_find(db, id, name);
    if (i < 0)
        thing_fatal("thing '%s' (%s) has no property '%s'", t->name, thing_kind_name(t->kind),
                    name);
    if (t->props[i].value.type != type)
        thing_fatal("%s.%s is %s, read as %s", t->name, name,
                    prop_type_phrase(t->props[i].value.type), prop_type_phrase(type));
    return &t->props[i].value;
}

double thing_real(const ThingDb *db, ThingId id, const char *name) {
    return get_typed(db, id, name, PROP_REAL)->real;
}
int64_t thing_int(const ThingDb *db, ThingId id, const char *name) {
    return get_typed(db, id, name, PROP_INT)->integer;
}
bool thing_bool(const ThingDb *db, ThingId id, const char *name) {
    return get_typed(db, id, name, PROP_BOOL)->boolean;
}
int thing_enum(const ThingDb *db, ThingId id, const char *name) {
    return (int)get_typed(db, id, name, PROP_ENUM)->integer;
}
const char *thing_enum_name(const ThingDb *db, ThingId id, const char *name) {
    const PropValue *v = get_typed(db, id, name, PROP_ENUM);
    const PropDef *def = thing_prop_def(db, id, thing_prop_find(db, id, name));
    return def->enum_names[v->integer];
}
const char *thing_string(const ThingDb *db, ThingId id, const char *name) {
    return get_typed(db, id, name, PROP_STRING)->string;
}
Vec3 thing_vec3(const ThingDb *db, ThingId id, const char *name) {
    const PropValue *v = get_typed(db, id, name, PROP_VEC3);
    return (Vec3){v->vec[0], v->vec[1], v->vec[2]};
}
Quat thing_quat(const ThingDb *db, ThingId id, const char *name) {
    const PropValue *v = get_typed(db, id, name, PROP_QUAT);
    return (Quat){v->vec[0], v->vec[1], v->vec[2], v->vec[3]};
}

const PropValue *thing_get(const ThingDb *db, ThingId id, const char *name) {
    const Thing *t = slot_of(db, id);
    if (!t)
        thing_fatal("property '%s' read through a stale thing id", name);
    int i = thing_prop_find(db, id, name);
    if (i < 0)
        thing_fatal("thing '%s' (%s) has no property '%s'", t->name, thing_kind_name(t->kind),
                    name);
    return &t->props[i].value;
}

/* ===== Paths and setting ===== */

IssimStatus thingdb_resolve(const ThingDb *db, const char *path, ThingId *thing, int *prop,
                            IssimError *err) {
    size_t len = strlen(path);
    ThingId longest = thing_id_null();
    size_t longest_len = 0;
    /* Try every split "thing.prop" from the longest thing path down; the property name may
     * contain dots, so a shorter thing path can still match. */
    for (size_t dot = len; dot-- > 0;) {
        if (path[dot] != '.')
            continue;
        ThingId t = find_path(db, path, dot);
        if (thing_id_is_null(t))
            continue;
        if (thing_id_is_null(longest)) {
            longest = t;
            longest_len = dot;
        }
        int p = thing_prop_find(db, t, path + dot + 1);
        if (p >= 0) {
            *thing = t;
            *prop = p;
            return ISSIM_OK;
        }
    }
    if (thing_id_is_null(longest)) {
        size_t first = strcspn(path, ".");
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                               "%s: no thing named '%.*s' (a property path is thing.property)",
                               path, (int)first, path);
    }
    char known[384];
    thing_prop_list(db, longest, known, sizeof known);
    return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                           "%s: unknown property '%s' of %s '%.*s'; "
                           "known: %s",
                           path, path + longest_len + 1, thing_kind_name(thing_kind(db, longest)),
                           (int)longest_len, path, known);
}

IssimStatus thing_set(ThingDb *db, ThingId id, int prop, const PropValue *v, bool running,
                      IssimError *err) {
    Thing *t = slot_of(db, id);
    if (!t)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND, "cannot set a property: stale thing id");
    char path[256];
    thing_path(db, id, path, sizeof path);
    if (prop < 0 || prop >= t->prop_count)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND, "%s has no property number %d", path,
                               prop);
    const PropDef *def = t->props[prop].def;
    if (running && def->mutability == PROP_FIXED_DURING_RUN)
        return issim_error_set(err, ISSIM_ERR_READONLY,
                               "%s.%s is fixed during a run; stop the simulation to change it",
                               path, def->name);
    char msg[400];
    IssimStatus status = prop_check(def, v, msg, sizeof msg);
    if (status != ISSIM_OK)
        return issim_error_set(err, status, "%s.%s: %s", path, def->name, msg);
    t->props[prop].value = prop_canonical(v);
    return ISSIM_OK;
}

IssimStatus thingdb_set_text(ThingDb *db, const char *path, const char *text, bool running,
                             IssimError *err) {
    ThingId id;
    int prop;
    IssimStatus status = thingdb_resolve(db, path, &id, &prop, err);
    if (status != ISSIM_OK)
        return status;
    const PropDef *def = thing_prop_def(db, id, prop);
    /* Refuse a fixed property before complaining about the text. */
    if (running && def->mutability == PROP_FIXED_DURING_RUN)
        return issim_error_set(err, ISSIM_ERR_READONLY,
                               "%s is fixed during a run; stop the simulation to change it", path);
    PropValue v;
    char msg[400];
    status = prop_parse_raw(def, text, &v, msg, sizeof msg);
    if (status != ISSIM_OK)
        return issim_error_set(err, status, "%s: %s", path, msg);
    return thing_set(db, id, prop, &v, running, err);
}
