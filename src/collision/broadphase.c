/* Broad phase ("wide mode" of the collision manager, 000 App. B.4.3): a dynamic AABB tree with
 * fattened leaf boxes, after Box2D's b2DynamicTree (Catto, v2.4; "Dynamic Bounding Volume
 * Hierarchies", GDC 2019) and Ericson, Real-Time Collision Detection, ch. 6 (BVHs).
 *
 * Each proxy is a leaf holding its box enlarged by fat_margin on every side, so the small
 * motions of a resting or slowly moving body leave the tree alone: broadphase_move only
 * reinserts a leaf when the new box leaves the fat box. Insertion picks the sibling by the
 * surface-area heuristic (the branch-and-bound descent of Box2D v2.4: the cost of a new parent
 * at a node against the least cost of going down either child), and every ancestor on the way
 * back up is rebalanced by a single AVL-like rotation (Box2D's Balance), which keeps the height
 * near log2 of the proxy count whatever the insertion order.
 *
 * Nodes live in one pool that doubles when full, with freed nodes on a free list threaded
 * through the parent field. A proxy id is its leaf's index and never changes while the proxy
 * lives. Reinsertion frees one internal node and takes one back, so a move never allocates.
 *
 * Unbounded proxies. A half-space gets bounds of 1e30 (shape_aabb). Inside the tree such a box
 * breaks the surface-area heuristic: every subtree containing it has the same astronomical
 * area, growth next to it rounds to zero, and new leaves would be steered into that subtree
 * whatever their position. Boxes wider than BP_HUGE on any axis are therefore kept in a short
 * side list, tested directly against every proxy (there are a handful: floors and walls).
 *
 * Pairs. The set of pairs whose fat boxes overlap changes only when a fat box does (an add, a
 * remove, a reinsertion), so it is kept, sorted by (user_a, user_b), between calls, as Box2D
 * keeps its contacts alive until the fat boxes part. Proxies whose fat box changed since the
 * last call are "dirty" (a list with a slot index in each node, so a removal takes its entry
 * out in O(1)). A call with nothing dirty replays the kept list; with a few dirty proxies it
 * drops the kept pairs that involve them or a removed proxy, queries the tree with each dirty
 * fat box for its new pairs (a pair of two dirty proxies once, from the lower proxy), sorts
 * those and merges them in. When many proxies are dirty (the first call, an explosion) the list
 * is rebuilt: every proxy in increasing user order queries the tree and keeps its partners of
 * larger user, sorted, which yields the whole list in order without a global sort. A resting
 * pile therefore costs the replay of its pairs, not a tree query per body. Each pair reaches
 * the callback once (users shared by several proxies are merged). All buffers belong to the
 * broad phase and only grow; the dirty list is sized with the node pool, so moves never
 * allocate. Sorting is a merge sort through an owned scratch buffer (glibc's qsort may malloc).
 *
 * Threading: one thread at a time per BroadPhase (the collision world's owner). */
#include "issim/arena.h"
#include "issim/collision.h"

#include <stdlib.h>
#include <string.h>

#define BP_NULL (-1)
/* A box wider than this (m) on any axis is "unbounded": kept out of the tree (see above). */
#define BP_HUGE 1e12

typedef struct BpNode {
    Aabb box;   /* leaf: the fat box; internal: the union of the children's boxes */
    int parent; /* free node: the next free node */
    int child1; /* BP_NULL for a leaf */
    int child2;
    int height; /* leaf 0, free -1 */
    int user;
    int side_slot;  /* unbounded leaf: its index in side[]; BP_NULL for tree nodes */
    int dirty_slot; /* leaf whose fat box changed since the last pairs: index in dirty[] */
} BpNode;

typedef struct BpPair {
    int user_a, user_b; /* user_a < user_b */
    int proxy_a, proxy_b;
} BpPair;

