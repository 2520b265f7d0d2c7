/* Property values: validation against a PropDef, parsing from text, formatting as text or as
 * a Lua expression, equality.
 *
 * Ranges: a REAL, INT, VEC3 or POINTS definition with min < max is checked against
 * [min, max] (or (min, max] when min_exclusive), per component for vectors and points; a
 * definition with min >= max (both zero in practice) has no range. Every number must be
 * finite. A VEC3 named "normal" must not be the zero vector (plane normals are normalised by
 * the engine). A QUAT must have a non-zero norm; it is normalised when stored.
 */
#include "thing_internal.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ===== Constructors ===== */

PropValue prop_real(double x) {
    return (PropValue){.type = PROP_REAL, .real = x};
}
PropValue prop_int(int64_t i) {
    return (PropValue){.type = PROP_INT, .integer = i};
}
PropValue prop_bool(bool b) {
    return (PropValue){.type = PROP_BOOL, .boolean = b};
}
PropValue prop_enum(int index) {
    return (PropValue){.type = PROP_ENUM, .integer = index};
}

PropValue prop_string(const char *s) {
    PropValue v = {.type = PROP_STRING};
    issim_strlcpy(v.string, s ? s : "", sizeof v.string);
    return v;
}

PropValue prop_vec3(Vec3 a) {
    return (PropValue){.type = PROP_VEC3, .vec = {a.x, a.y, a.z}};
}
PropValue prop_quat(Quat q) {
    return (PropValue){.type = PROP_QUAT, .vec = {q.w, q.x, q.y, q.z}};
}

PropValue prop_points(const Vec3 *points, int count) {
    PropValue v = {.type = PROP_POINTS};
    if (count < 0)
        count = 0;
    if (count > PROP_MAX_POINTS)
        count = PROP_MAX_POINTS;
    v.point_count = count;
    for (int i = 0; i < count; i++)
        v.points[i] = points[i];
    return v;
}

/* ===== Text helpers ===== */

const char *prop_type_phrase(PropType type) {
    switch (type) {
    case PROP_REAL:
        return "a number";
    case PROP_INT:
        return "an integer";
    case PROP_BOOL:
        return "a boolean (true or false)";
    case PROP_ENUM:
        return "a name";
    case PROP_STRING:
        return "a string";
    case PROP_VEC3:
        return "a vector {x, y, z}";
    case PROP_QUAT:
        return "a quaternion {w, x, y, z}";
    case PROP_POINTS:
        return "a list of points {{x, y, z}, ...}";
    }
    return "a value";
}

void prop_enum_list(const PropDef *def, char *buf, size_t size) {
    vocabulary_list(def->enum_names, def->enum_count, buf, size);
}

void prop_format_number(double x, bool lua_syntax, char *buf, size_t size) {
    if (isnan(x)) {
        snprintf(buf, size, "%s", lua_syntax ? "(0/0)" : "nan");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, size, "%s",
                 x > 0 ? (lua_syntax ? "(1/0)" : "inf") : (lua_syntax ? "(-1/0)" : "-inf"));
        return;
    }
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* Appends formatted text to buf at *used, never overflowing. */
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...) {
    if (*used >= size)
        return;
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, args);
    va_end(args);
    if (n > 0)
        *used += (size_t)n;
    if (*used >= size)
        *used = size - 1;
}

static void append_number(char *buf, size_t size, size_t *used, double x, bool lua_syntax) {
    char number[40];
    prop_format_number(x, lua_syntax, number, sizeof number);
    append(buf, size, used, "%s", number);
}

static void append_vector(char *buf, size_t size, size_t *used, const double *x, int n,
                          bool lua_syntax) {
    append(buf, size, used, "{");
    for (int i = 0; i < n; i++) {
        if (i)
            append(buf, size, used, ", ");
        append_number(buf, size, used, x[i], lua_syntax);
    }
    append(buf, size, used, "}");
}

