/* Scene reader: runs a Lua 5.4 scene chunk in a sandbox and turns the table it returns into a
 * thing database (docs/scene-format.md).
 *
 * Sandbox: a fresh lua_State per load, with an allocator that refuses to grow past
 * SceneLimits.max_memory and a count hook that stops the chunk after max_instructions VM
 * instructions. Only the base, math, string, table and utf8 libraries are opened, and the base
 * functions that reach files or compile code (dofile, loadfile, load, print, collectgarbage) and
 * string.dump are removed; setmetatable refuses __gc (finalisers run with hooks off, out of the
 * budget's reach); chunks are loaded in text mode only; the string pattern functions refuse calls
 * whose backtracking could outlast the budget, which cannot interrupt C. math.random is seeded
 * with 0 so a scene builds the same database every time. Things nest at most THING_MAX_DEPTH
 * levels (deeper ones would have truncated paths).
 *
 * Conversion runs inside lua_pcall too (the Lua API raises on memory errors), reading tables
 * with raw accesses only, so no scene code runs while the database is built. Every error
 * unwinds to scene_load_string, which destroys the half-built database: nothing escapes.
 *
 * Lines: Lua reports lines for its own errors, except memory errors: a line hook keeps the
 * current line for those (it costs about a factor 2 on a runaway loop, nothing on a scene). Schema
 * errors (a negative mass) are found after the chunk ran, when tables no longer carry lines, so the
 * line is recovered from the source text: a small lexer (strings and comments aware) finds the
 * table holding `name = "bar"` and the `key =` inside it at the same nesting level.
 */
#include "scene_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "issim/contact.h"

/* VM instructions between two calls of the count hook. */
#define SCENE_HOOK_STEP 1000

SceneLimits scene_limits_default(void) {
    return (SceneLimits){.max_memory = 64u << 20, .max_instructions = 100000000L};
}

/* ===== Source lines ===== */

typedef enum TokKind { TK_LBRACE, TK_RBRACE, TK_NAME, TK_STRING, TK_ASSIGN } TokKind;

typedef struct SrcTok {
    TokKind kind;
    int line;
    int parent;       /* index of the enclosing '{' token, -1 at top level */
    int match;        /* TK_LBRACE: index of the matching '}' (ntoks if unclosed) */
    const char *text; /* TK_NAME: the name; TK_STRING: the contents, escapes not decoded */
    size_t len;
} SrcTok;

typedef struct SceneLoad {
    const char *chunkname; /* path shown in messages */
    const char *source;
    size_t size;
    /* Limits. */
    size_t max_memory, used;
    bool refused;
    long max_instructions, executed;
    int hook_step;
    int last_line;  /* line being executed (line hook) */
    int error_line; /* line found by the message handler */
    int depth;      /* nesting of the thing being loaded: 1 at top level */
    /* Result. */
    ThingDb *db;
    IssimStatus status; /* status of a conversion error raised with scene_fail */
    /* Lexed source, built on the first schema error. */
    SrcTok *toks;
    int ntoks;
    bool lexed;
    int root; /* '{' of the returned table, -1 if not found */
    /* Scene parameters: the overrides given, which of them param() asked for, and the names the
     * scene declared (for the message when an override names none of them). */
    const char *const *params;
    int param_count;
    bool param_used[SCENE_MAX_PARAMS];
    char declared[SCENE_MAX_PARAMS][64];
    int declared_count;
} SceneLoad;