struct BroadPhase {
    double fat_margin;
    BpNode *nodes; /* capacity */
    int capacity;
    int used;
    int free_list;
    int root;
    int proxy_count;
    int *side; /* side_count: unbounded leaves */
    int side_count, side_cap;
    int *dirty; /* dirty_count; dirty_cap >= capacity */
    int dirty_count, dirty_cap;
    bool removed;     /* a proxy was removed since the last pairs */
    bool cache_valid; /* cache holds the pairs as of the last call */
    BpPair *cache;    /* cache_count, sorted by (user_a, user_b, proxy_a, proxy_b) */
    int cache_count, cache_cap;
    BpPair *merged; /* merge target, swapped with cache; scratch of sort_pairs */
    int merged_cap;
    BpPair *fresh; /* new pairs of the dirty proxies */
    int fresh_count, fresh_cap;
    BpPair *order; /* proxy_count: (user, 0, proxy, 0) sorted; valid unless order_dirty */
    int order_cap;
    bool order_dirty;
    int *hits; /* leaves found by one query */
    int hits_cap;
    int *stack; /* query stack, stack_cap */
    int stack_cap;
};

/* ===== Boxes ===== */

static inline Aabb aabb_union(Aabb a, Aabb b) {
    return (Aabb){{fmin(a.min.x, b.min.x), fmin(a.min.y, b.min.y), fmin(a.min.z, b.min.z)},
                  {fmax(a.max.x, b.max.x), fmax(a.max.y, b.max.y), fmax(a.max.z, b.max.z)}};
}

static inline double aabb_area(Aabb a) {
    double dx = a.max.x - a.min.x, dy = a.max.y - a.min.y, dz = a.max.z - a.min.z;
    return 2.0 * (dx * dy + dy * dz + dz * dx);
}

static inline bool aabb_contains(Aabb outer, Aabb inner) {
    return outer.min.x <= inner.min.x && outer.min.y <= inner.min.y && outer.min.z <= inner.min.z &&
           inner.max.x <= outer.max.x && inner.max.y <= outer.max.y && inner.max.z <= outer.max.z;
}

static inline bool aabb_overlap(Aabb a, Aabb b) {
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
           a.min.z <= b.max.z && b.min.z <= a.max.z;
}

static inline Aabb aabb_grow(Aabb a, double r) {
    return (Aabb){{a.min.x - r, a.min.y - r, a.min.z - r}, {a.max.x + r, a.max.y + r, a.max.z + r}};
}

static bool aabb_huge(Aabb a) {
    return a.max.x - a.min.x > BP_HUGE || a.max.y - a.min.y > BP_HUGE ||
           a.max.z - a.min.z > BP_HUGE;
}

static inline bool is_leaf(const BpNode *n) {
    return n->child1 == BP_NULL;
}

/* ===== Node pool ===== */

/* Makes room for `extra` more nodes (doubling the pool), so that what follows cannot fail. */
static bool reserve_nodes(BroadPhase *bp, int extra) {
    if (bp->used + extra <= bp->capacity)
        return true;
    int cap = bp->capacity > 0 ? bp->capacity : 16;
    while (cap < bp->used + extra)
        cap *= 2;
    /* The dirty list first: it holds at most one entry per node. */
    int *dirty = realloc(bp->dirty, (size_t)cap * sizeof *dirty);
    if (!dirty)
        return false;
    bp->dirty = dirty;
    bp->dirty_cap = cap;
    BpNode *nodes = realloc(bp->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes)
        return false;
    /* The new nodes go on the free list in index order, ahead of any older free node. */
    for (int i = bp->capacity; i < cap; i++) {
        nodes[i] = (BpNode){.parent = i + 1 < cap ? i + 1 : bp->free_list,
                            .child1 = BP_NULL,
                            .child2 = BP_NULL,
                            .height = -1,
                            .user = -1,
                            .side_slot = BP_NULL,
                            .dirty_slot = BP_NULL};
    }
    bp->free_list = bp->capacity;
    bp->nodes = nodes;
    bp->capacity = cap;
    return true;
}

static int alloc_node(BroadPhase *bp) {
    ISSIM_ASSERT(bp->free_list != BP_NULL);
    int i = bp->free_list;
    BpNode *n = &bp->nodes[i];
    bp->free_list = n->parent;
    *n = (BpNode){.parent = BP_NULL,
                  .child1 = BP_NULL,
                  .child2 = BP_NULL,
                  .height = 0,
                  .user = -1,
                  .side_slot = BP_NULL,
                  .dirty_slot = BP_NULL};
    bp->used++;
    return i;
}

static void free_node(BroadPhase *bp, int i) {
    bp->nodes[i].parent = bp->free_list;
    bp->nodes[i].height = -1;
    bp->free_list = i;
    bp->used--;
}