/* Lua string literal into a buffer. */
static void append_lua_string(char *buf, size_t size, size_t *used, const char *s) {
    append(buf, size, used, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            append(buf, size, used, "\\\"");
            break;
        case '\\':
            append(buf, size, used, "\\\\");
            break;
        case '\n':
            append(buf, size, used, "\\n");
            break;
        case '\r':
            append(buf, size, used, "\\r");
            break;
        case '\t':
            append(buf, size, used, "\\t");
            break;
        default:
            if (*p < 32 || *p == 127)
                append(buf, size, used, "\\%03d", *p);
            else
                append(buf, size, used, "%c", *p);
        }
    }
    append(buf, size, used, "\"");
}

void prop_format(const PropDef *def, const PropValue *v, bool lua_syntax, char *buf, size_t size) {
    size_t used = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    switch (v->type) {
    case PROP_REAL:
        append_number(buf, size, &used, v->real, lua_syntax);
        break;
    case PROP_INT:
        append(buf, size, &used, "%lld", (long long)v->integer);
        break;
    case PROP_BOOL:
        append(buf, size, &used, "%s", v->boolean ? "true" : "false");
        break;
    case PROP_ENUM: {
        const char *name = def && v->integer >= 0 && v->integer < def->enum_count
                               ? def->enum_names[v->integer]
                               : NULL;
        if (!name)
            append(buf, size, &used, "%lld", (long long)v->integer);
        else if (lua_syntax)
            append_lua_string(buf, size, &used, name);
        else
            append(buf, size, &used, "%s", name);
        break;
    }
    case PROP_STRING:
        if (lua_syntax)
            append_lua_string(buf, size, &used, v->string);
        else
            append(buf, size, &used, "%.*s", PROP_STRING_MAX - 1, v->string);
        break;
    case PROP_VEC3:
        append_vector(buf, size, &used, v->vec, 3, lua_syntax);
        break;
    case PROP_QUAT:
        append_vector(buf, size, &used, v->vec, 4, lua_syntax);
        break;
    case PROP_POINTS:
        append(buf, size, &used, "{");
        for (int i = 0; i < v->point_count && i < PROP_MAX_POINTS; i++) {
            const double p[3] = {v->points[i].x, v->points[i].y, v->points[i].z};
            if (i)
                append(buf, size, &used, ", ");
            append_vector(buf, size, &used, p, 3, lua_syntax);
        }
        append(buf, size, &used, "}");
        break;
    }
}

/* ===== Validation ===== */

/* Compact "%g" form of a value for messages, followed by " unit" when there is one. */
static void describe_value(const PropDef *def, const PropValue *v, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    switch (v->type) {
    case PROP_REAL:
        append(buf, size, &used, "%g", v->real);
        break;
    case PROP_INT:
        append(buf, size, &used, "%lld", (long long)v->integer);
        break;
    case PROP_VEC3:
        append(buf, size, &used, "{%g, %g, %g}", v->vec[0], v->vec[1], v->vec[2]);
        break;
    case PROP_QUAT:
        append(buf, size, &used, "{%g, %g, %g, %g}", v->vec[0], v->vec[1], v->vec[2], v->vec[3]);
        break;
    default:
        prop_format(def, v, false, buf, size);
        return;
    }
    if (def->unit && def->unit[0])
        append(buf, size, &used, " %s", def->unit);
}

static bool has_range(const PropDef *def) {
    return def->min < def->max;
}

/* Checks one number against the range. On failure writes the violated bound and the whole
 * range with its unit ("must be > 0 (range (0, 1e+09] kg)") to bound and returns false. */
