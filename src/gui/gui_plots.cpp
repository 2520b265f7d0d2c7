// The plots and the contact-map panel of the right panel (gui_plots.h): series of registry
// variables and display quantities against time or against each other, as an oscilloscope
// draws them: every sample since a series was chosen (PlotStore, within a budget the user sets),
// the smallest and largest per pixel column so a spike of one sample shows at any window,
// ticks, a grid, a legend and the axis labels beside the curves. Display thread only.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>

#include "gui_layout.h"
#include "gui_playback.h"
#include "gui_plots.h"

namespace {

const ImVec4 kRed(1.0f, 0.4f, 0.35f, 1.0f);
const ImVec4 kAmber(1.0f, 0.75f, 0.3f, 1.0f);
const ImU32 kLabel = IM_COL32(170, 170, 180, 255);
const ImU32 kGrid = IM_COL32(55, 58, 68, 255);
const ImU32 kSeriesColors[GUI_PLOT_SERIES] = {
    IM_COL32(255, 200, 60, 255), IM_COL32(90, 190, 255, 255), IM_COL32(240, 110, 200, 255)};
const int kSeriesMax = GUI_MAX_PLOTS * GUI_PLOT_SERIES;
const float kPlotHeight = 110.0f;

// A plotted series, held by name so it survives a Reset (a new registry with the same names).
struct SeriesRef {
    char name[160] = "";
};

struct PlotMemory {
    SeriesRef series[GUI_PLOT_SERIES];
    float min_span = 0.0f; // the dead band: the y range never narrower (0: automatic)
    bool versus = false;   // the other series against the first (a force-depth loop), not time
};

// What a name stands for in this frame's registry and display quantities.
struct Resolved {
    RegistryVarId var = {}; // valid: a registry variable
    int live = -1;          // >= 0: GuiState.live[live]
    bool set() const { return !registry_var_id_is_null(var) || live >= 0; }
};

struct PlotSetRequest {
    int k, i, versus;
    double band;
    bool has_name;
    char name[160];
};

struct PlotContext {
    PlotMemory plots[GUI_MAX_PLOTS];
    int count = 2;
    PlotStore stores[kSeriesMax]; // plot k's series i: stores[k * GUI_PLOT_SERIES + i]
    char stored[kSeriesMax][160]; // the name each store holds
    uint32_t generation = 0;      // the registry the plots and stores belong to
    char scene[GUI_PATH_MAX] = "";
    double resets = 0, low_display = INFINITY; // engine resets seen; lowest display time since
    char filter[64] = "";
    GuiPlotInfo info[GUI_MAX_PLOTS]; // what each plot drew last frame
    float window = 5.0f;             // s
    float budget_mib = 64.0f;        // all the stores together
    std::vector<double> chunk_t, chunk_v;
    std::vector<ImVec2> points;
    // Per series the extremes of its pixel columns, kept between frames. The columns are laid
    // on the time axis itself (column k holds [k per, (k + 1) per), per = window / width), not
    // on the window's left edge, so a sliding window moves over columns already read: a frame
    // reads the history only for the columns new since the last one and for those not yet
    // complete (their end past the newest sample). Written and read by the GUI thread only.
    struct SeriesColumns {
        unsigned long rewrites = ~0ul; // the store's rewrites when these were read
        double per = 0.0;              // seconds per column
        long first = 0;                // the absolute index of extremes[0]
        long complete_end = 0;         // columns before this one hold every sample they will
        std::vector<float> lo, hi;     // per column from `first`; NAN: no sample in it
    } columns[kSeriesMax];
    std::vector<ImVec2> line_points;
    double draw_seconds = 0.0; // CPU time of the last frame's plot drawing
    // gui_plot_set's requests, applied at the next frame: after a new scene's plots are chosen
    PlotSetRequest requests[16];
    int request_count = 0;
    // gui_plot_bench: synthetic series to fill at the next frame, and the drawing times since
    int bench_series = 0;
    double bench_seconds = 0, bench_dt = 0, bench_sum = 0, bench_max = 0;
    int bench_frames = 0;
    int bench_live = 0;      // series that grow with the clock (the first bench_live stores)
    double bench_t0 = 0.0;   // their first sample's time
    size_t bench_next = 0;   // the index of their next sample
    double bench_feed = 0.0; // CPU time spent appending to them since the bench started
    bool need_room = false;  // a scene with its own plots opened: gui_plots_need_room
    int map_node = 0;
    bool map_follow = true;
    float map_step[512], map_impulse[512];
};

PlotContext *g_plots = nullptr; // ImGui's callers hold no user pointer: the one instance

Resolved resolve(const GuiState *s, const char *name) {
    Resolved r;
    for (int i = 0; name[0] && i < s->live_count; i++)
        if (std::strcmp(s->live[i].name, name) == 0)
            r.live = i;
    if (r.live < 0 && name[0] && s->reg)
        r.var = registry_var_id(s->reg, name);
    return r;
}

const char *series_unit(const GuiState *s, const char *name) {
    Resolved r = resolve(s, name);
    if (r.live >= 0)
        return s->live[r.live].unit;
    return r.set() ? registry_var_unit(s->reg, r.var.index) : "";
}

// ===== Which plots: the scene's saved ones, defaults, kept through Reset =====

void set_name(SeriesRef *r, const char *name) {
    std::snprintf(r->name, sizeof r->name, "%s", name ? name : "");
}

// "a, b; @c, d": plots separated by ';', series by ','; '@': the others against the first.
void parse_spec(const char *spec) {
    PlotContext &c = *g_plots;
    for (PlotMemory &p : c.plots)
        p = PlotMemory();
    c.count = 0;
    const char *at = spec;
    while (*at && c.count < GUI_MAX_PLOTS) {
        size_t len = std::strcspn(at, ";");
        char plot[256];
        std::snprintf(plot, sizeof plot, "%.*s", (int)len, at);
        PlotMemory &p = c.plots[c.count++];
        char *cursor = plot;
        while (*cursor == ' ')
            cursor++;
        p.versus = *cursor == '@';
        cursor += p.versus;
        for (int i = 0; i < GUI_PLOT_SERIES && *cursor; i++) {
            size_t n = std::strcspn(cursor, ",");
            char *end = cursor + n;
            bool last = *end == '\0';
            *end = '\0';
            while (*cursor == ' ')
                cursor++;
            for (char *e = end - 1; e >= cursor && *e == ' '; e--)
                *e = '\0';
            set_name(&p.series[i], cursor);
            cursor = last ? end : end + 1;
        }
        at += len + (at[len] == ';');
    }
}

void default_plots(const GuiState *s) {
    PlotContext &c = *g_plots;
    if (s->load_cycle_on) { // the load and the contact force in time; force against depth
        parse_spec("load cycle: prescribed load, contacts: summed normal force; "
                   "@contacts: deepest penetration, contacts: summed normal force");
        return;
    }
    parse_spec("universe.energy.total");
    for (int i = 0; i < registry_var_count(s->reg); i++)
        if (std::strstr(registry_var_name(s->reg, i), ".pos.z")) {
            set_name(&c.plots[1].series[0], registry_var_name(s->reg, i));
            c.count = 2;
            break;
        }
    // The contact force in a plot of its own (its unit): the engine thread's peak per output
    // step, so an impact between two drawn frames shows.
    if (registry_var_find(s->reg, "contacts.force_sum.peak") >= 0) {
        set_name(&c.plots[c.count].series[0], "contacts.force_sum.peak");
        c.count++;
    }
}

// A new registry: the same scene again (Reset, Reload) keeps the user's plots; another scene
// brings its saved plots (universe.plots) or the defaults. The histories start over.
void follow_registry(const GuiState *s) {
    PlotContext &c = *g_plots;
    uint32_t generation = registry_var_id_at(s->reg, 0).generation;
    if (generation == c.generation)
        return;
    c.generation = generation;
    for (int k = 0; k < kSeriesMax; k++) {
        c.stores[k].clear();
        c.stored[k][0] = '\0';
    }
    c.resets = 0, c.low_display = INFINITY;
    if (std::strcmp(c.scene, s->scene_path) == 0 && c.count > 0)
        return;
    std::snprintf(c.scene, sizeof c.scene, "%s", s->scene_path);
    ThingId u = s->db ? thingdb_find_kind(s->db, THING_UNIVERSE) : thing_id_null();
    const char *saved = thing_id_is_null(u) ? "" : thing_string(s->db, u, "plots");
    // a scene opens with its own window (the rattleback's 20 s hold its spin's reversal)
    if (!thing_id_is_null(u))
        gui_plot_window(thing_real(s->db, u, "plot_window"));
    c.need_room = saved && saved[0];
    if (saved && saved[0])
        parse_spec(saved);
    else
        default_plots(s);
}

void apply_requests() {
    PlotContext &c = *g_plots;
    for (int q = 0; q < c.request_count; q++) {
        const PlotSetRequest &r = c.requests[q];
        c.count = std::max(c.count, r.k + 1);
        PlotMemory &p = c.plots[r.k];
        if (r.has_name)
            set_name(&p.series[r.i], r.name);
        if (r.versus >= 0)
            p.versus = r.versus != 0;
        if (r.band >= 0)
            p.min_span = (float)r.band;
    }
    c.request_count = 0;
}

// ===== Feeding the histories =====

size_t store_budget() {
    int used = 0;
    for (int k = 0; k < g_plots->count * GUI_PLOT_SERIES; k++)
        used += g_plots->plots[k / GUI_PLOT_SERIES].series[k % GUI_PLOT_SERIES].name[0] != '\0';
    return (size_t)(g_plots->budget_mib * 1048576.0 / std::max(used, 1));
}

// A rewind recomputes the frames after the instant it went back to, which is at most the
// lowest display time seen since (a seek back, then Run): the samples from there go, and are
// read again from the registry.
void follow_resets(const GuiState *s) {
    PlotContext &c = *g_plots;
    c.low_display = std::min(c.low_display, s->clock.display_time);
    if (s->engine.engine_resets == c.resets)
        return;
    c.resets = s->engine.engine_resets;
    double cut = c.low_display - 1.5 * s->clock.dt;
    for (PlotStore &store : c.stores)
        if (store.fed >= cut)
            store.truncate(cut);
    c.low_display = s->clock.display_time;
}

void feed_registry(const GuiState *s, PlotStore &store, RegistryVarId var, size_t budget) {
    PlotContext &c = *g_plots;
    const int chunk = 65536;
    c.chunk_t.resize(chunk);
    c.chunk_v.resize(chunk);
    for (int n = chunk; n == chunk;) {
        double from = std::nextafter(store.fed, INFINITY);
        if (!(from <= s->clock.display_time))
            return;
        n = registry_history(s->reg, var.index, from, s->clock.display_time, c.chunk_t.data(),
                             c.chunk_v.data(), chunk);
        for (int i = 0; i < n; i++)
            store.add(c.chunk_t[i], c.chunk_v[i], budget);
    }
}

void feed_live(const GuiState *s, PlotStore &store, int live, size_t budget) {
    const GuiSeries &g = s->live[live];
    for (int i = 0; i < g.count; i++)
        if (g.t[i] > store.fed && g.t[i] <= s->clock.display_time)
            store.add(g.t[i], g.v[i], budget);
}

void feed(const GuiState *s) {
    PlotContext &c = *g_plots;
    size_t budget = store_budget();
    for (int k = 0; k < c.count * GUI_PLOT_SERIES; k++) {
        const char *name = c.plots[k / GUI_PLOT_SERIES].series[k % GUI_PLOT_SERIES].name;
        PlotStore &store = c.stores[k];
        if (std::strcmp(c.stored[k], name) != 0) { // another series: another history
            store.clear();
            std::snprintf(c.stored[k], sizeof c.stored[k], "%s", name);
        }
        Resolved r = resolve(s, name);
        if (r.live >= 0)
            feed_live(s, store, r.live, budget);
        else if (r.set())
            feed_registry(s, store, r.var, budget);
    }
}

// ===== Axes: ranges, ticks, labels =====

// The y range: the data's, never narrower than the dead band, so 1e-8 m of noise on a body at
// rest stays a flat line instead of filling the plot. Automatic band: a thousandth of the
// largest magnitude shown, at least 1e-9.
double dead_band(float min_span, double lo, double hi) {
    return min_span > 0 ? min_span : fmax(1e-9, 1e-3 * fmax(fabs(lo), fabs(hi)));
}

void plot_range(float min_span, double lo, double hi, double *y0, double *y1) {
    if (!(lo <= hi)) {
        *y0 = -1.0, *y1 = 1.0;
        return;
    }
    double band = dead_band(min_span, lo, hi);
    double span = fmax(hi - lo, band), mid = 0.5 * (lo + hi);
    *y0 = mid - 0.55 * span;
    *y1 = mid + 0.55 * span;
}

// A 1, 2 or 5 times a power of ten that cuts [a, b] into at most `most` parts.
double tick_step(double a, double b, int most) {
    double raw = (b - a) / std::max(most, 1), unit = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * unit >= raw)
            return m * unit;
    return 10.0 * unit;
}