/* ===== Tree ===== */

/* A single rotation at node a when its children's heights differ by more than one: the taller
 * child takes a's place and a takes the taller grandchild's. Returns the subtree's new root.
 * Box2D v2.4 b2DynamicTree::Balance, in 3D. */
static int balance(BroadPhase *bp, int ia) {
    BpNode *nodes = bp->nodes;
    BpNode *a = &nodes[ia];
    if (is_leaf(a) || a->height < 2)
        return ia;
    int ib = a->child1, ic = a->child2;
    BpNode *b = &nodes[ib], *c = &nodes[ic];
    int diff = c->height - b->height;
    if (diff > 1) { /* rotate c up */
        int i_f = c->child1, ig = c->child2;
        BpNode *f = &nodes[i_f], *g = &nodes[ig];
        c->child1 = ia;
        c->parent = a->parent;
        a->parent = ic;
        if (c->parent != BP_NULL) {
            if (nodes[c->parent].child1 == ia)
                nodes[c->parent].child1 = ic;
            else
                nodes[c->parent].child2 = ic;
        } else {
            bp->root = ic;
        }
        if (f->height > g->height) {
            c->child2 = i_f;
            a->child2 = ig;
            g->parent = ia;
            a->box = aabb_union(b->box, g->box);
            c->box = aabb_union(a->box, f->box);
            a->height = 1 + (b->height > g->height ? b->height : g->height);
            c->height = 1 + (a->height > f->height ? a->height : f->height);
        } else {
            c->child2 = ig;
            a->child2 = i_f;
            f->parent = ia;
            a->box = aabb_union(b->box, f->box);
            c->box = aabb_union(a->box, g->box);
            a->height = 1 + (b->height > f->height ? b->height : f->height);
            c->height = 1 + (a->height > g->height ? a->height : g->height);
        }
        return ic;
    }
    if (diff < -1) { /* rotate b up */
        int id = b->child1, ie = b->child2;
        BpNode *d = &nodes[id], *e = &nodes[ie];
        b->child1 = ia;
        b->parent = a->parent;
        a->parent = ib;
        if (b->parent != BP_NULL) {
            if (nodes[b->parent].child1 == ia)
                nodes[b->parent].child1 = ib;
            else
                nodes[b->parent].child2 = ib;
        } else {
            bp->root = ib;
        }
        if (d->height > e->height) {
            b->child2 = id;
            a->child1 = ie;
            e->parent = ia;
            a->box = aabb_union(c->box, e->box);
            b->box = aabb_union(a->box, d->box);
            a->height = 1 + (c->height > e->height ? c->height : e->height);
            b->height = 1 + (a->height > d->height ? a->height : d->height);
        } else {
            b->child2 = ie;
            a->child1 = id;
            d->parent = ia;
            a->box = aabb_union(c->box, d->box);
            b->box = aabb_union(a->box, e->box);
            a->height = 1 + (c->height > d->height ? c->height : d->height);
            b->height = 1 + (a->height > e->height ? a->height : e->height);
        }
        return ib;
    }
    return ia;
}

/* Refits boxes and heights from node i to the root, rebalancing each ancestor. */
static void refit_upwards(BroadPhase *bp, int i) {
    while (i != BP_NULL) {
        i = balance(bp, i);
        BpNode *n = &bp->nodes[i];
        const BpNode *c1 = &bp->nodes[n->child1], *c2 = &bp->nodes[n->child2];
        n->height = 1 + (c1->height > c2->height ? c1->height : c2->height);
        n->box = aabb_union(c1->box, c2->box);
        i = n->parent;
    }
}

/* The cost of making leaf_box a descendant of node n: its growth, or for a leaf the area of the
 * parent that pairing with it would create. */
static double descend_cost(const BpNode *n, Aabb leaf_box) {
    double grown = aabb_area(aabb_union(n->box, leaf_box));
    return is_leaf(n) ? grown : grown - aabb_area(n->box);
}