static bool is_name_start(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Length of a long bracket opener "[==[" at p (0 if none); *level receives the '=' count. */
static size_t long_bracket(const char *p, const char *end, int *level) {
    if (p >= end || *p != '[')
        return 0;
    const char *q = p + 1;
    while (q < end && *q == '=')
        q++;
    if (q >= end || *q != '[')
        return 0;
    *level = (int)(q - p - 1);
    return (size_t)(q - p) + 1;
}

/* Skips to just after the closing "]==]" of the given level, counting lines. */
static const char *skip_long(const char *p, const char *end, int level, int *line) {
    for (; p < end; p++) {
        if (*p == '\n')
            (*line)++;
        if (*p == ']') {
            const char *q = p + 1;
            while (q < end && *q == '=')
                q++;
            if (q < end && *q == ']' && q - p - 1 == level)
                return q + 1;
        }
    }
    return end;
}

static bool push_tok(SceneLoad *s, int *cap, SrcTok tok) {
    if (s->ntoks == *cap) {
        int next = *cap ? *cap * 2 : 256;
        SrcTok *toks = realloc(s->toks, (size_t)next * sizeof(SrcTok));
        if (!toks)
            return false;
        s->toks = toks;
        *cap = next;
    }
    s->toks[s->ntoks++] = tok;
    return true;
}

/* Tokenises the source into the few tokens the line search needs. On out of memory the token
 * list is simply shorter: lines fall back to 1. */
static void lex_source(SceneLoad *s) {
    if (s->lexed)
        return;
    s->lexed = true;
    s->root = -1;
    const char *p = s->source, *end = s->source + s->size;
    int line = 1, cap = 0, stack[256], depth = 0;
    while (p < end) {
        char c = *p;
        int parent = depth > 0 ? stack[depth - 1] : -1;
        int level;
        size_t n;
        if (c == '\n') {
            line++;
            p++;
        } else if (c == '-' && p + 1 < end && p[1] == '-') {
            p += 2;
            if ((n = long_bracket(p, end, &level)) > 0) {
                p = skip_long(p + n, end, level, &line);
            } else {
                while (p < end && *p != '\n')
                    p++;
            }
        } else if ((n = long_bracket(p, end, &level)) > 0) {
            int start_line = line;
            const char *body = p + n;
            p = skip_long(body, end, level, &line);
            size_t len =
                (size_t)(p - body) >= (size_t)level + 2 ? (size_t)(p - body) - level - 2 : 0;
            if (!push_tok(s, &cap, (SrcTok){TK_STRING, start_line, parent, 0, body, len}))
                return;
        } else if (c == '"' || c == '\'') {
            const char *body = ++p;
            while (p < end && *p != c && *p != '\n') {
                if (*p == '\\' && p + 1 < end) {
                    if (p[1] == '\n')
                        line++;
                    p++;
                }
                p++;
            }
            if (!push_tok(s, &cap, (SrcTok){TK_STRING, line, parent, 0, body, (size_t)(p - body)}))
                return;
            if (p < end && *p == c)
                p++;
        } else if (is_name_start(c)) {
            const char *name = p;
            while (p < end && is_name_char(*p))
                p++;
            if (!push_tok(s, &cap, (SrcTok){TK_NAME, line, parent, 0, name, (size_t)(p - name)}))
                return;
        } else if (c >= '0' && c <= '9') {
            while (p < end && (is_name_char(*p) || *p == '.' ||
                               ((*p == '+' || *p == '-') && strchr("eEpP", p[-1]))))
                p++;
        } else if (c == '{') {
            if (!push_tok(s, &cap, (SrcTok){TK_LBRACE, line, parent, -1, p, 1}))
                return;
            if (depth < 256)
                stack[depth++] = s->ntoks - 1;
            p++;
        } else if (c == '}') {
            if (!push_tok(s, &cap, (SrcTok){TK_RBRACE, line, parent, 0, p, 1}))
                return;
            if (depth > 0)
                s->toks[stack[--depth]].match = s->ntoks - 1;
            p++;
        } else if (c == '=' || c == '~' || c == '<' || c == '>') {
            if (p + 1 < end && p[1] == '=') {
                p += 2;
            } else {
                if (c == '=' && !push_tok(s, &cap, (SrcTok){TK_ASSIGN, line, parent, 0, p, 1}))
                    return;
                p++;
            }
        } else {
            p++;
        }
    }
    for (int i = 0; i < s->ntoks; i++)
        if (s->toks[i].kind == TK_LBRACE && s->toks[i].match < 0)
            s->toks[i].match = s->ntoks;
    /* The returned table: the last top-level "return {". */
    for (int i = 0; i + 1 < s->ntoks; i++)
        if (s->toks[i].kind == TK_NAME && s->toks[i].parent == -1 && s->toks[i].len == 6 &&
            memcmp(s->toks[i].text, "return", 6) == 0 && s->toks[i + 1].kind == TK_LBRACE)
            s->root = i + 1;
}

static bool tok_is(const SrcTok *t, TokKind kind, const char *text, size_t len) {
    return t->kind == kind && t->len == len && memcmp(t->text, text, len) == 0;
}

/* Token index of `key =` directly inside the table opened at token `table`, or -1. With
 * table -1: anywhere. */
static int find_key(const SceneLoad *s, int table, const char *key) {
    size_t len = strlen(key);
    int from = table >= 0 ? table + 1 : 0;
    int to = table >= 0 ? s->toks[table].match : s->ntoks;
    for (int i = from; i + 1 < to && i + 1 < s->ntoks; i++)
        if ((table < 0 || s->toks[i].parent == table) && tok_is(&s->toks[i], TK_NAME, key, len) &&
            s->toks[i + 1].kind == TK_ASSIGN)
            return i;
    return -1;
}

/* The '{' of the table value of `key = {` in the returned table (or anywhere), or -1. */
static int find_table_of_key(const SceneLoad *s, const char *key) {
    int i = s->root >= 0 ? find_key(s, s->root, key) : -1;
    if (i < 0)
        i = find_key(s, -1, key);
    return i >= 0 && i + 2 < s->ntoks && s->toks[i + 2].kind == TK_LBRACE ? i + 2 : -1;
}

/* The '{' of the thing table at a dotted path: the table holding `name = "<segment>"`, each
 * segment nested inside the previous one; the first inside `container` (a things or contacts
 * list) when that is known. Returns -1 if not found. */
static int find_thing_table(const SceneLoad *s, const char *path, int container) {
    int table = -1;
    int from = 0, to = s->ntoks;
    const char *seg = path;
    while (*seg) {
        size_t len = strcspn(seg, ".");
        int found = -1;
        for (int i = from; i + 2 < to; i++) {
            const SrcTok *t = &s->toks[i];
            if (t->parent < 0 || t->parent == table || !tok_is(t, TK_NAME, "name", 4) ||
                s->toks[i + 1].kind != TK_ASSIGN || !tok_is(&s->toks[i + 2], TK_STRING, seg, len))
                continue;
            if (table < 0 && container >= 0 && s->toks[t->parent].parent != container)
                continue;
            found = t->parent;
            break;
        }
        if (found < 0)
            return -1;
        table = found;
        from = table + 1;
        to = s->toks[table].match;
        seg += len;
        if (*seg == '.')
            seg++;
    }
    return table;
}

/* Where a problem in a table is reported. */
typedef enum SpotKind { SPOT_ROOT, SPOT_TABLE_KEY, SPOT_THING } SpotKind;

typedef struct Spot {
    SpotKind kind;
    const char *name;      /* SPOT_TABLE_KEY: "universe", "camera"; SPOT_THING: thing path */
    const char *container; /* SPOT_THING: "things" or "contacts" */
} Spot;

/* Best line for `key` (Nullable: the table itself) of the table at spot. */
static int spot_line(SceneLoad *s, const Spot *spot, const char *key) {
    lex_source(s);
    int table = -1, fallback = -1;
    switch (spot->kind) {
    case SPOT_ROOT:
        table = s->root;
        break;
    case SPOT_TABLE_KEY:
        table = find_table_of_key(s, spot->name);
        fallback = s->root >= 0 ? find_key(s, s->root, spot->name) : find_key(s, -1, spot->name);
        break;
    case SPOT_THING: {
        int container = find_table_of_key(s, spot->container);
        table = find_thing_table(s, spot->name, container);
        if (table < 0)
            fallback = container;
        break;
    }
    }
    if (table >= 0) {
        int k = key ? find_key(s, table, key) : -1;
        if (k < 0 && spot->kind == SPOT_THING)
            k = find_key(s, table, "name");
        return s->toks[k >= 0 ? k : table].line;
    }
    if (spot->kind == SPOT_ROOT && key) {
        int k = find_key(s, -1, key);
        if (k >= 0)
            return s->toks[k].line;
    }
    return fallback >= 0 ? s->toks[fallback].line : 1;
}

/* Where an error is reported, resolved to a line only when one is raised: finding a line scans
 * the source, and doing that for every property while loading made a large scene quadratic. */
typedef struct Place {
    const Spot *spot; /* NULL: line 1 */
    const char *key;  /* Nullable: the table itself */
} Place;

static Place place_at(const Spot *spot, const char *key) {
    return (Place){spot, key};
}

static const Place place_first_line = {NULL, NULL};

/* ===== Lua state: allocator, hook, message handler ===== */

static void *scene_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    SceneLoad *s = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        s->used -= old;
        return NULL;
    }
    /* Shrinking never fails (Lua relies on it). */
    if (nsize > old && nsize - old > s->max_memory - s->used) {
        s->refused = true;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p)
        s->used = s->used - old + nsize;
    return p;
}