struct Canvas {
    ImDrawList *dl;
    ImVec2 pa, pb; // the plot area (curves); labels and legend around it
    float line;
    double x0, x1, y0, y1;
    float X(double v) const { return pa.x + (float)((v - x0) / (x1 - x0)) * (pb.x - pa.x); }
    float Y(double v) const { return pb.y - (float)((v - y0) / (y1 - y0)) * (pb.y - pa.y); }
};

void tick_label(char *out, size_t size, double v, double step) {
    if (std::fabs(v) < 1e-9 * step)
        v = 0.0;
    std::snprintf(out, size, "%.4g", v);
}

// The y ticks: grid lines across the plot, labels in the margin at its left.
void y_ticks(const Canvas &c) {
    double step = tick_step(c.y0, c.y1, std::max(2, (int)((c.pb.y - c.pa.y) / (1.8f * c.line))));
    for (double v = std::ceil(c.y0 / step) * step; v <= c.y1; v += step) {
        float y = c.Y(v);
        c.dl->AddLine(ImVec2(c.pa.x, y), ImVec2(c.pb.x, y), kGrid);
        char text[32];
        tick_label(text, sizeof text, v, step);
        float w = ImGui::CalcTextSize(text).x;
        c.dl->AddText(ImVec2(c.pa.x - w - 4, y - 0.5f * c.line), kLabel, text);
    }
}