/* Needs one free node (the new parent). */
static void insert_leaf(BroadPhase *bp, int leaf) {
    if (bp->root == BP_NULL) {
        bp->root = leaf;
        bp->nodes[leaf].parent = BP_NULL;
        return;
    }
    Aabb leaf_box = bp->nodes[leaf].box;
    int i = bp->root;
    while (!is_leaf(&bp->nodes[i])) {
        const BpNode *n = &bp->nodes[i];
        double area = aabb_area(n->box);
        double combined = aabb_area(aabb_union(n->box, leaf_box));
        double cost = 2.0 * combined;                 /* a new parent of n and the leaf */
        double inheritance = 2.0 * (combined - area); /* n's ancestors grow anyway below here */
        double cost1 = descend_cost(&bp->nodes[n->child1], leaf_box) + inheritance;
        double cost2 = descend_cost(&bp->nodes[n->child2], leaf_box) + inheritance;
        if (cost < cost1 && cost < cost2)
            break;
        i = cost1 < cost2 ? n->child1 : n->child2;
    }
    int sibling = i;
    int old_parent = bp->nodes[sibling].parent;
    int parent = alloc_node(bp);
    BpNode *p = &bp->nodes[parent];
    p->parent = old_parent;
    p->box = aabb_union(leaf_box, bp->nodes[sibling].box);
    p->height = bp->nodes[sibling].height + 1;
    p->child1 = sibling;
    p->child2 = leaf;
    if (old_parent != BP_NULL) {
        if (bp->nodes[old_parent].child1 == sibling)
            bp->nodes[old_parent].child1 = parent;
        else
            bp->nodes[old_parent].child2 = parent;
    } else {
        bp->root = parent;
    }
    bp->nodes[sibling].parent = parent;
    bp->nodes[leaf].parent = parent;
    refit_upwards(bp, parent);
}

static void remove_leaf(BroadPhase *bp, int leaf) {
    if (leaf == bp->root) {
        bp->root = BP_NULL;
        return;
    }
    int parent = bp->nodes[leaf].parent;
    int grand = bp->nodes[parent].parent;
    int sibling =
        bp->nodes[parent].child1 == leaf ? bp->nodes[parent].child2 : bp->nodes[parent].child1;
    free_node(bp, parent);
    bp->nodes[sibling].parent = grand;
    if (grand == BP_NULL) {
        bp->root = sibling;
        return;
    }
    if (bp->nodes[grand].child1 == parent)
        bp->nodes[grand].child1 = sibling;
    else
        bp->nodes[grand].child2 = sibling;
    refit_upwards(bp, grand);
}

/* ===== Placement: tree or side list ===== */

/* Needs one free node and room in side[] (reserved by the callers that can fail). */
static void place(BroadPhase *bp, int proxy) {
    BpNode *n = &bp->nodes[proxy];
    if (aabb_huge(n->box)) {
        n->side_slot = bp->side_count;
        n->parent = BP_NULL;
        bp->side[bp->side_count++] = proxy;
    } else {
        n->side_slot = BP_NULL;
        insert_leaf(bp, proxy);
    }
}

static void unplace(BroadPhase *bp, int proxy) {
    BpNode *n = &bp->nodes[proxy];
    if (n->side_slot != BP_NULL) {
        int last = bp->side[--bp->side_count];
        bp->side[n->side_slot] = last;
        bp->nodes[last].side_slot = n->side_slot;
        n->side_slot = BP_NULL;
    } else {
        remove_leaf(bp, proxy);
    }
}

static bool reserve_side(BroadPhase *bp) {
    if (bp->side_count < bp->side_cap)
        return true;
    int cap = bp->side_cap > 0 ? 2 * bp->side_cap : 4;
    int *side = realloc(bp->side, (size_t)cap * sizeof *side);
    if (!side)
        return false;
    bp->side = side;
    bp->side_cap = cap;
    return true;
}

/* ===== Dirty proxies ===== */

static void mark_dirty(BroadPhase *bp, int proxy) {
    BpNode *n = &bp->nodes[proxy];
    if (n->dirty_slot != BP_NULL)
        return;
    ISSIM_ASSERT(bp->dirty_count < bp->dirty_cap); /* one entry per node at most */
    n->dirty_slot = bp->dirty_count;
    bp->dirty[bp->dirty_count++] = proxy;
}

static void unmark_dirty(BroadPhase *bp, int proxy) {
    BpNode *n = &bp->nodes[proxy];
    if (n->dirty_slot == BP_NULL)
        return;
    int last = bp->dirty[--bp->dirty_count];
    bp->dirty[n->dirty_slot] = last;
    bp->nodes[last].dirty_slot = n->dirty_slot;
    n->dirty_slot = BP_NULL;
}