static bool in_range(const PropDef *def, double x, char *bound, size_t size) {
    if (!has_range(def))
        return true;
    char range[96];
    snprintf(range, sizeof range, "(range %s%g, %g]%s%s)", def->min_exclusive ? "(" : "[", def->min,
             def->max, def->unit && def->unit[0] ? " " : "", def->unit ? def->unit : "");
    if (def->min_exclusive ? !(x > def->min) : !(x >= def->min)) {
        snprintf(bound, size, "must be %s %g %s", def->min_exclusive ? ">" : ">=", def->min, range);
        return false;
    }
    if (!(x <= def->max)) {
        snprintf(bound, size, "must be <= %g %s", def->max, range);
        return false;
    }
    return true;
}

static bool all_finite(const double *x, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* Range check of n components; on failure writes "<value> is out of range: z must be ...". */
static IssimStatus check_components(const PropDef *def, const double *x, int n,
                                    const char *value_text, char *msg, size_t size) {
    static const char *const axis[] = {"x", "y", "z"};
    char bound[192];
    if (!all_finite(x, n)) {
        snprintf(msg, size, "%s is not finite", value_text);
        return ISSIM_ERR_RANGE;
    }
    for (int i = 0; i < n; i++) {
        if (!in_range(def, x[i], bound, sizeof bound)) {
            snprintf(msg, size, "%s is out of range: %s %s", value_text, axis[i], bound);
            return ISSIM_ERR_RANGE;
        }
    }
    return ISSIM_OK;
}

IssimStatus prop_check(const PropDef *def, const PropValue *v, char *msg, size_t size) {
    char value[192];
    char bound[192];
    if (v->type != def->type) {
        snprintf(msg, size, "the value has the wrong type: expected %s",
                 prop_type_phrase(def->type));
        return ISSIM_ERR_INVALID;
    }
    describe_value(def, v, value, sizeof value);
    switch (def->type) {
    case PROP_REAL:
        if (!isfinite(v->real)) {
            snprintf(msg, size, "%s is not a finite number", value);
            return ISSIM_ERR_RANGE;
        }
        if (!in_range(def, v->real, bound, sizeof bound)) {
            snprintf(msg, size, "%s is out of range: %s", value, bound);
            return ISSIM_ERR_RANGE;
        }
        return ISSIM_OK;
    case PROP_INT:
        if (!in_range(def, (double)v->integer, bound, sizeof bound)) {
            snprintf(msg, size, "%s is out of range: %s", value, bound);
            return ISSIM_ERR_RANGE;
        }
        return ISSIM_OK;
    case PROP_BOOL:
        return ISSIM_OK;
    case PROP_ENUM:
        if (v->integer < 0 || v->integer >= def->enum_count) {
            char names[256];
            prop_enum_list(def, names, sizeof names);
            snprintf(msg, size, "choice %lld is not valid: must be one of %s",
                     (long long)v->integer, names);
            return ISSIM_ERR_RANGE;
        }
        return ISSIM_OK;
    case PROP_STRING:
        if (!memchr(v->string, '\0', sizeof v->string)) {
            snprintf(msg, size, "the text is too long: at most %d bytes", PROP_STRING_MAX - 1);
            return ISSIM_ERR_RANGE;
        }
        return ISSIM_OK;
    case PROP_VEC3: {
        IssimStatus status = check_components(def, v->vec, 3, value, msg, size);
        if (status != ISSIM_OK)
            return status;
        if (def->name && strcmp(def->name, "normal") == 0 && v->vec[0] == 0 && v->vec[1] == 0 &&
            v->vec[2] == 0) {
            snprintf(msg, size, "%s is a zero vector: a normal needs a direction", value);
            return ISSIM_ERR_RANGE;
        }
        return ISSIM_OK;
    }
    case PROP_QUAT:
        if (!all_finite(v->vec, 4)) {
            snprintf(msg, size, "%s is not finite", value);
            return ISSIM_ERR_RANGE;
        }
        if (v->vec[0] == 0 && v->vec[1] == 0 && v->vec[2] == 0 && v->vec[3] == 0) {
            snprintf(msg, size, "%s is a zero quaternion: an orientation needs a non-zero norm",
                     value);
            return ISSIM_ERR_RANGE;
        }
        return ISSIM_OK;
    case PROP_POINTS:
        if (v->point_count < 0 || v->point_count > PROP_MAX_POINTS) {
            snprintf(msg, size, "%d points is out of range: at most %d", v->point_count,
                     PROP_MAX_POINTS);
            return ISSIM_ERR_RANGE;
        }
        for (int i = 0; i < v->point_count; i++) {
            const double p[3] = {v->points[i].x, v->points[i].y, v->points[i].z};
            char point[160];
            snprintf(point, sizeof point, "point %d {%g, %g, %g}%s%s", i + 1, p[0], p[1], p[2],
                     def->unit && def->unit[0] ? " " : "", def->unit ? def->unit : "");
            IssimStatus status = check_components(def, p, 3, point, msg, size);
            if (status != ISSIM_OK)
                return status;
        }
        return ISSIM_OK;
    }
    snprintf(msg, size, "unknown property type %d", (int)def->type);
    return ISSIM_ERR_INVALID;
}

IssimStatus prop_validate(const PropDef *def, const PropValue *v, IssimError *err) {
    char msg[400];
    IssimStatus status = prop_check(def, v, msg, sizeof msg);
    if (status != ISSIM_OK)
        return issim_error_set(err, status, "%s = %s", def->name, msg);
    return ISSIM_OK;
}

/* ===== Canonical form and equality ===== */

/* out = q / |q| for any finite non-zero q. Scaled by the largest component first: the plain sum
 * of squares overflowed for huge quaternions (stored as 0, 0, 0, 0) and underflowed for tiny
 * ones (stored unnormalised). A quaternion already unit to rounding keeps its bits, so
 * normalising is idempotent and a saved orientation loads back exactly. */
static void normalize_quat(const double *q, double *out) {
    double big = 0.0;
    for (int i = 0; i < 4; i++)
        big = fmax(big, fabs(q[i]));
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (big == 0.0 || fabs(n2 - 1.0) <= 4 * DBL_EPSILON) {
        memcpy(out, q, 4 * sizeof(double));
        return;
    }
    double s[4], m2 = 0.0;
    for (int i = 0; i < 4; i++) {
        s[i] = q[i] / big;
        m2 += s[i] * s[i];
    }
    double inv = 1.0 / sqrt(m2);
    for (int i = 0; i < 4; i++)
        out[i] = s[i] * inv;
}

PropValue prop_canonical(const PropValue *v) {
    PropValue c = {.type = v->type};
    switch (v->type) {
    case PROP_REAL:
        c.real = v->real;
        break;
    case PROP_INT:
    case PROP_ENUM:
        c.integer = v->integer;
        break;
    case PROP_BOOL:
        c.boolean = v->boolean;
        break;
    case PROP_STRING:
        issim_strlcpy(c.string, v->string, sizeof c.string);
        break;
    case PROP_VEC3:
        memcpy(c.vec, v->vec, 3 * sizeof(double));
        break;
    case PROP_QUAT:
        normalize_quat(v->vec, c.vec);
        break;
    case PROP_POINTS:
        c.point_count = v->point_count < 0                 ? 0
                        : v->point_count > PROP_MAX_POINTS ? PROP_MAX_POINTS
                                                           : v->point_count;
        memcpy(c.points, v->points, (size_t)c.point_count * sizeof(Vec3));
        break;
    }
    return c;
}

bool prop_value_equal(const PropValue *a, const PropValue *b) {
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case PROP_REAL:
        return a->real == b->real;
    case PROP_INT:
    case PROP_ENUM:
        return a->integer == b->integer;
    case PROP_BOOL:
        return a->boolean == b->boolean;
    case PROP_STRING:
        return strncmp(a->string, b->string, PROP_STRING_MAX) == 0;
    case PROP_VEC3:
        return a->vec[0] == b->vec[0] && a->vec[1] == b->vec[1] && a->vec[2] == b->vec[2];
    case PROP_QUAT:
        return a->vec[0] == b->vec[0] && a->vec[1] == b->vec[1] && a->vec[2] == b->vec[2] &&
               a->vec[3] == b->vec[3];
    case PROP_POINTS:
        if (a->point_count != b->point_count)
            return false;
        for (int i = 0; i < a->point_count && i < PROP_MAX_POINTS; i++)
            if (a->points[i].x != b->points[i].x || a->points[i].y != b->points[i].y ||
                a->points[i].z != b->points[i].z)
                return false;
        return true;
    }
    return false;
}