// The x ticks: grid lines, labels under the plot.
void x_ticks(const Canvas &c) {
    double step = tick_step(c.x0, c.x1, std::max(2, (int)((c.pb.x - c.pa.x) / 60.0f)));
    for (double v = std::ceil(c.x0 / step) * step; v <= c.x1; v += step) {
        float x = c.X(v);
        c.dl->AddLine(ImVec2(x, c.pa.y), ImVec2(x, c.pb.y), kGrid);
        char text[32];
        tick_label(text, sizeof text, v, step);
        float w = ImGui::CalcTextSize(text).x;
        float at = std::clamp(x - 0.5f * w, c.pa.x - 4.0f, c.pb.x - w);
        c.dl->AddText(ImVec2(at, c.pb.y + 2), kLabel, text);
    }
}

void legend_text(const GuiState *s, const PlotMemory &p, int k, char *out, size_t size) {
    std::snprintf(out, size, "%s%s [%s]", p.versus && k == 0 ? "x: " : "", p.series[k].name,
                  series_unit(s, p.series[k].name));
}

// The legend above the plot, from `left` to `right`: each series' colour, name and unit, on as
// many lines as it takes (draw false: only counts them).
int legend(const GuiState *s, const PlotMemory &p, ImVec2 at, float right, bool draw) {
    ImDrawList *dl = ImGui::GetWindowDrawList();
    float left = at.x, line = ImGui::GetTextLineHeight();
    int lines = 1;
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        if (!p.series[k].name[0])
            continue;
        char text[200];
        legend_text(s, p, k, text, sizeof text);
        float w = ImGui::CalcTextSize(text).x + 12;
        if (at.x + w > right && at.x > left)
            at = ImVec2(left, at.y + line), lines++;
        // A name wider than the whole line wraps after a '.' (or a space) instead of running
        // past the plot's edge.
        float wrap = right - at.x - 11;
        int rows =
            std::max(1, (int)(ImGui::CalcTextSize(text, nullptr, false, wrap).y / line + 0.5f));
        if (draw) {
            dl->AddRectFilled(ImVec2(at.x, at.y + 4), ImVec2(at.x + 8, at.y + 12),
                              kSeriesColors[k]);
            dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(at.x + 11, at.y),
                        kSeriesColors[k], text, nullptr, wrap);
        }
        if (rows > 1) { // the next entry starts a line of its own
            at = ImVec2(right, at.y + (rows - 1) * line);
            lines += rows - 1;
            continue;
        }
        at.x += w + 8;
    }
    return lines;
}

// The canvas: legend, then the plot area with room for the y labels at its left and the x
// labels under it, so no label sits under a curve.
Canvas begin_canvas(const GuiState *s, const PlotMemory &p) {
    Canvas c;
    c.dl = ImGui::GetWindowDrawList();
    c.line = ImGui::GetTextLineHeight();
    ImVec2 a = ImGui::GetCursorScreenPos();
    float width = ImGui::GetContentRegionAvail().x;
    float margin = ImGui::CalcTextSize("-0.0000").x + 6;
    float right = a.x + width - 2;
    float top = legend(s, p, ImVec2(a.x + margin, a.y), right, false) * c.line + 2;
    ImGui::InvisibleButton("##canvas", ImVec2(width, top + kPlotHeight + c.line + 4));
    legend(s, p, ImVec2(a.x + margin, a.y), right, true);
    c.pa = ImVec2(a.x + margin, a.y + top);
    c.pb = ImVec2(right, a.y + top + kPlotHeight);
    c.dl->AddRectFilled(c.pa, c.pb, IM_COL32(20, 22, 28, 255));
    return c;
}