/* ===== API ===== */

BroadPhase *broadphase_create(double fat_margin, IssimError *err) {
    if (!(fat_margin >= 0.0) || !isfinite(fat_margin)) {
        issim_error_set(err, ISSIM_ERR_RANGE, "broad phase: fat margin %g must be finite and >= 0",
                        fat_margin);
        return NULL;
    }
    BroadPhase *bp = calloc(1, sizeof *bp);
    if (!bp) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "broad phase: out of memory");
        return NULL;
    }
    bp->fat_margin = fat_margin;
    bp->free_list = BP_NULL;
    bp->root = BP_NULL;
    return bp;
}

void broadphase_destroy(BroadPhase *bp) {
    if (!bp)
        return;
    free(bp->nodes);
    free(bp->side);
    free(bp->dirty);
    free(bp->cache);
    free(bp->merged);
    free(bp->fresh);
    free(bp->order);
    free(bp->hits);
    free(bp->stack);
    free(bp);
}

/* Returns -1 when out of memory (the broad phase is unchanged). */
int broadphase_add(BroadPhase *bp, Aabb box, int user) {
    /* The leaf and the parent insertion creates, a side slot, and a slot in the user order:
     * reserved first, so nothing below can fail half way. */
    if (!reserve_nodes(bp, 2) || !reserve_side(bp))
        return -1;
    if (bp->proxy_count + 1 > bp->order_cap) {
        int cap = bp->order_cap > 0 ? 2 * bp->order_cap : 16;
        BpPair *order = realloc(bp->order, (size_t)cap * sizeof *order);
        if (!order)
            return -1;
        bp->order = order;
        bp->order_cap = cap;
    }
    int proxy = alloc_node(bp);
    bp->nodes[proxy].box = aabb_grow(box, bp->fat_margin);
    bp->nodes[proxy].user = user;
    place(bp, proxy);
    mark_dirty(bp, proxy);
    bp->proxy_count++;
    bp->order_dirty = true;
    return proxy;
}

static void check_proxy(const BroadPhase *bp, int proxy) {
    ISSIM_ASSERT(proxy >= 0 && proxy < bp->capacity && bp->nodes[proxy].height == 0 &&
                 bp->nodes[proxy].user >= 0 && is_leaf(&bp->nodes[proxy]));
}

void broadphase_remove(BroadPhase *bp, int proxy) {
    check_proxy(bp, proxy);
    unplace(bp, proxy);
    unmark_dirty(bp, proxy);
    bp->nodes[proxy].user = -1;
    free_node(bp, proxy);
    bp->proxy_count--;
    bp->order_dirty = true;
    bp->removed = true;
}

bool broadphase_move(BroadPhase *bp, int proxy, Aabb box) {
    check_proxy(bp, proxy);
    BpNode *n = &bp->nodes[proxy];
    Aabb fat = aabb_grow(box, bp->fat_margin);
    /* Still inside the fat box: nothing to do, unless the fat box has become much larger than
     * the body needs (a shape that shrank), as in Box2D's MoveProxy. */
    if (aabb_contains(n->box, box) && aabb_contains(aabb_grow(fat, 4.0 * bp->fat_margin), n->box))
        return false;
    /* Removing frees a parent node (or a side slot) that placing takes back: no allocation. A
     * proxy crossing between tree and side list needs the other kind of room, which an earlier
     * add may not have reserved. */
    bool was_side = n->side_slot != BP_NULL;
    bool to_side = aabb_huge(fat);
    if (to_side && !was_side && !reserve_side(bp))
        issim_fatal("broad phase: out of memory moving proxy %d", proxy);
    if (!to_side && was_side && !reserve_nodes(bp, 1))
        issim_fatal("broad phase: out of memory moving proxy %d", proxy);
    unplace(bp, proxy);
    bp->nodes[proxy].box = fat;
    place(bp, proxy);
    mark_dirty(bp, proxy);
    return true;
}

int broadphase_proxy_count(const BroadPhase *bp) {
    return bp->proxy_count;
}

int broadphase_height(const BroadPhase *bp) {
    return bp->root == BP_NULL ? 0 : bp->nodes[bp->root].height;
}