/* ===== Parsing ===== */

/* Reads numbers separated by whitespace and commas, with optional enclosing braces:
 * "0 0 -9.81", "{0, 0, -9.81}". Returns the count read (at most max), or -1 on a malformed
 * text or more than max numbers. */
static int parse_numbers(const char *text, double *x, int max) {
    const char *p = text;
    int depth = 0, count = 0;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == '\0')
            break;
        if (*p == '{') {
            if (depth > 0 || count > 0)
                return -1;
            depth++;
            p++;
            continue;
        }
        if (*p == '}') {
            if (depth != 1)
                return -1;
            depth--;
            p++;
            while (isspace((unsigned char)*p))
                p++;
            if (*p != '\0')
                return -1;
            break;
        }
        char *end;
        errno = 0;
        double value = strtod(p, &end);
        if (end == p)
            return -1;
        if (*end != '\0' && *end != ',' && *end != '}' && !isspace((unsigned char)*end))
            return -1;
        if (count >= max)
            return -1;
        x[count++] = value;
        p = end;
    }
    return depth == 0 ? count : -1;
}

/* Points: "{{x,y,z}, {x,y,z}}" or "{}"; also "x y z; x y z" (one point per ';'). */
static bool parse_points(const char *text, PropValue *out) {
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    out->point_count = 0;
    if (*p != '{') {
        /* Semicolon-separated triples. */
        const char *start = p;
        while (*start) {
            const char *semi = strchr(start, ';');
            size_t len = semi ? (size_t)(semi - start) : strlen(start);
            char item[256];
            if (len >= sizeof item || out->point_count >= PROP_MAX_POINTS)
                return false;
            memcpy(item, start, len);
            item[len] = '\0';
            double x[3];
            int n = parse_numbers(item, x, 3);
            if (n != 3)
                return false;
            out->points[out->point_count++] = (Vec3){x[0], x[1], x[2]};
            if (!semi)
                break;
            start = semi + 1;
        }
        return out->point_count > 0;
    }
    p++;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == '}') {
            p++;
            while (isspace((unsigned char)*p))
                p++;
            return *p == '\0';
        }
        if (*p != '{')
            return false;
        const char *close = strchr(p, '}');
        if (!close || out->point_count >= PROP_MAX_POINTS)
            return false;
        char item[256];
        size_t len = (size_t)(close - p) + 1;
        if (len >= sizeof item)
            return false;
        memcpy(item, p, len);
        item[len] = '\0';
        double x[3];
        if (parse_numbers(item, x, 3) != 3)
            return false;
        out->points[out->point_count++] = (Vec3){x[0], x[1], x[2]};
        p = close + 1;
    }
}