// The frame, and the units in the margin: the y unit above the y labels, the x unit under them.
void finish_canvas(const Canvas &c, const char *yunit, const char *xunit, GuiPlotInfo *info) {
    c.dl->AddRect(c.pa, c.pb, IM_COL32(90, 90, 100, 255));
    std::snprintf(info->y_label[0], sizeof info->y_label[0], "%.4g %s", c.y0, yunit);
    std::snprintf(info->y_label[1], sizeof info->y_label[1], "%.4g %s", c.y1, yunit);
    std::snprintf(info->x_label[0], sizeof info->x_label[0], "%.4g %s", c.x0, xunit);
    std::snprintf(info->x_label[1], sizeof info->x_label[1], "%.4g %s", c.x1, xunit);
    float left = c.pa.x - 4;
    c.dl->AddText(ImVec2(left - ImGui::CalcTextSize(yunit).x, c.pa.y - c.line), kLabel, yunit);
    c.dl->AddText(ImVec2(left - ImGui::CalcTextSize(xunit).x - 16, c.pb.y + 2), kLabel, xunit);
    info->y0 = c.y0, info->y1 = c.y1;
    info->area[0] = c.pa.x, info->area[1] = c.pa.y, info->area[2] = c.pb.x, info->area[3] = c.pb.y;
}

// ===== Time plots =====

// The window's extremes of every series from `from` on; per-series sample counts in info.
void window_range(const PlotMemory &p, int slot, double t0, double t1, int from, double *lo,
                  double *hi, GuiPlotInfo *info) {
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        const PlotStore &st = g_plots->stores[slot * GUI_PLOT_SERIES + k];
        size_t i0 = st.index_at(t0), i1 = st.index_at(std::nextafter(t1, INFINITY));
        info->samples[k] = p.series[k].name[0] ? (int)(i1 - i0) : 0;
        if (k < from || i1 <= i0)
            continue;
        float a, b;
        st.range(i0, i1, &a, &b);
        if (std::isfinite(a) && std::isfinite(b))
            *lo = fmin(*lo, a), *hi = fmax(*hi, b);
    }
}

void stroke_series(const Canvas &c, const std::vector<ImVec2> &pts, ImU32 color) {
    if (pts.size() == 1)
        c.dl->AddCircleFilled(pts[0], 1.5f, color);
    else if (pts.size() > 1)
        c.dl->AddPolyline(pts.data(), (int)pts.size(), color, 0, 1.0f);
}

// Brings the kept columns to [c0, c1): drops those left of the window, reads the history for
// the new ones and for the incomplete ones. Everything again when the store's samples were
// rewritten, the column width changed or the window moved back.
void update_columns(PlotContext::SeriesColumns &k, const PlotStore &st, double per, long c0,
                    long c1) {
    if (k.rewrites != st.rewrites || k.per != per || c0 < k.first) {
        k.rewrites = st.rewrites, k.per = per;
        k.first = k.complete_end = c0;
        k.lo.clear(), k.hi.clear();
    }
    long drop = std::min<long>(c0 - k.first, (long)k.lo.size());
    k.lo.erase(k.lo.begin(), k.lo.begin() + drop);
    k.hi.erase(k.hi.begin(), k.hi.begin() + drop);
    k.first = c0;
    long from = std::clamp(k.complete_end, c0, k.first + (long)k.lo.size());
    k.lo.resize((size_t)(from - c0)), k.hi.resize((size_t)(from - c0));
    double newest = st.t.empty() ? -INFINITY : st.t.back();
    size_t i = st.index_at((double)from * per);
    k.complete_end = from;
    for (long col = from; col < c1; col++) {
        double end = (double)(col + 1) * per;
        size_t j = st.index_from(i, end);
        float a = NAN, b = NAN;
        if (j > i)
            st.range(i, j, &a, &b);
        k.lo.push_back(a), k.hi.push_back(b);
        if (newest >= end && k.complete_end == col) // later samples all come after `newest`
            k.complete_end = col + 1;
        i = j;
    }
}

// Per pixel column the smallest and largest sample, joined column to column. Reading a column
// is the cost (a few cache misses each in a 1e6-sample history); the columns are kept between
// frames (update_columns), the polyline through them is made again each frame.
void draw_series(const Canvas &c, const PlotStore &st, int slot, ImU32 color) {
    PlotContext::SeriesColumns &k = g_plots->columns[slot];
    int width = std::max(1, (int)(c.pb.x - c.pa.x));
    double per = (c.x1 - c.x0) / width;
    long c0 = (long)std::floor(c.x0 / per);
    update_columns(k, st, per, c0, c0 + width + 1);
    std::vector<ImVec2> &pts = g_plots->line_points;
    pts.clear();
    float last = NAN;
    for (size_t col = 0; col < k.lo.size(); col++) {
        float a = k.lo[col], b = k.hi[col];
        if (std::isnan(a))
            continue;
        float x = c.X(((double)(k.first + (long)col) + 0.5) * per);
        bool rising = !(last > 0.5f * (a + b));
        pts.push_back(ImVec2(x, c.Y(rising ? a : b)));
        if (b > a)
            pts.push_back(ImVec2(x, c.Y(rising ? b : a)));
        last = rising ? b : a;
    }
    stroke_series(c, pts, color);
}

double value_at(const PlotStore &st, double at) {
    size_t i = st.index_at(at);
    if (st.t.empty() || at < st.t.front() || at > st.t.back())
        return NAN;
    if (i > 0 && (i == st.t.size() || at - st.t[i - 1] < st.t[i] - at))
        i--;
    return st.hi[i];
}