/* ===== Pairs ===== */

/* Pair-time growth has no error path in the API, and a pair list with holes would lose
 * contacts silently, so running out of memory there is fatal. */
static void grow_or_die(void **array, int *cap, int need, size_t item) {
    if (!issim_array_reserve(array, cap, need, item))
        issim_fatal("broad phase: out of memory collecting pairs (%d items)", need);
}

/* Leaves whose fat boxes overlap box, in bp->hits. Returns their count. */
static int query(BroadPhase *bp, Aabb box) {
    int count = 0;
    for (int s = 0; s < bp->side_count; s++) {
        if (aabb_overlap(bp->nodes[bp->side[s]].box, box)) {
            grow_or_die((void **)&bp->hits, &bp->hits_cap, count + 1, sizeof *bp->hits);
            bp->hits[count++] = bp->side[s];
        }
    }
    if (bp->root == BP_NULL)
        return count;
    const BpNode *nodes = bp->nodes;
    int *stack = bp->stack;
    int sp = 0;
    stack[sp++] = bp->root;
    while (sp > 0) {
        int i = stack[--sp];
        const BpNode *n = &nodes[i];
        if (!aabb_overlap(n->box, box))
            continue;
        if (is_leaf(n)) {
            if (count == bp->hits_cap)
                grow_or_die((void **)&bp->hits, &bp->hits_cap, count + 1, sizeof *bp->hits);
            bp->hits[count++] = i;
        } else {
            /* Depth-first: at most one pending sibling per level, so height + 1 entries. */
            stack[sp++] = n->child1;
            stack[sp++] = n->child2;
        }
    }
    return count;
}

static inline int compare_pairs(const BpPair *x, const BpPair *y) {
    if (x->user_a != y->user_a)
        return x->user_a < y->user_a ? -1 : 1;
    if (x->user_b != y->user_b)
        return x->user_b < y->user_b ? -1 : 1;
    if (x->proxy_a != y->proxy_a)
        return x->proxy_a < y->proxy_a ? -1 : 1;
    return (x->proxy_b > y->proxy_b) - (x->proxy_b < y->proxy_b);
}

