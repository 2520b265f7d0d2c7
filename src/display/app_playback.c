/* Time around impacts and branches, the display's side (issue 31 items 1 and 6).
 *
 * Item 1: the session's clock slows around impacts and can stop at the next one (sim.h, "Time
 * around impacts"); here the GUI's controls reach it, the impacts found go to the timeline and
 * the time plots, and while slow motion is on the view shows the engine's states between output
 * frames (sim_fine_state): a 0.3 ms impact inside a 1 ms output step is seen whole.
 *
 * Item 6: scrubbing back to t_s before an edit made at t_e and pressing Run resumed with the edit
 * in effect from t_s, a past nobody had seen, and nothing said so. Now the accepted edits are
 * logged with their instants and old values; Run from t_s < t_e asks (or the preference
 * decides) where the edit applies from:
 *  - the scrubbed instant: the engine rewinds to t_s with the edit in effect (as before), and
 *    the timeline marks the branch at t_s;
 *  - its original instant: the edit is undone at t_s (paused until the engine took the undo),
 *    the clock holds at t_e (sim_set_hold), the edit is made again there (paused until taken),
 *    and the clock goes on: the past shown before is computed again and the edit acts from t_e.
 * The preference (ask, or one of the two) is the user's: kept in the config folder's "branches"
 * and read when the display starts.
 * Display thread only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_internal.h"

const char *const app_branch_policy_names[] = {
    [APP_BRANCH_ASK] = "ask",
    [APP_BRANCH_SCRUB] = "scrub",
    [APP_BRANCH_ORIGINAL] = "original",
};
_Static_assert(sizeof app_branch_policy_names / sizeof app_branch_policy_names[0] ==
                   APP_BRANCH_POLICY_COUNT,
               "a name for every AppBranchPolicy");
static const char preference_file[] = "branches";

/* Another session (open, reload, reset) starts with no impacts, edits or branch. */
static AppPlayback *playback_of(App *app) {
    AppPlayback *p = &app->playback;
    if (p->sim != app->session.sim) {
        AppBranchPolicy policy = p->policy;
        memset(p, 0, sizeof *p);
        p->policy = policy;
        p->sim = app->session.sim;
        p->branch_time = NAN;
        p->fine_frame = -1;
    }
    return p;
}

void app_playback_fill(App *app, GuiState *g) {
    AppPlayback *p = playback_of(app);
    Session *s = &app->session;
    static double edit_times[APP_EDIT_LOG];
    g->branch.branch_time = g->branch.branch_edit_time = NAN;
    g->branch.branch_edit = "";
    g->branch.branch_policy = (int)p->policy;
    if (!s->sim)
        return;
    sim_slow_motion(s->sim, &g->clock.slow_rate, &g->clock.slow_window);
    g->clock.pause_at_contact = sim_pause_at_contact(s->sim);
    double lo = registry_history_start(s->reg), hi = registry_state_time(s->reg);
    int n = isfinite(lo) && isfinite(hi)
                ? sim_impacts_between(s->sim, lo, hi, p->impacts, APP_IMPACTS_SHOWN)
                : 0;
    p->impact_count = n < APP_IMPACTS_SHOWN ? n : APP_IMPACTS_SHOWN;
    g->clock.impacts = p->impacts;
    g->clock.impact_count = p->impact_count;
    double near[1];
    g->clock.slow_now = g->clock.slow_rate > 0.0 && g->clock.slow_rate < g->clock.speed &&
                        sim_impacts_between(s->sim, s->frame_time - g->clock.slow_window,
                                            s->frame_time + g->clock.slow_window, near, 1) > 0;
    for (int k = 0; k < p->edit_count; k++)
        edit_times[k] = p->edits[k].t;
    g->branch.edit_times = edit_times;
    g->branch.edit_count = p->edit_count;
    g->branch.branch_time = p->branch_time;
    if (p->asking) {
        static char text[REGISTRY_EDIT_PATH_MAX + REGISTRY_EDIT_VALUE_MAX + 2];
        const AppEditRecord *e = &p->edits[p->first_later];
        snprintf(text, sizeof text, "%s=%s", e->path, e->value);
        g->branch.branch_edit = text;
        g->branch.branch_edit_time = e->t;
    }
}