void cursor_readout(const GuiState *s, const PlotMemory &p, int slot, const Canvas &c) {
    if (!ImGui::IsItemHovered())
        return;
    float mx = ImGui::GetIO().MousePos.x;
    if (mx < c.pa.x || mx > c.pb.x)
        return;
    double at = c.x0 + (mx - c.pa.x) / (c.pb.x - c.pa.x) * (c.x1 - c.x0);
    c.dl->AddLine(ImVec2(mx, c.pa.y), ImVec2(mx, c.pb.y), IM_COL32(255, 255, 255, 120));
    ImGui::BeginTooltip();
    ImGui::Text("t = %.6f s", at);
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        if (!p.series[k].name[0])
            continue;
        double v = value_at(g_plots->stores[slot * GUI_PLOT_SERIES + k], at);
        char value[64];
        if (std::isfinite(v))
            std::snprintf(value, sizeof value, "%.6g %s", v, series_unit(s, p.series[k].name));
        else
            std::snprintf(value, sizeof value, "no sample here");
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kSeriesColors[k]), "%s  %s",
                           p.series[k].name, value);
    }
    ImGui::EndTooltip();
}

void plot_time(const GuiState *s, const PlotMemory &p, int slot, double t0, double t1,
               GuiPlotInfo *info) {
    double lo, hi;
    window_range(p, slot, t0, t1, 0, &lo, &hi, info);
    info->data_lo = lo, info->data_hi = hi;
    info->band = lo <= hi ? dead_band(p.min_span, lo, hi) : 0.0;
    Canvas c = begin_canvas(s, p);
    c.x0 = t0, c.x1 = t1;
    plot_range(p.min_span, lo, hi, &c.y0, &c.y1);
    y_ticks(c);
    x_ticks(c);
    c.dl->PushClipRect(c.pa, c.pb, true);
    for (int k = 0; k < GUI_PLOT_SERIES; k++)
        draw_series(c, g_plots->stores[slot * GUI_PLOT_SERIES + k], slot * GUI_PLOT_SERIES + k,
                    kSeriesColors[k]);
    info->markers = gui_plot_impact_marks(s, c.dl, c.pa, c.pb, t0, t1, &info->first_marker);
    c.dl->PopClipRect();
    const char *first = p.series[0].name[0] ? p.series[0].name : p.series[1].name;
    finish_canvas(c, series_unit(s, first), "s", info);
    cursor_readout(s, p, slot, c);
}

// ===== Against the first series =====

// The other series against the first, paired by time (each sample of y with the x sample
// nearest it): a contact force against depth draws its hysteresis loop; the newest point is
// marked. At most ~4,000 points a series (evenly strided).
void plot_versus(const GuiState *s, const PlotMemory &p, int slot, double t0, double t1,
                 GuiPlotInfo *info) {
    double lo, hi, xlo, xhi;
    window_range(p, slot, t0, t1, 1, &lo, &hi, info);
    const PlotStore &xs = g_plots->stores[slot * GUI_PLOT_SERIES];
    float a = INFINITY, b = -INFINITY;
    size_t x0 = xs.index_at(t0), x1 = xs.index_at(std::nextafter(t1, INFINITY));
    if (x1 > x0)
        xs.range(x0, x1, &a, &b);
    xlo = a, xhi = b;
    info->data_lo = lo, info->data_hi = hi;
    info->band = lo <= hi ? dead_band(p.min_span, lo, hi) : 0.0;
    Canvas c = begin_canvas(s, p);
    plot_range(p.min_span, lo, hi, &c.y0, &c.y1);
    plot_range(0.0f, xlo, xhi, &c.x0, &c.x1);
    info->x0 = c.x0, info->x1 = c.x1;
    y_ticks(c);
    x_ticks(c);
    c.dl->PushClipRect(c.pa, c.pb, true);
    for (int k = 1; k < GUI_PLOT_SERIES && x1 > x0; k++) {
        const PlotStore &ys = g_plots->stores[slot * GUI_PLOT_SERIES + k];
        size_t i0 = ys.index_at(t0), i1 = ys.index_at(std::nextafter(t1, INFINITY));
        size_t stride = std::max<size_t>(1, (i1 - i0) / 4096);
        std::vector<ImVec2> &pts = g_plots->points;
        pts.clear();
        for (size_t i = i0; i < i1; i += stride)
            pts.push_back(ImVec2(c.X(value_at(xs, ys.t[i])), c.Y(ys.hi[i])));
        if (pts.size() > 1)
            c.dl->AddPolyline(pts.data(), (int)pts.size(), kSeriesColors[k], 0, 1.5f);
        if (!pts.empty())
            c.dl->AddCircleFilled(pts.back(), 3.5f, kSeriesColors[k]);
    }
    c.dl->PopClipRect();
    const char *yname = p.series[1].name[0] ? p.series[1].name : p.series[2].name;
    finish_canvas(c, series_unit(s, yname), series_unit(s, p.series[0].name), info);
}

// ===== The panel =====

void series_combo(const GuiState *s, SeriesRef *r, int k) {
    ImGui::PushID(k);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(kSeriesColors[k]));
    ImGui::SetNextItemWidth(-1);
    bool open = ImGui::BeginCombo("##series", r->name[0] ? r->name : "(none)");
    ImGui::PopStyleColor();
    if (open) {
        char *filter = g_plots->filter;
        ImGui::InputTextWithHint("##filter", "filter", filter, sizeof g_plots->filter);
        if (ImGui::Selectable("(none)", !r->name[0]))
            set_name(r, "");
        for (int i = 0; i < s->live_count; i++)
            if ((!filter[0] || std::strstr(s->live[i].name, filter)) &&
                ImGui::Selectable(s->live[i].name, std::strcmp(r->name, s->live[i].name) == 0))
                set_name(r, s->live[i].name);
        for (int i = 0; i < registry_var_count(s->reg); i++) {
            const char *name = registry_var_name(s->reg, i);
            if ((!filter[0] || std::strstr(name, filter)) &&
                ImGui::Selectable(name, std::strcmp(r->name, name) == 0))
                set_name(r, name);
        }
        ImGui::EndCombo();
    }
    ImGui::PopID();
}