static void insertion_sort(BpPair *v, int n) {
    for (int i = 1; i < n; i++) {
        BpPair x = v[i];
        int j = i - 1;
        while (j >= 0 && compare_pairs(&v[j], &x) > 0) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

/* Bottom-up merge sort (runs of 16 by insertion) through bp->merged: unlike qsort, which may
 * malloc, it allocates only when the scratch grows. The order is total, so stability is moot. */
static void sort_pairs(BroadPhase *bp, BpPair *v, int n) {
    enum { RUN = 16 };
    if (n <= 2 * RUN) {
        insertion_sort(v, n);
        return;
    }
    grow_or_die((void **)&bp->merged, &bp->merged_cap, n, sizeof *bp->merged);
    for (int i = 0; i < n; i += RUN)
        insertion_sort(v + i, n - i < RUN ? n - i : RUN);
    BpPair *src = v, *dst = bp->merged;
    for (int width = RUN; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n;
            int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = compare_pairs(&src[b], &src[a]) < 0 ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        BpPair *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, (size_t)n * sizeof *v);
}

/* The whole list: each user in increasing order appends its partners of larger user, sorted. */
static void rebuild_pairs(BroadPhase *bp) {
    if (bp->order_dirty) {
        int k = 0;
        for (int i = 0; i < bp->capacity; i++) {
            if (bp->nodes[i].height == 0 && bp->nodes[i].user >= 0 && is_leaf(&bp->nodes[i]))
                bp->order[k++] = (BpPair){bp->nodes[i].user, 0, i, 0};
        }
        ISSIM_ASSERT(k == bp->proxy_count);
        sort_pairs(bp, bp->order, k);
        bp->order_dirty = false;
    }
    bp->cache_count = 0;
    for (int i = 0; i < bp->proxy_count;) {
        int user = bp->order[i].user_a;
        int first = bp->cache_count;
        int j = i;
        for (; j < bp->proxy_count && bp->order[j].user_a == user; j++) {
            int proxy = bp->order[j].proxy_a;
            int hits = query(bp, bp->nodes[proxy].box);
            grow_or_die((void **)&bp->cache, &bp->cache_cap, bp->cache_count + hits,
                        sizeof *bp->cache);
            for (int h = 0; h < hits; h++) {
                const BpNode *q = &bp->nodes[bp->hits[h]];
                if (q->user > user)
                    bp->cache[bp->cache_count++] = (BpPair){user, q->user, proxy, bp->hits[h]};
            }
        }
        sort_pairs(bp, &bp->cache[first], bp->cache_count - first);
        i = j;
    }
}

static inline bool clean_leaf(const BpNode *nodes, int proxy, int user) {
    const BpNode *n = &nodes[proxy];
    return n->height == 0 && n->user == user && n->dirty_slot == BP_NULL && is_leaf(n);
}

/* Drops the pairs of dirty and removed proxies, and merges in those of the dirty ones. */
static void update_pairs(BroadPhase *bp) {
    const BpNode *nodes = bp->nodes;
    int kept = 0;
    for (int k = 0; k < bp->cache_count; k++) {
        const BpPair *e = &bp->cache[k];
        if (clean_leaf(nodes, e->proxy_a, e->user_a) && clean_leaf(nodes, e->proxy_b, e->user_b))
            bp->cache[kept++] = *e;
    }
    bp->fresh_count = 0;
    for (int d = 0; d < bp->dirty_count; d++) {
        int p = bp->dirty[d];
        int hits = query(bp, bp->nodes[p].box);
        grow_or_die((void **)&bp->fresh, &bp->fresh_cap, bp->fresh_count + hits, sizeof *bp->fresh);
        int up = bp->nodes[p].user;
        for (int h = 0; h < hits; h++) {
            int q = bp->hits[h];
            int uq = bp->nodes[q].user;
            /* Two dirty proxies: found from both; kept from the lower one. */
            if (q == p || uq == up || (bp->nodes[q].dirty_slot != BP_NULL && q < p))
                continue;
            bp->fresh[bp->fresh_count++] =
                up < uq ? (BpPair){up, uq, p, q} : (BpPair){uq, up, q, p};
        }
    }
    sort_pairs(bp, bp->fresh, bp->fresh_count);
    int total = kept + bp->fresh_count;
    grow_or_die((void **)&bp->merged, &bp->merged_cap, total, sizeof *bp->merged);
    int a = 0, b = 0, m = 0;
    while (a < kept && b < bp->fresh_count)
        bp->merged[m++] =
            compare_pairs(&bp->cache[a], &bp->fresh[b]) <= 0 ? bp->cache[a++] : bp->fresh[b++];
    while (a < kept)
        bp->merged[m++] = bp->cache[a++];
    while (b < bp->fresh_count)
        bp->merged[m++] = bp->fresh[b++];
    BpPair *tmp = bp->cache;
    int tmp_cap = bp->cache_cap;
    bp->cache = bp->merged;
    bp->cache_cap = bp->merged_cap;
    bp->cache_count = total;
    bp->merged = tmp;
    bp->merged_cap = tmp_cap;
}

bool broadphase_pairs_unchanged(const BroadPhase *bp) {
    return bp->cache_valid && bp->dirty_count == 0 && !bp->removed;
}

void broadphase_pairs(BroadPhase *bp, void (*fn)(int user_a, int user_b, void *ctx), void *ctx) {
    grow_or_die((void **)&bp->stack, &bp->stack_cap, broadphase_height(bp) + 2, sizeof *bp->stack);
    /* Incremental while a quarter of the proxies or fewer changed; beyond, the rebuild (no
     * global sort) is cheaper. */
    if (!bp->cache_valid || 4 * bp->dirty_count > bp->proxy_count)
        rebuild_pairs(bp);
    else if (bp->dirty_count > 0 || bp->removed)
        update_pairs(bp);
    for (int d = 0; d < bp->dirty_count; d++)
        bp->nodes[bp->dirty[d]].dirty_slot = BP_NULL;
    bp->dirty_count = 0;
    bp->removed = false;
    bp->cache_valid = true;
    for (int k = 0; k < bp->cache_count; k++) {
        const BpPair *e = &bp->cache[k];
        if (k > 0 && e->user_a == e[-1].user_a && e->user_b == e[-1].user_b)
            continue; /* two proxies of one user */
        fn(e->user_a, e->user_b, ctx);
    }
}