/* ===== Branches ===== */

/* The edits after t: the first one's index (edit_count: none). */
static int first_edit_after(const AppPlayback *p, double t) {
    int k = 0;
    while (k < p->edit_count && p->edits[k].t <= t)
        k++;
    return k;
}

/* An edit of the branch's own (not logged as the user's). */
static void submit_quietly(App *app, AppPlayback *p, const char *path, const char *value) {
    uint64_t id = app_submit_edit(app, path, value);
    if (id && p->undo_count < APP_EDIT_LOG)
        p->undo_ids[p->undo_count++] = id;
}

/* The edits from first_later on act from the scrubbed instant (what Run always did): made again
 * there while the clock waits, so the engine rewinds to that instant exactly (a rewind asked
 * while the clock runs lands where the clock is when the engine takes it). */
static void branch_from_scrub(App *app, AppPlayback *p) {
    p->undo_count = 0;
    for (int k = p->first_later; k < p->edit_count; k++) {
        p->edits[k].t = p->branch_time;
        submit_quietly(app, p, p->edits[k].path, p->edits[k].value);
    }
    printf("branch from=scrub t=%.9g edits=%d\n", p->branch_time, p->edit_count - p->first_later);
    p->resume_after_edits = true;
    app->seeked = false;
    sim_set_paused(app->session.sim, true);
}

/* The edits from first_later on are undone now (newest first), made again at their instants. */
static void branch_from_original(App *app, AppPlayback *p) {
    p->replay_count = p->edit_count - p->first_later;
    memcpy(p->replay, p->edits + p->first_later, sizeof *p->replay * (size_t)p->replay_count);
    p->replay_next = 0;
    p->edit_count = p->first_later;
    p->undo_count = 0;
    for (int k = p->replay_count - 1; k >= 0; k--)
        submit_quietly(app, p, p->replay[k].path, p->replay[k].old_value);
    printf("branch from=original t=%.9g edits=%d hold=%.9g\n", p->branch_time, p->replay_count,
           p->replay[0].t);
    sim_set_hold(app->session.sim, p->replay[0].t);
    p->stops_seen = sim_clock_stops(app->session.sim);
    p->resume_after_edits = true; /* paused at t_s until the undo is taken */
    app->seeked = false;
    sim_set_paused(app->session.sim, true);
}

static void answer(App *app, AppBranchPolicy policy) {
    AppPlayback *p = playback_of(app);
    if (!p->asking || !app->session.sim)
        return;
    p->asking = false;
    if (policy == APP_BRANCH_ORIGINAL)
        branch_from_original(app, p);
    else
        branch_from_scrub(app, p);
    fflush(stdout);
}

bool app_playback_run(App *app) {
    AppPlayback *p = playback_of(app);
    Sim *sim = app->session.sim;
    if (!sim || !app->seeked)
        return true;
    double t = sim_display_time(sim);
    int k = first_edit_after(p, t);
    if (k == p->edit_count)
        return true;
    p->branch_time = t;
    p->first_later = k;
    p->asking = true;
    printf("branch ask t=%.9g edit=%s=%s at=%.9g\n", t, p->edits[k].path, p->edits[k].value,
           p->edits[k].t);
    fflush(stdout);
    if (p->policy != APP_BRANCH_ASK)
        answer(app, p->policy);
    return false;
}