void record_plot(const PlotMemory &p, double t0, double t1, GuiPlotInfo *info) {
    info->versus = p.versus;
    info->t0 = t0, info->t1 = t1;
    info->series = 0;
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        std::snprintf(info->names[k], sizeof info->names[k], "%s",
                      p.series[k].name[0] ? p.series[k].name : "(none)");
        info->series += p.series[k].name[0] != '\0';
    }
}

// Says so when the plot holds less than its window: a series chosen late starts with what the
// registry still held (a pile's half second).
void history_note(const PlotMemory &p, int slot, double t0, GuiPlotInfo *info) {
    double first = INFINITY;
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        const PlotStore &st = g_plots->stores[slot * GUI_PLOT_SERIES + k];
        if (p.series[k].name[0] && !st.t.empty())
            first = fmin(first, st.t.front());
    }
    info->history_from = NAN;
    if (std::isfinite(first) && first > t0 + 1e-9 && t0 > 0.0) {
        ImGui::TextColored(kAmber, "history from %.3f s only: shorter than the window", first);
        info->history_from = first;
    }
}

void plot_one(const GuiState *s, int slot) {
    PlotMemory &p = g_plots->plots[slot];
    ImGui::PushID(slot);
    for (int k = 0; k < GUI_PLOT_SERIES; k++)
        if (k == 0 || p.series[k - 1].name[0] || p.series[k].name[0])
            series_combo(s, &p.series[k], k);
    // Before a window's worth of time the window is [0, window]: the axis stays put and the
    // curves grow from the left.
    double t0 = fmax(0.0, s->clock.display_time - g_plots->window), t1 = t0 + g_plots->window;
    GuiPlotInfo *info = &g_plots->info[slot];
    *info = GuiPlotInfo();
    record_plot(p, t0, t1, info);
    for (int k = 0; k < GUI_PLOT_SERIES; k++)
        std::snprintf(info->units[k], sizeof info->units[k], "%s",
                      series_unit(s, p.series[k].name));
    if (p.versus)
        plot_versus(s, p, slot, t0, t1, info);
    else
        plot_time(s, p, slot, t0, t1, info);
    history_note(p, slot, t0, info);
    // Labels beside their widgets where they fit, else under them: ImGui cuts a widget's own
    // label at the panel's edge (a 250-pixel panel at 1024 x 600).
    ImGui::SetNextItemWidth(120);
    ImGui::InputFloat("##deadband", &p.min_span, 0, 0, "%.3g");
    p.min_span = fmaxf(p.min_span, 0.0f);
    label_beside("dead band (min y span)", false, "dead band");
    ImGui::Checkbox("##versus", &p.versus);
    label_beside("against the first series (else time)", false, "x = the first series");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("the other series against the first instead of time (e.g. contact "
                          "force against penetration: the hysteresis loop)");
    ImGui::PopID();
}

void budget_line() {
    PlotContext &c = *g_plots;
    size_t bytes = 0;
    int halved = 0;
    for (const PlotStore &st : c.stores)
        bytes += st.bytes(), halved = std::max(halved, st.halvings);
    ImGui::SetNextItemWidth(90);
    ImGui::InputFloat("##budget", &c.budget_mib, 0, 0, "%.0f");
    c.budget_mib = std::clamp(c.budget_mib, 1.0f, 4096.0f);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("the plotted series keep every sample within this budget; over it, "
                          "neighbouring samples merge into their minimum and maximum, so peaks "
                          "stay");
    label_beside("MiB plot history");
    char held[64];
    std::snprintf(held, sizeof held, "%.1f MiB held%s", bytes / 1048576.0,
                  halved ? ", merged" : "");
    label_beside(held, true);
    if (halved && ImGui::IsItemHovered())
        ImGui::SetTooltip("samples merged pairwise %d times to fit: each point stands for up "
                          "to %d samples (their minimum and maximum are drawn)",
                          halved, 1 << std::min(halved, 30));
}

void load_cycle_line(const GuiState *s, GuiRequests *r) {
    if (!s->load_cycle || !s->load_cycle[0])
        return;
    ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.1f, 1.0f), "%s", s->load_cycle);
    if (ImGui::Button(s->load_cycle_on ? "Stop the load cycle" : "Start the load cycle"))
        r->load_cycle_toggle = true;
}

// gui_plot_bench's series: a decaying oscillation with one-sample spikes, the worst case for
// drawing (every column's extremes differ), over the window ending at the display time; while
// the clock runs they go on growing at the same step, so a running window slides over them
// as over a recorded series.
double bench_value(int k, size_t i) {
    const PlotContext &c = *g_plots;
    double t = c.bench_t0 + (double)i * c.bench_dt;
    return std::sin(40.0 * t + k) * std::exp(-0.1 * std::fmod(t - c.bench_t0, 50.0)) +
           (i % 9973 == 0);
}

void bench_extend(const GuiState *s) {
    PlotContext &c = *g_plots;
    if (c.bench_live == 0 || !(c.bench_dt > 0.0))
        return; // no plot bench is live: nothing grows (and a zero step would never end)
    for (int k = 0; k < c.bench_live; k++) {
        PlotStore &st = c.stores[k];
        if (std::strncmp(c.stored[k], "bench ", 6) != 0)
            continue; // the user chose another series here
        for (size_t i = c.bench_next; c.bench_t0 + (double)i * c.bench_dt <= s->clock.display_time;
             i++)
            st.add(c.bench_t0 + (double)i * c.bench_dt, bench_value(k, i), (size_t)1 << 40);
    }
    while (c.bench_t0 + (double)c.bench_next * c.bench_dt <= s->clock.display_time)
        c.bench_next++;
}