static SceneLoad *scene_of(lua_State *L) {
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

static void scene_hook(lua_State *L, lua_Debug *ar) {
    SceneLoad *s = scene_of(L);
    if (ar->event == LUA_HOOKLINE) {
        s->last_line = ar->currentline;
        return;
    }
    s->executed += s->hook_step;
    if (s->executed < s->max_instructions)
        return;
    /* From now on every instruction raises, so a scene cannot swallow the error with pcall
     * and carry on. */
    s->hook_step = 1;
    lua_sethook(L, scene_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
    lua_pushfstring(L, "%s:%d: scene exceeded its instruction budget (%I instructions)",
                    s->chunkname, s->last_line > 0 ? s->last_line : 1,
                    (lua_Integer)s->max_instructions);
    lua_error(L);
}

/* Message handler of the protected calls: keeps the message, notes the line of the innermost
 * Lua function for messages that carry none (error("x", 0), error({})). */
static int scene_msgh(lua_State *L) {
    SceneLoad *s = scene_of(L);
    if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
        lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    else
        lua_pushvalue(L, 1);
    s->error_line = 0;
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "l", &ar) && ar.currentline > 0) {
            s->error_line = ar.currentline;
            break;
        }
    }
    return 1;
}

/* Writes "chunkname:line: message" to err. Lua's own messages already start with the chunk
 * name, possibly shortened to "...tail" (LUA_IDSIZE); those get the full name back. */
static IssimStatus scene_error(SceneLoad *s, IssimError *err, IssimStatus status, const char *msg,
                               int line) {
    size_t nlen = strlen(s->chunkname);
    const char *rest = NULL;
    if (strncmp(msg, s->chunkname, nlen) == 0 && msg[nlen] == ':' && msg[nlen + 1] >= '0' &&
        msg[nlen + 1] <= '9') {
        rest = msg + nlen;
    } else if (strncmp(msg, "...", 3) == 0) {
        const char *colon = strchr(msg + 3, ':');
        size_t tail = colon ? (size_t)(colon - msg - 3) : 0;
        if (colon && colon[1] >= '0' && colon[1] <= '9' && tail <= nlen &&
            memcmp(s->chunkname + nlen - tail, msg + 3, tail) == 0)
            rest = colon;
    }
    if (rest)
        return issim_error_set(err, status, "%s%s", s->chunkname, rest);
    return issim_error_set(err, status, "%s:%d: %s", s->chunkname, line > 0 ? line : 1, msg);
}

/* Raises a conversion error "chunkname:line: message". */
static void scene_fail(lua_State *L, SceneLoad *s, IssimStatus status, Place place, const char *fmt,
                       ...) __attribute__((format(printf, 5, 6), noreturn));
static void scene_fail(lua_State *L, SceneLoad *s, IssimStatus status, Place place, const char *fmt,
                       ...) {
    char msg[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    s->status = status;
    int line = place.spot ? spot_line(s, place.spot, place.key) : 1;
    lua_pushfstring(L, "%s:%d: %s", s->chunkname, line > 0 ? line : 1, msg);
    lua_error(L);
    abort(); /* not reached: lua_error does not return */
}

/* setmetatable without finalisers: Lua runs __gc metamethods with hooks disabled, so a looping
 * finaliser would escape the instruction budget. An object is only finalised if its metatable
 * has __gc when it is set, so checking here is enough. */
static int sandbox_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "__gc metamethods are not available in scenes");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* Lua's pattern matcher backtracks inside C, where the instruction budget's count hook never
 * runs: ('a*'):rep(20) .. 'c' against 40 a's takes longer than the universe's age. The sandbox
 * wraps the pattern functions and refuses a call whose worst case exceeds SCENE_PATTERN_MAX_STEPS
 * before it starts. The estimate: every start position (one if anchored), times up to n + 1
 * lengths for each variable repetition ('*', '+', '-', %b, back-reference %1), times 2 for each
 * optional item ('?'), times the pattern's length. */
#define SCENE_PATTERN_MAX_STEPS 1e8

typedef struct PatternShape {
    int repetitions; /* items whose match length varies with the subject */
    int optionals;   /* '?' items: matched or not */
    bool anchored;
} PatternShape;

/* End of the single-character class starting at p (Lua's lstrlib classend). */
static const char *pattern_class_end(const char *p, const char *end) {
    if (*p == '%')
        return p + 2 <= end ? p + 2 : end;
    if (*p == '[') {
        p++;
        if (p < end && *p == '^')
            p++;
        do { /* the first ']' of a set is a literal */
            if (p >= end)
                return end;
            if (*p++ == '%' && p < end)
                p++;
        } while (p < end && *p != ']');
        return p < end ? p + 1 : end;
    }
    return p + 1;
}

