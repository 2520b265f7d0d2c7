/* Private helpers of the thing module (prop.c, schema.c, thingdb.c).
 *
 * Validation and parse messages are built in two parts: a body that starts with the value
 * ("-1 kg is out of range: must be > 0") and a prefix chosen by the caller: "mass = " for
 * prop_validate, "bar.mass: " for the path-based calls and the scene loader.
 */
#ifndef ISSIM_THING_INTERNAL_H
#define ISSIM_THING_INTERNAL_H

#include "issim/thing.h"

/* Longest thing name (bytes, without the terminator). */
#define THING_NAME_MAX 63

/* Checks v against def; on failure writes the message body to msg and returns the status. */
IssimStatus prop_check(const PropDef *def, const PropValue *v, char *msg, size_t size);
/* Parses text without validating; on failure writes the message body to msg. */
IssimStatus prop_parse_raw(const PropDef *def, const char *text, PropValue *out, char *msg,
                           size_t size);
/* Returns a copy of v with only the fields of its type kept (everything else zero) and a
 * quaternion normalised, so equal values are equal bytes (hashing, memcmp). */
PropValue prop_canonical(const PropValue *v);

/* Shortest %.{15,16,17}g text that reads back to exactly x; Lua expressions for non-finite
 * values when lua_syntax ("1/0", "0/0"). */
void prop_format_number(double x, bool lua_syntax, char *buf, size_t size);
/* Comma-separated enum names ("bdf, adams, rk4") into buf. */
void prop_enum_list(const PropDef *def, char *buf, size_t size);

/* true if name matches [A-Za-z_][A-Za-z0-9_]* and is at most THING_NAME_MAX bytes. */
bool thing_name_valid(const char *name);

#endif