void bench_fill(const GuiState *s) {
    PlotContext &c = *g_plots;
    int n = std::min(c.bench_series, kSeriesMax);
    c.count = (n + GUI_PLOT_SERIES - 1) / GUI_PLOT_SERIES;
    c.bench_t0 = fmax(0.0, s->clock.display_time - c.bench_seconds);
    c.bench_next = 0;
    for (int k = 0; k < n; k++) {
        PlotMemory &p = c.plots[k / GUI_PLOT_SERIES];
        std::snprintf(p.series[k % GUI_PLOT_SERIES].name, sizeof p.series[0].name, "bench %d", k);
        std::snprintf(c.stored[k], sizeof c.stored[k], "bench %d", k);
        c.stores[k].clear();
    }
    c.bench_live = n;
    bench_extend(s);
    c.window = (float)c.bench_seconds;
    c.bench_series = 0;
    c.bench_sum = c.bench_max = c.bench_feed = 0.0;
    c.bench_frames = 0;
}

// CPU time of this thread: under load a wall clock measures the other processes too.
double thread_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_count() {
    PlotContext &c = *g_plots;
    c.bench_sum += c.draw_seconds;
    c.bench_max = std::max(c.bench_max, c.draw_seconds);
    c.bench_frames++;
}

// A plot of the contact-map panel: n values evenly over [t0, t1] s, with the time plots' ticks,
// grid and units beside the axes (the y unit above its labels, s under them), the title above.
void map_plot(const char *title, const float *v, int n, double t0, double t1, const char *yunit) {
    Canvas c;
    c.dl = ImGui::GetWindowDrawList();
    c.line = ImGui::GetTextLineHeight();
    const float height = 60.0f;
    ImVec2 a = ImGui::GetCursorScreenPos();
    float width = ImGui::GetContentRegionAvail().x;
    float margin = ImGui::CalcTextSize("-0.0000").x + 6;
    ImGui::InvisibleButton(title, ImVec2(width, c.line + 2 + height + c.line + 4));
    c.dl->AddText(ImVec2(a.x + margin, a.y), kLabel, title);
    c.pa = ImVec2(a.x + margin, a.y + c.line + 2);
    c.pb = ImVec2(a.x + width - 2, c.pa.y + height);
    c.dl->AddRectFilled(c.pa, c.pb, IM_COL32(20, 22, 28, 255));
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (std::isfinite(v[i]))
            lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    plot_range(0.0f, lo, hi, &c.y0, &c.y1);
    c.x0 = t0, c.x1 = t1 > t0 ? t1 : t0 + 1.0;
    y_ticks(c);
    x_ticks(c);
    std::vector<ImVec2> &pts = g_plots->points;
    pts.clear();
    for (int i = 0; i < n; i++)
        pts.push_back(ImVec2(c.X(c.x0 + (c.x1 - c.x0) * i / std::max(n - 1, 1)), c.Y(v[i])));
    c.dl->PushClipRect(c.pa, c.pb, true);
    stroke_series(c, pts, kSeriesColors[1]);
    c.dl->PopClipRect();
    GuiPlotInfo unused;
    finish_canvas(c, yunit, "s", &unused);
}

} // namespace