static PatternShape pattern_shape(const char *p, size_t len, bool can_anchor) {
    const char *end = p + len;
    PatternShape shape = {0, 0, can_anchor && len > 0 && *p == '^'};
    if (shape.anchored)
        p++;
    while (p < end) {
        if (*p == '(' || *p == ')') {
            p++;
        } else if (*p == '%' && p + 1 < end && p[1] == 'b') {
            shape.repetitions++;
            p = p + 4 <= end ? p + 4 : end;
        } else if (*p == '%' && p + 1 < end && p[1] == 'f') {
            p = pattern_class_end(p + 2, end);
        } else if (*p == '%' && p + 1 < end && p[1] >= '0' && p[1] <= '9') {
            shape.repetitions++;
            p += 2;
        } else {
            p = pattern_class_end(p, end);
            if (p < end && (*p == '*' || *p == '+' || *p == '-')) {
                shape.repetitions++;
                p++;
            } else if (p < end && *p == '?') {
                shape.optionals++;
                p++;
            }
        }
    }
    return shape;
}

/* Worst-case steps of matching a pattern of this shape and length against n bytes. */
static double pattern_cost(PatternShape shape, size_t pattern_len, size_t n) {
    double positions = (double)n + 1;
    double cost = (shape.anchored ? 1 : positions) * (double)(pattern_len + 1);
    for (int i = 0; i < shape.repetitions && cost <= SCENE_PATTERN_MAX_STEPS; i++)
        cost *= positions;
    for (int i = 0; i < shape.optionals && cost <= SCENE_PATTERN_MAX_STEPS; i++)
        cost *= 2;
    return cost;
}

/* string.find, match, gmatch and gsub, refusing calls whose worst case is too long. Upvalue 1:
 * the library function; upvalue 2: its name. */
static int sandbox_pattern_call(lua_State *L) {
    const char *name = lua_tostring(L, lua_upvalueindex(2));
    size_t n, len;
    luaL_checklstring(L, 1, &n);
    const char *pattern = luaL_checklstring(L, 2, &len);
    bool plain = strcmp(name, "find") == 0 && lua_toboolean(L, 4);
    if (!plain) {
        PatternShape shape = pattern_shape(pattern, len, strcmp(name, "gmatch") != 0);
        if (pattern_cost(shape, len, n) > SCENE_PATTERN_MAX_STEPS) {
            char msg[400]; /* lua_pushfstring has no %e */
            snprintf(msg, sizeof msg,
                     "string.%s: pattern too costly for a scene: %d repetition and %d optional "
                     "items against a %zu-byte subject could take more than %.0e steps, and a "
                     "pattern runs where the instruction budget cannot stop it (fixed limit; use "
                     "fewer repetitions, a shorter subject, or string.find(s, text, 1, true) for "
                     "plain text)",
                     name, shape.repetitions, shape.optionals, n, SCENE_PATTERN_MAX_STEPS);
            return luaL_error(L, "%s", msg);
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* Replaces the pattern functions of the string table at the top of the stack (also reached as
 * methods: the strings' metatable indexes the same table). */
static void sandbox_bound_patterns(lua_State *L) {
    static const char *const names[] = {"find", "match", "gmatch", "gsub"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        lua_getfield(L, -1, names[i]);
        lua_pushstring(L, names[i]);
        lua_pushcclosure(L, sandbox_pattern_call, 2);
        lua_setfield(L, -2, names[i]);
    }
}

/* param(name, default): the value given for the scene parameter `name` ("name=value" in
 * SceneLimits.params: issim run --param, issim sweep --grid), else default. */
static int scene_param(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    SceneLoad *s = ud;
    const char *name = luaL_checkstring(L, 1);
    lua_Number fallback = luaL_checknumber(L, 2);
    bool known = false;
    for (int i = 0; i < s->declared_count && !known; i++)
        known = strcmp(s->declared[i], name) == 0;
    if (!known && s->declared_count < SCENE_MAX_PARAMS)
        issim_strlcpy(s->declared[s->declared_count++], name, sizeof s->declared[0]);
    size_t len = strlen(name);
    for (int i = 0; i < s->param_count; i++) {
        const char *p = s->params[i];
        if (strncmp(p, name, len) != 0 || p[len] != '=')
            continue;
        char *end = NULL;
        double v = strtod(p + len + 1, &end);
        if (end == p + len + 1 || *end != '\0' || !isfinite(v))
            return luaL_error(L, "scene parameter %s: '%s' is not a finite number", name,
                              p + len + 1);
        s->param_used[i] = true;
        lua_pushnumber(L, v);
        return 1;
    }
    lua_pushnumber(L, fallback);
    return 1;
}

/* Overrides given for parameters the scene never declared: an error naming those it has. */
static IssimStatus check_params_used(const SceneLoad *s, IssimError *err) {
    for (int i = 0; i < s->param_count; i++) {
        if (s->param_used[i])
            continue;
        char names[512] = "";
        size_t n = 0;
        for (int j = 0; j < s->declared_count && n < sizeof names; j++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", j ? ", " : "",
                                  s->declared[j]);
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                               "%s: no scene parameter for '%s' (the scene's parameters: %s)",
                               s->chunkname, s->params[i], s->declared_count ? names : "none");
    }
    return ISSIM_OK;
}

static int open_sandbox(lua_State *L) {
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},        {LUA_MATHLIBNAME, luaopen_math},
        {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
        {LUA_UTF8LIBNAME, luaopen_utf8},
    };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    static const char *const removed[] = {"dofile",  "loadfile",       "load",
                                          "require", "collectgarbage", "print"};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, sandbox_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    lua_getglobal(L, LUA_STRLIBNAME);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    sandbox_bound_patterns(L);
    lua_pop(L, 1);
    lua_pushcfunction(L, scene_param);
    lua_setglobal(L, "param");
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, 0);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    return 0;
}

/* ===== Conversion: Lua values to properties ===== */

typedef struct Where {
    Spot spot;
    const char *what; /* "body 'bar'", "the universe", "camera" for messages */
} Where;

/* Raw t[key] pushed; t at absolute index. */
static int raw_field(lua_State *L, int t, const char *key) {
    lua_pushstring(L, key);
    return lua_rawget(L, t);
}

/* Number of entries of the table at idx, and whether they are exactly 1..n. */
static bool is_sequence(lua_State *L, int idx, lua_Integer *n) {
    idx = lua_absindex(L, idx);
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx), count = 0;
    bool ok = true;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        count++;
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > len)
            ok = false;
    }
    *n = len;
    return ok && count == len;
}