void app_playback_update(App *app) {
    AppPlayback *p = playback_of(app);
    Sim *sim = app->session.sim;
    if (!sim)
        return;
    if (p->resume_after_edits && app->edits.pending_count == 0) {
        p->resume_after_edits = false;
        p->undo_count = 0;
        sim_set_paused(sim, false);
    }
    /* The hold was reached: the edits of this instant are made again, the clock waits for them. */
    if (p->replay_next < p->replay_count && !p->resume_after_edits && isnan(sim_hold(sim)) &&
        sim_clock_stops(sim) > p->stops_seen && sim_paused(sim)) {
        double t = sim_display_time(sim);
        const AppEditRecord *e = &p->replay[p->replay_next];
        if (t < e->t)
            return;
        for (; p->replay_next < p->replay_count && p->replay[p->replay_next].t <= t;
             p->replay_next++)
            app_submit_edit(app, p->replay[p->replay_next].path, p->replay[p->replay_next].value);
        if (p->replay_next < p->replay_count)
            sim_set_hold(sim, p->replay[p->replay_next].t);
        p->stops_seen = sim_clock_stops(sim);
        p->resume_after_edits = true;
        printf("branch replay t=%.9g left=%d\n", t, p->replay_count - p->replay_next);
        fflush(stdout);
    }
}

void app_playback_note_edit(App *app, uint64_t id, const char *path, const char *value, double t) {
    AppPlayback *p = playback_of(app);
    for (int k = 0; k < p->undo_count; k++)
        if (p->undo_ids[k] == id)
            return; /* an undo of a branch: not an edit of the user's */
    AppEditRecord rec = {.id = id, .t = t};
    issim_strlcpy(rec.path, path, sizeof rec.path);
    issim_strlcpy(rec.value, value, sizeof rec.value);
    ThingId thing;
    int prop;
    IssimError err;
    const ThingDb *db = app->session.db;
    if (db && thingdb_resolve(db, path, &thing, &prop, &err) == ISSIM_OK)
        prop_format(thing_prop_def(db, thing, prop), thing_prop_value(db, thing, prop), false,
                    rec.old_value, sizeof rec.old_value);
    if (p->edit_count == APP_EDIT_LOG) { /* the oldest goes */
        memmove(p->edits, p->edits + 1, sizeof *p->edits * (APP_EDIT_LOG - 1));
        p->edit_count--;
    }
    int at = p->edit_count; /* in time order: an edit made while scrubbed back goes before */
    while (at > 0 && p->edits[at - 1].t > t)
        at--;
    memmove(p->edits + at + 1, p->edits + at, sizeof *p->edits * (size_t)(p->edit_count - at));
    p->edits[at] = rec;
    p->edit_count++;
}

/* ===== The branches preference: a user's, kept across sessions ===== */

static int policy_parse(const char *word) {
    return vocabulary_parse(app_branch_policy_names, APP_BRANCH_POLICY_COUNT, word);
}

void app_playback_load_preference(App *app) {
    char path[GUI_PATH_MAX + 16], word[64] = "";
    FILE *f = app_config_path(preference_file, path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f)
        return; /* never chosen: ask */
    bool read = fgets(word, sizeof word, f) != NULL;
    fclose(f);
    word[strcspn(word, " \t\r\n")] = '\0';
    int k = read ? policy_parse(word) : -1;
    if (k < 0) {
        issim_log(ISSIM_LOG_WARN,
                  "%s: '%s' is not a branches preference (ask, scrub, original); "
                  "asking",
                  path, word);
        return;
    }
    playback_of(app)->policy = (AppBranchPolicy)k;
}

/* Written whole to a temporary file then renamed: two windows never leave half a word. */
static void set_policy(App *app, AppBranchPolicy policy) {
    playback_of(app)->policy = policy;
    char path[GUI_PATH_MAX + 16], tmp[GUI_PATH_MAX + 40];
    if (!app_config_path_to_write(preference_file, path, sizeof path))
        return;
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        issim_log(ISSIM_LOG_WARN, "cannot keep the branches preference in %s", path);
        return;
    }
    fprintf(f, "%s\n", app_branch_policy_names[policy]);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        issim_log(ISSIM_LOG_WARN, "cannot keep the branches preference in %s", path);
    }
}

/* ===== Controls ===== */