void gui_plots_panel(const GuiState *s, GuiRequests *r) {
    if (!g_plots || !s->reg)
        return;
    g_plots->need_room = false; // the sections above read it in the frame after it was set
    follow_registry(s);
    apply_requests();
    follow_resets(s);
    if (g_plots->bench_series > 0)
        bench_fill(s);
    double fed = thread_seconds();
    bench_extend(s);
    g_plots->bench_feed += thread_seconds() - fed;
    feed(s);
    if (!ImGui::CollapsingHeader("Plots", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    double start = thread_seconds();
    load_cycle_line(s, r);
    ImGui::SetNextItemWidth(-80);
    ImGui::SliderFloat("window", &g_plots->window, 0.01f, 20.0f, "%.2f s",
                       ImGuiSliderFlags_Logarithmic);
    budget_line();
    for (int k = 0; k < g_plots->count; k++) {
        plot_one(s, k);
        ImGui::Separator();
    }
    if (g_plots->count < GUI_MAX_PLOTS && ImGui::Button("Add a plot"))
        g_plots->plots[g_plots->count++] = PlotMemory();
    if (g_plots->count > 1) {
        ImGui::SameLine();
        if (ImGui::Button("Remove the last"))
            g_plots->count--;
    }
    g_plots->draw_seconds = thread_seconds() - start;
    bench_count();
}

// The selected body's contact map (000 ch. 3): a node's step response h(kT) and impulse
// response g(kT) = (h(kT) - h((k-1)T)) / T (eq. 3.16), and the live normal force of its contacts.
// The node shown follows the contact's active node unless the user picks one.
void gui_map_panel(const GuiState *s) {
    if (!g_plots)
        return;
    const GuiMapView *m = s->map_view;
    if (!m || !m->map || !ImGui::CollapsingHeader("Contact map", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    int &node = g_plots->map_node;
    bool &follow = g_plots->map_follow;
    const ContactMap *map = m->map;
    int count = contact_map_node_count(map), n = contact_map_samples(map);
    double T = contact_map_period(map);
    ImGui::TextWrapped("%s: %d node%s, T = %g s, %d samples", m->body, count, count == 1 ? "" : "s",
                       T, n);
    if (m->active_node >= 0)
        ImGui::TextColored(kRed, "in contact at node %d", m->active_node);
    else
        ImGui::TextUnformatted("not in contact");
    ImGui::Checkbox("follow the contact", &follow);
    if (follow && m->active_node >= 0)
        node = m->active_node;
    ImGui::SetNextItemWidth(-60);
    ImGui::SliderInt("node", &node, 0, count - 1);
    node = node < 0 ? 0 : (node >= count ? count - 1 : node);
    const ContactMapNode *cn = contact_map_node(map, node);
    if (std::isfinite(cn->angle))
        ImGui::Text("angle %.1f deg", cn->angle);
    float *step = g_plots->map_step, *impulse = g_plots->map_impulse;
    const double *h = contact_map_step(map, node);
    int stride = n > 512 ? (n + 511) / 512 : 1, k = 0;
    for (int i = 0; i < n && k < 512; i += stride, k++) {
        step[k] = (float)h[i];
        impulse[k] = (float)((h[i] - (i > 0 ? h[i - 1] : 0.0)) / T);
    }
    // Each against time in seconds with its unit: the step response h(kT) (N/m), the impulse
    // response g(kT) (N/(m s)) over the map's n T, the live force (N) over its last seconds.
    char title[96];
    double span = std::max((double)(k > 0 ? (k - 1) * stride : 0), 1.0) * T;
    std::snprintf(title, sizeof title, "step response h(kT), last %.4g", h[n - 1]);
    map_plot(title, step, k, 0.0, span, "N/m");
    map_plot("impulse response g(kT)", impulse, k, 0.0, span, "N/(m s)");
    float last = m->force_count ? m->force[m->force_count - 1] : 0.0f;
    std::snprintf(title, sizeof title, "contact force %.4g N now", last);
    map_plot(title, m->force, m->force_count, -m->force_seconds, 0.0, "N");
}

bool gui_plots_create() {
    delete g_plots;
    g_plots = new (std::nothrow) PlotContext();
    return g_plots != nullptr;
}

void gui_plots_destroy() {
    delete g_plots;
    g_plots = nullptr;
}

bool gui_plots_need_room(const GuiState *s) {
    return g_plots && g_plots->need_room && s->height < 900;
}

double gui_plots_draw_seconds() {
    return g_plots ? g_plots->draw_seconds : 0.0;
}

extern "C" int gui_plot_info(int k, GuiPlotInfo *out) {
    if (!g_plots)
        return 0;
    if (k >= 0 && k < g_plots->count && k < GUI_MAX_PLOTS)
        *out = g_plots->info[k];
    return g_plots->count;
}

extern "C" void gui_plot_window(double seconds) {
    if (g_plots)
        g_plots->window = (float)fmin(fmax(seconds, 0.01), 20.0);
}

extern "C" double gui_plot_window_seconds(void) {
    return g_plots ? g_plots->window : 5.0;
}

extern "C" void gui_plot_set(int k, int i, const char *name, int versus, double band) {
    if (!g_plots || k < 0 || k >= GUI_MAX_PLOTS || i < 0 || i >= GUI_PLOT_SERIES ||
        g_plots->request_count == (int)(sizeof g_plots->requests / sizeof g_plots->requests[0]))
        return;
    PlotSetRequest &r = g_plots->requests[g_plots->request_count++];
    r = PlotSetRequest();
    r.k = k, r.i = i, r.versus = versus, r.band = band;
    r.has_name = name != nullptr;
    std::snprintf(r.name, sizeof r.name, "%s", name ? name : "");
}

extern "C" void gui_plot_budget(double mib) {
    if (g_plots)
        g_plots->budget_mib = (float)std::clamp(mib, 1.0, 4096.0);
}

extern "C" long gui_plot_held(size_t *bytes, double *budget_mib, int *halvings, double *oldest) {
    long samples = 0;
    *bytes = 0, *halvings = 0, *oldest = NAN;
    *budget_mib = g_plots ? g_plots->budget_mib : 0.0;
    for (int k = 0; g_plots && k < kSeriesMax; k++) {
        const PlotStore &st = g_plots->stores[k];
        samples += (long)st.t.size();
        *bytes += st.bytes();
        *halvings = std::max(*halvings, st.halvings);
        if (!st.t.empty() && !(st.t.front() >= *oldest))
            *oldest = st.t.front();
    }
    return samples;
}

extern "C" void gui_plots_spec(char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; g_plots && k < g_plots->count; k++) {
        const PlotMemory &p = g_plots->plots[k];
        char plot[600] = "";
        for (int i = 0; i < GUI_PLOT_SERIES; i++)
            if (p.series[i].name[0])
                std::snprintf(plot + std::strlen(plot), sizeof plot - std::strlen(plot), "%s%s%s",
                              plot[0] ? ", " : (p.versus ? "@" : ""), p.series[i].name, "");
        size_t need = std::strlen(plot) + (used ? 2 : 0);
        if (!plot[0] || used + need + 1 > size)
            continue; // only whole plots: a cut name would name another variable or none
        std::snprintf(out + used, size - used, "%s%s", used ? "; " : "", plot);
        used += need;
    }
}

extern "C" void gui_plot_bench(int series, double seconds, double dt) {
    if (!g_plots || series <= 0 || !(seconds > 0) || !(dt > 0) || seconds / dt > 1e8)
        return;
    g_plots->bench_series = series;
    g_plots->bench_seconds = seconds;
    g_plots->bench_dt = dt;
}

extern "C" int gui_plot_columns_check(int *differ) {
    int checked = 0;
    *differ = 0;
    for (int slot = 0; g_plots && slot < kSeriesMax; slot++) {
        const PlotContext::SeriesColumns &k = g_plots->columns[slot];
        const PlotStore &st = g_plots->stores[slot];
        if (k.rewrites != st.rewrites || !(k.per > 0))
            continue; // not drawn since its samples changed: nothing kept to check
        for (size_t col = 0; col < k.lo.size(); col++, checked++) {
            long at = k.first + (long)col;
            size_t i = st.index_at((double)at * k.per), j = st.index_at((double)(at + 1) * k.per);
            float a = NAN, b = NAN;
            if (j > i)
                st.range(i, j, &a, &b);
            bool same =
                (std::isnan(a) && std::isnan(k.lo[col])) || (a == k.lo[col] && b == k.hi[col]);
            *differ += !same;
        }
    }
    return checked;
}

extern "C" int gui_plot_bench_report(double *mean_s, double *max_s, double *feed_s) {
    int n = g_plots ? g_plots->bench_frames : 0;
    *mean_s = n ? g_plots->bench_sum / n : 0.0;
    *max_s = n ? g_plots->bench_max : 0.0;
    *feed_s = n ? g_plots->bench_feed / n : 0.0;
    return n;
}