/* Reads a table of n numbers at idx into x; false if it is not exactly that. */
static bool read_numbers(lua_State *L, int idx, double *x, int n) {
    lua_Integer len;
    if (lua_type(L, idx) != LUA_TTABLE || !is_sequence(L, idx, &len) || len != n)
        return false;
    for (int i = 0; i < n; i++) {
        int type = lua_rawgeti(L, idx, i + 1);
        x[i] = lua_tonumber(L, -1);
        lua_pop(L, 1);
        if (type != LUA_TNUMBER)
            return false;
    }
    return true;
}

static const char *value_phrase(lua_State *L, int idx) {
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        return "a number";
    case LUA_TBOOLEAN:
        return "a boolean";
    case LUA_TSTRING:
        return "a string";
    case LUA_TTABLE:
        return "a table";
    case LUA_TNIL:
        return "nil";
    default:
        return luaL_typename(L, idx);
    }
}

/* Converts the value at idx to a property value of def's type. Strings go through the text
 * parser for every type, so "0 0 1" works where {0, 0, 1} does. */
static void lua_to_prop(lua_State *L, SceneLoad *s, int idx, const PropDef *def, const char *path,
                        Place place, PropValue *out) {
    int type = lua_type(L, idx);
    *out = (PropValue){.type = def->type};
    if (type == LUA_TSTRING) {
        size_t len;
        const char *text = lua_tolstring(L, idx, &len);
        if (strlen(text) != len)
            scene_fail(L, s, ISSIM_ERR_INVALID, place, "%s: the text contains a zero byte", path);
        IssimError parse_err;
        IssimStatus status = prop_parse_unvalidated(def, text, out, &parse_err);
        if (status != ISSIM_OK)
            scene_fail(L, s, status, place, "%s: %s", path, parse_err.message);
        return;
    }
    bool ok = false;
    switch (def->type) {
    case PROP_REAL:
        ok = type == LUA_TNUMBER;
        out->real = lua_tonumber(L, idx);
        break;
    case PROP_INT:
        if (lua_isinteger(L, idx)) {
            out->integer = lua_tointeger(L, idx);
            ok = true;
        } else if (type == LUA_TNUMBER) {
            double d = lua_tonumber(L, idx);
            ok = d >= -9.2e18 && d <= 9.2e18 && d == floor(d);
            out->integer = ok ? (int64_t)d : 0;
        }
        break;
    case PROP_BOOL:
        ok = type == LUA_TBOOLEAN;
        out->boolean = lua_toboolean(L, idx);
        break;
    case PROP_ENUM:
    case PROP_STRING:
        break; /* strings only: handled above */
    case PROP_VEC3:
        ok = read_numbers(L, idx, out->vec, 3);
        break;
    case PROP_QUAT:
        ok = read_numbers(L, idx, out->vec, 4);
        break;
    case PROP_POINTS: {
        lua_Integer n;
        if (type != LUA_TTABLE || !is_sequence(L, idx, &n))
            break;
        if (n > PROP_MAX_POINTS)
            scene_fail(L, s, ISSIM_ERR_RANGE, place, "%s: %lld points is too many: at most %d",
                       path, (long long)n, PROP_MAX_POINTS);
        ok = true;
        for (int i = 0; i < n && ok; i++) {
            double x[3];
            lua_rawgeti(L, idx, i + 1);
            ok = read_numbers(L, -1, x, 3);
            lua_pop(L, 1);
            out->points[i] = (Vec3){x[0], x[1], x[2]};
            if (!ok)
                scene_fail(L, s, ISSIM_ERR_INVALID, place,
                           "%s: point %d is not a table of 3 numbers {x, y, z}", path, i + 1);
        }
        out->point_count = (int)n;
        break;
    }
    }
    if (!ok) {
        const char *detail = "";
        if (type == LUA_TTABLE && (def->type == PROP_VEC3 || def->type == PROP_QUAT))
            detail = def->type == PROP_VEC3 ? " (exactly 3 numbers)" : " (exactly 4 numbers)";
        scene_fail(L, s, ISSIM_ERR_INVALID, place, "%s: expected %s%s, got %s", path,
                   prop_type_phrase(def->type), detail, value_phrase(L, idx));
    }
}

/* Sets property prop of thing id from the Lua value at idx. */
static void set_from_lua(lua_State *L, SceneLoad *s, ThingId id, int prop, int idx, Place place) {
    char path[320];
    const PropDef *def = thing_prop_def(s->db, id, prop);
    thing_path(s->db, id, path, sizeof path);
    size_t used = strlen(path);
    snprintf(path + used, sizeof path - used, ".%s", def->name);
    PropValue v;
    lua_to_prop(L, s, idx, def, path, place, &v);
    IssimError e;
    IssimStatus status = thing_set(s->db, id, prop, &v, false, &e);
    if (status != ISSIM_OK)
        scene_fail(L, s, status, place, "%s", e.message);
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool in_list(const char *key, const char *const *list) {
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

/* Sets every property of thing id found in the table at t; keys in `extra` are handled by the
 * caller; any other key is an error (reported in alphabetical order, so the message does not
 * depend on Lua's table order). */
static void apply_props(lua_State *L, SceneLoad *s, int t, ThingId id, const Where *where,
                        const char *const *extra) {
    int count = thing_prop_count(s->db, id);
    for (int i = 0; i < count; i++) {
        const PropDef *def = thing_prop_def(s->db, id, i);
        if (raw_field(L, t, def->name) != LUA_TNIL)
            set_from_lua(L, s, id, i, lua_gettop(L), place_at(&where->spot, def->name));
        lua_pop(L, 1);
    }
    const char *unknown = NULL;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&where->spot, NULL),
                       "unexpected %s key in %s: properties are given as name = value",
                       lua_isinteger(L, -1) ? "array (integer)" : luaL_typename(L, -1),
                       where->what);
        }
        const char *key = lua_tostring(L, -1);
        if (thing_prop_find(s->db, id, key) < 0 && !in_list(key, extra) &&
            (!unknown || compare_strings(&key, &unknown) < 0))
            unknown = key; /* stays valid: the key is anchored in the table */
    }
    if (unknown) {
        char known[400];
        thing_prop_list(s->db, id, known, sizeof known);
        scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&where->spot, unknown),
                   "unknown property '%s' of %s; known: %s", unknown, where->what, known);
    }
}