void app_playback_fine_frame(App *app, double t) {
    Session *s = &app->session;
    AppPlayback *p = playback_of(app);
    p->fine_frame = -1;
    if (sim_fine_state(s->sim, s->frame_time, t, s->frame, &p->fine_time, p->fine_contacts,
                       SIM_FINE_CONTACTS, &p->fine_contact_count)) {
        s->frame_time = p->fine_time;
        p->fine_frame = app->rates.frame_count;
    }
}

bool app_playback_contacts(const App *app, int *n, double *t, const ContactReport **out) {
    const AppPlayback *p = &app->playback;
    if (p->sim != app->session.sim || p->fine_frame != app->rates.frame_count)
        return false;
    *n = p->fine_contact_count;
    *t = p->fine_time;
    *out = p->fine_contacts;
    return true;
}

/* ===== Script ===== */

static void print_playback(App *app) {
    AppPlayback *p = playback_of(app);
    Sim *sim = app->session.sim;
    if (!sim) {
        printf("playback none\n");
        fflush(stdout);
        return;
    }
    double wall, clock = sim_display_clock(sim, &wall), rate, window;
    sim_slow_motion(sim, &rate, &window);
    double found[32];
    int n = sim_impacts_between(sim, -INFINITY, INFINITY, found, 32);
    printf("playback t=%.17g clock=%.17g wall=%.9f speed=%.6g slow_rate=%.6g window=%.6g "
           "armed=%d paused=%d stops=%llu impacts=%d branch=%.9g asking=%d policy=%s edits=%d\n",
           app->session.frame_time, clock, wall, sim_speed(sim), rate, window,
           (int)sim_pause_at_contact(sim), (int)sim_paused(sim),
           (unsigned long long)sim_clock_stops(sim), n, p->branch_time, (int)p->asking,
           app_branch_policy_names[p->policy], p->edit_count);
    double pause[4], slow[4];
    gui_playback_rects(pause, slow);
    printf("playback_rects pause %.1f %.1f %.1f %.1f slow %.1f %.1f %.1f %.1f\n", pause[0],
           pause[1], pause[2], pause[3], slow[0], slow[1], slow[2], slow[3]);
    for (int k = 0; k < n && k < 32; k++)
        printf("impact %.17g\n", found[k]);
    for (int k = 0; k < p->edit_count; k++)
        printf("edit_log t=%.9g %s=%s old=%s\n", p->edits[k].t, p->edits[k].path, p->edits[k].value,
               p->edits[k].old_value);
    fflush(stdout);
}

bool app_playback_command(App *app, char *const *words, int n, bool *failed) {
    const char *cmd = words[0];
    Sim *sim = app->session.sim;
    if (strcmp(cmd, "slow_motion") == 0 && n > 1 && sim) { /* RATE [WINDOW] | off */
        double rate, window;
        sim_slow_motion(sim, &rate, &window);
        if (strcmp(words[1], "off") == 0)
            rate = 0.0;
        else
            rate = atof(words[1]);
        if (n > 2)
            window = atof(words[2]);
        sim_set_slow_motion(sim, rate, window);
    } else if (strcmp(cmd, "pause_at_contact") == 0 && sim) { /* [off] */
        sim_set_pause_at_contact(sim, !(n > 1 && strcmp(words[1], "off") == 0));
    } else if (strcmp(cmd, "branch_policy") == 0 && n > 1) {
        int k = policy_parse(words[1]);
        if (k < 0)
            *failed = true;
        else
            set_policy(app, (AppBranchPolicy)k);
    } else if (strcmp(cmd, "branch_answer") == 0 && n > 1) {
        int k = policy_parse(words[1]);
        if (k <= 0 || !playback_of(app)->asking)
            *failed = true;
        else
            answer(app, (AppBranchPolicy)k);
    } else if (strcmp(cmd, "print_playback") == 0) {
        print_playback(app);
    } else {
        return false;
    }
    return true;
}