static bool parse_bool(const char *text, bool *out) {
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Copies text without leading and trailing white space into buf. */
static void trim(const char *text, char *buf, size_t size) {
    while (isspace((unsigned char)*text))
        text++;
    size_t len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    if (len >= size)
        len = size - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
}

IssimStatus prop_parse_raw(const PropDef *def, const char *text, PropValue *out, char *msg,
                           size_t size) {
    char t[4096];
    const char *unit = def->unit && def->unit[0] ? def->unit : NULL;
    *out = (PropValue){.type = def->type};
    if (def->type == PROP_STRING) {
        if (strlen(text) >= PROP_STRING_MAX) {
            snprintf(msg, size, "the text is too long: at most %d bytes", PROP_STRING_MAX - 1);
            return ISSIM_ERR_RANGE;
        }
        issim_strlcpy(out->string, text, sizeof out->string);
        return ISSIM_OK;
    }
    if (strlen(text) >= sizeof t) {
        snprintf(msg, size, "the text is too long to be %s", prop_type_phrase(def->type));
        return ISSIM_ERR_INVALID;
    }
    trim(text, t, sizeof t);
    switch (def->type) {
    case PROP_REAL: {
        double x[1];
        if (parse_numbers(t, x, 1) != 1) {
            snprintf(msg, size, "cannot read '%.64s' as a number%s%s%s", t, unit ? " (" : "",
                     unit ? unit : "", unit ? ")" : "");
            return ISSIM_ERR_INVALID;
        }
        out->real = x[0];
        return ISSIM_OK;
    }
    case PROP_INT: {
        char *end;
        errno = 0;
        long long i = strtoll(t, &end, 10);
        if (end == t || *end != '\0' || errno == ERANGE) {
            snprintf(msg, size, "cannot read '%.64s' as an integer", t);
            return ISSIM_ERR_INVALID;
        }
        out->integer = i;
        return ISSIM_OK;
    }
    case PROP_BOOL:
        if (!parse_bool(t, &out->boolean)) {
            snprintf(msg, size, "cannot read '%.64s' as a boolean: use true or false", t);
            return ISSIM_ERR_INVALID;
        }
        return ISSIM_OK;
    case PROP_ENUM: {
        /* Accept a quoted name too, as Lua and prop_format(lua_syntax) write it. */
        size_t len = strlen(t);
        if (len >= 2 && (t[0] == '"' || t[0] == '\'') && t[len - 1] == t[0]) {
            memmove(t, t + 1, len - 2);
            t[len - 2] = '\0';
        }
        int k = vocabulary_parse(def->enum_names, def->enum_count, t);
        if (k >= 0) {
            out->integer = k;
            return ISSIM_OK;
        }
        char names[256];
        prop_enum_list(def, names, sizeof names);
        snprintf(msg, size, "unknown choice '%.64s'; one of: %s", t, names);
        return ISSIM_ERR_INVALID;
    }
    case PROP_VEC3:
    case PROP_QUAT: {
        int want = def->type == PROP_VEC3 ? 3 : 4;
        if (parse_numbers(t, out->vec, 4) != want) {
            snprintf(msg, size, "cannot read '%.64s' as %s", t, prop_type_phrase(def->type));
            return ISSIM_ERR_INVALID;
        }
        return ISSIM_OK;
    }
    case PROP_POINTS:
        if (!parse_points(t, out)) {
            snprintf(msg, size, "cannot read '%.64s' as %s (at most %d points)", t,
                     prop_type_phrase(def->type), PROP_MAX_POINTS);
            return ISSIM_ERR_INVALID;
        }
        return ISSIM_OK;
    case PROP_STRING:
        break;
    }
    return ISSIM_OK;
}

IssimStatus prop_parse_unvalidated(const PropDef *def, const char *text, PropValue *out,
                                   IssimError *err) {
    char msg[400];
    IssimStatus status = prop_parse_raw(def, text, out, msg, sizeof msg);
    return status == ISSIM_OK ? ISSIM_OK : issim_error_set(err, status, "%s", msg);
}

IssimStatus prop_parse(const PropDef *def, const char *text, PropValue *out, IssimError *err) {
    char msg[400];
    PropValue v;
    IssimStatus status = prop_parse_raw(def, text, &v, msg, sizeof msg);
    if (status != ISSIM_OK)
        return issim_error_set(err, status, "%s: %s", def->name, msg);
    status = prop_validate(def, &v, err);
    if (status != ISSIM_OK)
        return status;
    *out = prop_canonical(&v);
    return ISSIM_OK;
}