static void check_sequence(lua_State *L, SceneLoad *s, int idx, const char *what, Place place) {
    lua_Integer n;
    if (lua_type(L, idx) != LUA_TTABLE)
        scene_fail(L, s, ISSIM_ERR_INVALID, place, "%s must be a list {...}, got %s", what,
                   value_phrase(L, idx));
    if (!is_sequence(L, idx, &n))
        scene_fail(L, s, ISSIM_ERR_INVALID, place,
                   "%s must be a list {...} with entries 1..n and no named keys", what);
}

static void load_thing(lua_State *L, SceneLoad *s, int t, ThingId parent, const char *container,
                       lua_Integer position);

/* Loads the list at idx (things or contacts) under parent. */
static void load_list(lua_State *L, SceneLoad *s, int idx, ThingId parent, const char *container,
                      const char *what, Place place) {
    idx = lua_absindex(L, idx);
    check_sequence(L, s, idx, what, place);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_type(L, -1) != LUA_TTABLE)
            scene_fail(L, s, ISSIM_ERR_INVALID, place, "%s[%lld] must be a table, got %s", what,
                       (long long)i, value_phrase(L, -1));
        load_thing(L, s, lua_gettop(L), parent, container, i);
        lua_pop(L, 1);
    }
}

static void load_thing(lua_State *L, SceneLoad *s, int t, ThingId parent, const char *container,
                       lua_Integer position) {
    /* Each nesting level holds a few values on the Lua stack, and a C function is only promised
     * LUA_MINSTACK slots: without growing it, deep scenes write past the stack's end. */
    luaL_checkstack(L, 16, "scene things nested too deep");
    bool is_contact_list = strcmp(container, "contacts") == 0;
    char parent_path[256] = "";
    if (!thing_id_is_null(parent))
        thing_path(s->db, parent, parent_path, sizeof parent_path);
    Spot list_spot = {SPOT_TABLE_KEY, container, NULL};
    Place list_line = place_at(&list_spot, NULL);

    if (raw_field(L, t, "name") != LUA_TSTRING)
        scene_fail(L, s, ISSIM_ERR_INVALID, list_line, "%s%s%s[%lld] needs a name = \"...\"",
                   parent_path, parent_path[0] ? "." : "", container, (long long)position);
    const char *name = lua_tostring(L, -1); /* anchored in t */
    lua_pop(L, 1);

    char path[320];
    snprintf(path, sizeof path, "%s%s%s", parent_path, parent_path[0] ? "." : "", name);
    Spot spot = {SPOT_THING, path, parent_path[0] ? "things" : container};

    ThingKind kind = is_contact_list ? THING_CONTACT_PAIR : THING_RIGID_BODY;
    int kind_type = raw_field(L, t, "kind");
    if (kind_type == LUA_TNIL && !is_contact_list)
        scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&spot, "name"),
                   "%s needs a kind: body, obstacle, user, group or contact", path);
    if (kind_type != LUA_TNIL) {
        const char *text = kind_type == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int parsed = vocabulary_parse(thing_kind_names, THING_KIND_COUNT, text);
        if (parsed >= 0)
            kind = (ThingKind)parsed;
        if (parsed < 0 || kind == THING_UNIVERSE || (is_contact_list && kind != THING_CONTACT_PAIR))
            scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&spot, "kind"),
                       "%s: kind must be %s, got %s%s%s", path,
                       is_contact_list ? "contact (or absent) in contacts"
                                       : "body, obstacle, user, group or contact",
                       kind_type == LUA_TSTRING ? "'" : "",
                       kind_type == LUA_TSTRING ? text : value_phrase(L, -1),
                       kind_type == LUA_TSTRING ? "'" : "");
    }
    lua_pop(L, 1);

    IssimError e;
    ThingId id = thingdb_add(s->db, name, kind, parent, &e);
    if (thing_id_is_null(id))
        scene_fail(L, s, e.status, place_at(&spot, "name"), "%s", e.message);

    char what[360];
    snprintf(what, sizeof what, "%s '%s'", thing_kind_name(kind), path);
    Where where = {spot, what};
    static const char *const extra_thing[] = {"name", "kind", "things", NULL};
    static const char *const extra_contact[] = {"name", "kind", "things", "materials", NULL};

    if (kind == THING_CONTACT_PAIR) {
        if (contact_pair_add_props(s->db, id, &e) != ISSIM_OK)
            scene_fail(L, s, e.status, place_at(&spot, "name"), "%s: %s", path, e.message);
        if (raw_field(L, t, "materials") != LUA_TNIL) {
            Place place = place_at(&spot, "materials");
            lua_Integer n;
            int m = lua_gettop(L);
            bool ok = lua_type(L, m) == LUA_TTABLE && is_sequence(L, m, &n) && n == 2;
            for (int i = 1; ok && i <= 2; i++) {
                ok = lua_rawgeti(L, m, i) == LUA_TSTRING;
                lua_pop(L, 1);
            }
            if (!ok)
                scene_fail(L, s, ISSIM_ERR_INVALID, place,
                           "%s.materials: expected two material names {\"a\", \"b\"}", path);
            for (int i = 1; i <= 2; i++) {
                const char *prop = i == 1 ? "material_a" : "material_b";
                if (raw_field(L, t, prop) != LUA_TNIL)
                    scene_fail(L, s, ISSIM_ERR_INVALID, place,
                               "%s: give either materials or %s, not both", path, prop);
                lua_pop(L, 1);
                lua_rawgeti(L, m, i);
                set_from_lua(L, s, id, thing_prop_find(s->db, id, prop), lua_gettop(L), place);
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    apply_props(L, s, t, id, &where, kind == THING_CONTACT_PAIR ? extra_contact : extra_thing);

    if (raw_field(L, t, "things") != LUA_TNIL) {
        if (s->depth >= THING_MAX_DEPTH)
            scene_fail(L, s, ISSIM_ERR_RANGE, place_at(&spot, "things"),
                       "%s: things are nested more than %d levels deep; the limit is fixed "
                       "(a thing path names at most %d levels)",
                       path, THING_MAX_DEPTH, THING_MAX_DEPTH);
        char list_what[340];
        snprintf(list_what, sizeof list_what, "%s.things", path);
        s->depth++;
        load_list(L, s, -1, id, "things", list_what, place_at(&spot, "things"));
        s->depth--;
    }
    lua_pop(L, 1);
}

/* Sets universe property `prop` from a top-level or camera spelling at idx, refusing to have it
 * twice (universe = {camera_fov = ...} and camera = {fov = ...}). */
static void set_alias(lua_State *L, SceneLoad *s, ThingId universe, int universe_table,
                      const SceneAlias *alias, int idx, Place place) {
    if (universe_table) {
        if (raw_field(L, universe_table, alias->prop) != LUA_TNIL)
            scene_fail(L, s, ISSIM_ERR_INVALID, place, "%s%s%s and universe.%s are both given",
                       alias->table ? alias->table : "", alias->table ? "." : "", alias->key,
                       alias->prop);
        lua_pop(L, 1);
    }
    set_from_lua(L, s, universe, thing_prop_find(s->db, universe, alias->prop), idx, place);
}

/* Whether key is one of the camera table's keys (the "camera" rows of scene_aliases). */
static bool is_camera_key(const char *key) {
    for (size_t i = 0; i < sizeof scene_aliases / sizeof scene_aliases[0]; i++)
        if (scene_aliases[i].table && strcmp(scene_aliases[i].table, "camera") == 0 &&
            strcmp(scene_aliases[i].key, key) == 0)
            return true;
    return false;
}

/* Protected: builds s->db from the table at index 1. */
static int build_scene(lua_State *L) {
    SceneLoad *s = scene_of(L);
    Spot root = {SPOT_ROOT, NULL, NULL};
    if (lua_type(L, 1) != LUA_TTABLE) {
        scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&root, NULL),
                   "the scene must return a table {...}, got %s", value_phrase(L, 1));
    }
    IssimError e;
    s->db = thingdb_create();
    if (!s->db)
        scene_fail(L, s, ISSIM_ERR_NOMEM, place_first_line, "out of memory");

    /* Unknown top-level keys first: a misspelt "thing" should not surface as "no things". */
    static const char *const top_keys[] = {"name",   "description", "universe", "camera",
                                           "record", "things",      "contacts", NULL};
    const char *unknown = NULL;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&root, NULL),
                       "unexpected %s key in the scene table; it takes only named keys (%s)",
                       lua_isinteger(L, -1) ? "array (integer)" : luaL_typename(L, -1),
                       SCENE_TOP_KEYS);
        const char *key = lua_tostring(L, -1);
        if (!in_list(key, top_keys) && (!unknown || compare_strings(&key, &unknown) < 0))
            unknown = key;
    }
    if (unknown)
        scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&root, unknown),
                   "unknown top-level key '%s'; known: %s", unknown, SCENE_TOP_KEYS);

    ThingId universe = thingdb_add(s->db, "universe", THING_UNIVERSE, thing_id_null(), &e);
    if (thing_id_is_null(universe))
        scene_fail(L, s, e.status, place_first_line, "%s", e.message);
    Spot uspot = {SPOT_TABLE_KEY, "universe", NULL};
    int universe_table = 0;
    if (raw_field(L, 1, "universe") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TTABLE)
            scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&root, "universe"),
                       "universe must be a table {...}, got %s", value_phrase(L, -1));
        universe_table = lua_gettop(L);
        Where where = {uspot, "the universe"};
        apply_props(L, s, universe_table, universe, &where, NULL);
    }

    size_t n_alias = sizeof scene_aliases / sizeof scene_aliases[0];
    for (size_t i = 0; i < n_alias; i++) {
        const SceneAlias *a = &scene_aliases[i];
        if (a->table || strcmp(a->key, "record") == 0)
            continue;
        if (raw_field(L, 1, a->key) != LUA_TNIL)
            set_alias(L, s, universe, universe_table, a, lua_gettop(L), place_at(&root, a->key));
        lua_pop(L, 1);
    }

    if (raw_field(L, 1, "record") != LUA_TNIL) {
        Place place = place_at(&root, "record");
        int r = lua_gettop(L);
        const SceneAlias *alias = NULL;
        for (size_t i = 0; i < n_alias; i++)
            if (!scene_aliases[i].table && strcmp(scene_aliases[i].key, "record") == 0)
                alias = &scene_aliases[i];
        if (lua_type(L, r) == LUA_TTABLE) {
            /* A list of variable names: joined with commas. */
            check_sequence(L, s, r, "record", place);
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            lua_Integer n = (lua_Integer)lua_rawlen(L, r);
            for (lua_Integer i = 1; i <= n; i++) {
                if (lua_rawgeti(L, r, i) != LUA_TSTRING)
                    scene_fail(L, s, ISSIM_ERR_INVALID, place,
                               "record[%lld] must be a variable name string such as "
                               "\"bar.pos.z\"",
                               (long long)i);
                lua_pop(L, 1);
                if (i > 1)
                    luaL_addchar(&b, ',');
                lua_rawgeti(L, r, i);
                luaL_addvalue(&b);
            }
            luaL_pushresult(&b);
            set_alias(L, s, universe, universe_table, alias, lua_gettop(L), place);
            lua_pop(L, 1);
        } else {
            set_alias(L, s, universe, universe_table, alias, r, place);
        }
    }
    lua_pop(L, 1);

    if (raw_field(L, 1, "camera") != LUA_TNIL) {
        int c = lua_gettop(L);
        Spot cspot = {SPOT_TABLE_KEY, "camera", NULL};
        if (lua_type(L, c) != LUA_TTABLE)
            scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&root, "camera"),
                       "camera must be a table {eye = ..., target = ..., fov = ...}, got %s",
                       value_phrase(L, c));
        for (size_t i = 0; i < n_alias; i++) {
            const SceneAlias *a = &scene_aliases[i];
            if (!a->table)
                continue;
            if (raw_field(L, c, a->key) != LUA_TNIL)
                set_alias(L, s, universe, universe_table, a, lua_gettop(L),
                          place_at(&cspot, a->key));
            lua_pop(L, 1);
        }
        lua_pushnil(L);
        while (lua_next(L, c)) {
            lua_pop(L, 1);
            const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            if (!key || !is_camera_key(key))
                scene_fail(L, s, ISSIM_ERR_INVALID, place_at(&cspot, key),
                           "unknown camera key%s%s%s; known: eye, target, fov, follow, up",
                           key ? " '" : "", key ? key : "", key ? "'" : "");
        }
    }
    lua_pop(L, 1);

    if (raw_field(L, 1, "things") != LUA_TNIL)
        load_list(L, s, -1, thing_id_null(), "things", "things", place_at(&root, "things"));
    lua_pop(L, 1);
    if (raw_field(L, 1, "contacts") != LUA_TNIL)
        load_list(L, s, -1, thing_id_null(), "contacts", "contacts", place_at(&root, "contacts"));
    lua_pop(L, 1);
    if (universe_table)
        lua_pop(L, 1);
    return 0;
}

/* ===== Entry points ===== */

IssimStatus scene_load_string(const char *chunkname, const char *source, size_t size,
                              const SceneLimits *limits, ThingDb **out, IssimError *err) {
    *out = NULL;
    SceneLimits lim = scene_limits_default();
    if (limits && limits->max_memory > 0)
        lim.max_memory = limits->max_memory;
    if (limits && limits->max_instructions > 0)
        lim.max_instructions = limits->max_instructions;
    SceneLoad s = {
        .chunkname = chunkname ? chunkname : "scene",
        .source = source,
        .size = size,
        .max_memory = lim.max_memory,
        .max_instructions = lim.max_instructions,
        .hook_step =
            lim.max_instructions < SCENE_HOOK_STEP ? (int)lim.max_instructions : SCENE_HOOK_STEP,
        .status = ISSIM_OK,
        .root = -1,
        .depth = 1,
        .params = limits ? limits->params : NULL,
        .param_count = limits && limits->params ? limits->param_count : 0,
    };
    if (s.param_count > SCENE_MAX_PARAMS)
        return issim_error_set(err, ISSIM_ERR_RANGE, "%s: %d scene parameters given (at most %d)",
                               s.chunkname, s.param_count, SCENE_MAX_PARAMS);
    lua_State *L = lua_newstate(scene_alloc, &s);
    if (!L)
        return issim_error_set(err, ISSIM_ERR_NOMEM,
                               "%s:1: cannot create the Lua state (memory limit %zu bytes)",
                               s.chunkname, s.max_memory);
    IssimStatus status = ISSIM_OK;
    lua_pushcfunction(L, scene_msgh);
    int msgh = lua_gettop(L);

    char *chunk = malloc(strlen(s.chunkname) + 2);
    if (!chunk) {
        status = issim_error_set(err, ISSIM_ERR_NOMEM, "%s:1: out of memory", s.chunkname);
        goto done;
    }
    chunk[0] = '@';
    strcpy(chunk + 1, s.chunkname);

    lua_pushcfunction(L, open_sandbox);
    int rc = lua_pcall(L, 0, 0, msgh);
    if (rc == LUA_OK)
        rc = luaL_loadbufferx(L, source, size, chunk, "t");
    if (rc == LUA_OK) {
        lua_sethook(L, scene_hook, LUA_MASKCOUNT | LUA_MASKLINE, s.hook_step);
        rc = lua_pcall(L, 0, 1, msgh);
    }
    if (rc == LUA_OK) {
        lua_pushcfunction(L, build_scene);
        lua_insert(L, -2);
        s.error_line = 0;
        rc = lua_pcall(L, 1, 0, msgh);
    }
    free(chunk);
    if (rc != LUA_OK) {
        if (rc == LUA_ERRMEM && s.refused) {
            status = issim_error_set(err, ISSIM_ERR_NOMEM,
                                     "%s:%d: scene exceeded its memory limit of %zu bytes "
                                     "(%.3g MiB)",
                                     s.chunkname, s.last_line > 0 ? s.last_line : 1, s.max_memory,
                                     (double)s.max_memory / (1 << 20));
        } else {
            const char *msg = lua_tostring(L, -1);
            IssimStatus st = rc == LUA_ERRMEM       ? ISSIM_ERR_NOMEM
                             : s.status != ISSIM_OK ? s.status
                                                    : ISSIM_ERR_INVALID;
            status = scene_error(&s, err, st, msg ? msg : "unknown error", s.error_line);
        }
    }
done:
    lua_close(L);
    if (status == ISSIM_OK)
        status = check_params_used(&s, err);
    if (status == ISSIM_OK) {
        *out = s.db;
    } else {
        thingdb_destroy(s.db);
    }
    free(s.toks);
    return status;
}

/* Scene files are read whole: only regular files, at most SCENE_FILE_MAX_BYTES, opened without
 * blocking (a device such as /dev/zero grew memory without bound, a FIFO nobody writes hung
 * validation). */
#define SCENE_FILE_MAX_BYTES (64ll << 20)

static IssimStatus read_scene_file(const char *path, char **text, size_t *size, IssimError *err) {
    return issim_read_file(path, SCENE_FILE_MAX_BYTES, "scene", text, size, err);
}

IssimStatus scene_load_file(const char *path, const SceneLimits *limits, ThingDb **out,
                            IssimError *err) {
    *out = NULL;
    char *text = NULL;
    size_t size = 0;
    IssimStatus read = read_scene_file(path, &text, &size, err);
    if (read != ISSIM_OK)
        return read;
    IssimStatus status = scene_load_string(path, text, size, limits, out, err);
    free(text);
    return status;
}
