// The plots and the contact-map panel of the right panel (gui_plots.h): series of registry
// variables and display quantities against time or against each other, with units, ranges, a
// dead band and a cursor readout. Display thread only.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gui_plots.h"

namespace {

const ImVec4 kRed(1.0f, 0.4f, 0.35f, 1.0f);

// A series: a registry variable (its history) or a display-sampled quantity (GuiState.live).
struct SeriesRef {
    RegistryVarId var = {}; // valid: a registry variable
    int live = -1;          // >= 0: GuiState.live[live]
};

bool series_set(const SeriesRef &r) {
    return !registry_var_id_is_null(r.var) || r.live >= 0;
}

const char *series_name(const GuiState *s, const SeriesRef &r) {
    if (r.live >= 0 && r.live < s->live_count)
        return s->live[r.live].name;
    if (registry_var_valid(s->reg, r.var))
        return registry_var_name(s->reg, r.var.index);
    return "(none)";
}

const char *series_unit(const GuiState *s, const SeriesRef &r) {
    if (r.live >= 0 && r.live < s->live_count)
        return s->live[r.live].unit;
    if (registry_var_valid(s->reg, r.var))
        return registry_var_unit(s->reg, r.var.index);
    return "";
}

const ImU32 kSeriesColors[GUI_PLOT_SERIES] = {
    IM_COL32(255, 200, 60, 255), IM_COL32(90, 190, 255, 255), IM_COL32(240, 110, 200, 255)};

// The samples of a series in [t0, t1], oldest first; returns how many.
int series_samples(const GuiState *s, const SeriesRef &r, double t0, double t1, double *t,
                   double *v, int max) {
    if (r.live >= 0 && r.live < s->live_count) {
        const GuiSeries &g = s->live[r.live];
        int n = 0;
        for (int i = 0; i < g.count && n < max; i++)
            if (g.t[i] >= t0 && g.t[i] <= t1) {
                t[n] = g.t[i];
                v[n++] = g.v[i];
            }
        return n;
    }
    if (!registry_var_valid(s->reg, r.var))
        return 0;
    return registry_history(s->reg, r.var.index, t0, t1, t, v, max);
}

struct PlotMemory {
    SeriesRef series[GUI_PLOT_SERIES];
    float min_span = 0.0f; // the dead band: the y range never narrower (0: automatic)
    bool versus = false;   // the other series against the first (a force-depth loop), not time
};

// gui_plot_set's requests, applied at the next frame (names resolve against that registry).
struct PlotSetRequest {
    int k, i, versus;
    double band;
    bool has_name;
    char name[160];
};

// The plots' state: one context, created with the GUI (gui_plots_create).
struct PlotContext {
    PlotMemory plots[GUI_MAX_PLOTS];
    int count = 2;
    RegistryVarId chosen_for; // a variable of the registry the plots were chosen for
    char filter[64] = "";
    GuiPlotInfo info[GUI_MAX_PLOTS]; // what each plot drew last frame
    // gui_plot_set's requests, applied at the next frame (names resolve against that registry)
    PlotSetRequest requests[16];
    int request_count = 0;
    float window = 5.0f; // s
    double times[GUI_PLOT_SERIES][8192], values[GUI_PLOT_SERIES][8192];
    ImVec2 points[8192];
    int map_node = 0;
    bool map_follow = true;
    float map_step[512], map_impulse[512];
};

PlotContext *g_plots = nullptr; // ImGui's callers hold no user pointer: the one instance

SeriesRef series_named(const GuiState *s, const char *name) {
    SeriesRef r;
    for (int i = 0; i < s->live_count; i++)
        if (std::strcmp(s->live[i].name, name) == 0)
            r.live = i;
    if (r.live < 0 && name[0])
        r.var = registry_var_id(s->reg, name);
    return r;
}

void apply_plot_requests(const GuiState *s) {
    for (int q = 0; q < g_plots->request_count; q++) {
        const PlotSetRequest &r = g_plots->requests[q];
        g_plots->count = std::max(g_plots->count, r.k + 1);
        PlotMemory &p = g_plots->plots[r.k];
        if (r.has_name)
            p.series[r.i] = series_named(s, r.name);
        if (r.versus >= 0)
            p.versus = r.versus != 0;
        if (r.band >= 0)
            p.min_span = (float)r.band;
    }
    g_plots->request_count = 0;
}

// Energy, the first height and the summed contact force, once per registry (a new scene's
// registry issues new ids).
void choose_default_plots(const GuiState *s) {
    if (!s->reg || registry_var_valid(s->reg, g_plots->chosen_for))
        return;
    g_plots->chosen_for = registry_var_id_at(s->reg, 0);
    for (int k = 0; k < GUI_MAX_PLOTS; k++)
        g_plots->plots[k] = PlotMemory();
    if (s->load_cycle_on) { // the load and the contact force in time; force against depth
        g_plots->plots[0].series[0] = series_named(s, "load cycle: prescribed load");
        g_plots->plots[0].series[1] = series_named(s, "contacts: summed normal force");
        g_plots->plots[1].series[0] = series_named(s, "contacts: deepest penetration");
        g_plots->plots[1].series[1] = series_named(s, "contacts: summed normal force");
        g_plots->plots[1].versus = true;
        g_plots->count = 2;
        return;
    }
    g_plots->count = 2;
    g_plots->plots[0].series[0].var = registry_var_id(s->reg, "universe.energy.total");
    int n = registry_var_count(s->reg);
    for (int i = 0; i < n; i++)
        if (std::strstr(registry_var_name(s->reg, i), ".pos.z")) {
            g_plots->plots[1].series[0].var = registry_var_id_at(s->reg, i);
            break;
        }
    // The contact force in a plot of its own (its unit): the engine thread's peak per output
    // step, so an impact between two drawn frames shows.
    RegistryVarId force = registry_var_id(s->reg, "contacts.force_sum.peak");
    if (!registry_var_id_is_null(force)) {
        g_plots->plots[2].series[0].var = force;
        g_plots->count = 3;
    }
}

void series_combo(const GuiState *s, SeriesRef *r, int k) {
    ImGui::PushID(k);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(kSeriesColors[k]));
    ImGui::SetNextItemWidth(-1);
    bool open = ImGui::BeginCombo("##series", series_name(s, *r));
    ImGui::PopStyleColor();
    if (open) {
        ImGui::InputTextWithHint("##filter", "filter", g_plots->filter, sizeof g_plots->filter);
        if (ImGui::Selectable("(none)", !series_set(*r)))
            *r = SeriesRef();
        for (int i = 0; i < s->live_count; i++) {
            if (g_plots->filter[0] && !std::strstr(s->live[i].name, g_plots->filter))
                continue;
            if (ImGui::Selectable(s->live[i].name, r->live == i)) {
                *r = SeriesRef();
                r->live = i;
            }
        }
        for (int i = 0; i < registry_var_count(s->reg); i++) {
            const char *name = registry_var_name(s->reg, i);
            if (g_plots->filter[0] && !std::strstr(name, g_plots->filter))
                continue;
            if (ImGui::Selectable(name, r->live < 0 && r->var.index == i &&
                                            registry_var_valid(s->reg, r->var))) {
                *r = SeriesRef();
                r->var = registry_var_id_at(s->reg, i);
            }
        }
        ImGui::EndCombo();
    }
    ImGui::PopID();
}

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

struct PlotData {
    int n[GUI_PLOT_SERIES];
    double *t[GUI_PLOT_SERIES], *v[GUI_PLOT_SERIES];
};

// Per pixel column the smallest and largest sample: spikes survive any window length.
void draw_series(ImDrawList *dl, const double *t, const double *v, int n, ImVec2 a, ImVec2 b,
                 double t0, double t1, double y0, double y1, ImU32 color) {
    if (n <= 0)
        return;
    float w = b.x - a.x, h = b.y - a.y;
    auto X = [&](double tt) { return a.x + (float)((tt - t0) / (t1 - t0)) * w; };
    auto Y = [&](double vv) { return b.y - (float)((vv - y0) / (y1 - y0)) * h; };
    ImVec2 *points = g_plots->points;
    int m = 0;
    for (int i = 0; i < n && m < 4094;) {
        int column = (int)X(t[i]);
        double lo = v[i], hi = v[i], first = v[i], last = v[i];
        int j = i + 1;
        while (j < n && (int)X(t[j]) == column) {
            lo = fmin(lo, v[j]), hi = fmax(hi, v[j]), last = v[j];
            j++;
        }
        points[m++] = ImVec2((float)column, Y(first));
        if (hi > lo) {
            points[m++] = ImVec2((float)column, Y(first <= last ? lo : hi));
            points[m++] = ImVec2((float)column, Y(first <= last ? hi : lo));
        }
        if (m < 4094)
            points[m++] = ImVec2((float)column, Y(last));
        i = j;
    }
    dl->AddPolyline(points, m, color, 0, 1.5f);
}

// The sample nearest `at`, NAN outside the series' span (no value to read there).
double sample_at(const double *t, const double *v, int n, double at) {
    if (n <= 0 || at < t[0] || at > t[n - 1])
        return NAN;
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || fabs(t[i] - at) < fabs(t[best] - at))
            best = i;
    return best >= 0 ? v[best] : NAN;
}

// The data range of series [from, GUI_PLOT_SERIES).
void data_range(const PlotData &d, int from, double *lo, double *hi) {
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = from; k < GUI_PLOT_SERIES; k++)
        for (int i = 0; i < d.n[k]; i++)
            if (std::isfinite(d.v[k][i]))
                *lo = fmin(*lo, d.v[k][i]), *hi = fmax(*hi, d.v[k][i]);
}

// The frame, the zero line and the y labels of a canvas; records the y axis in info.
struct Canvas {
    ImDrawList *dl;
    ImVec2 pa, pb;
    float line;
};

const ImU32 kLabel = IM_COL32(170, 170, 180, 255);

Canvas begin_canvas(double y0, double y1, const char *unit, GuiPlotInfo *info) {
    Canvas c;
    c.dl = ImGui::GetWindowDrawList();
    c.line = ImGui::GetTextLineHeight();
    ImVec2 a = ImGui::GetCursorScreenPos();
    float width = ImGui::GetContentRegionAvail().x, height = 90.0f;
    ImGui::InvisibleButton("##canvas", ImVec2(width, height + c.line));
    c.pa = a;
    c.pb = ImVec2(a.x + width, a.y + height);
    c.dl->AddRectFilled(c.pa, c.pb, IM_COL32(20, 22, 28, 255));
    c.dl->AddRect(c.pa, c.pb, IM_COL32(90, 90, 100, 255));
    if (y0 < 0 && y1 > 0) { // the zero line
        float yz = c.pb.y - (float)((0 - y0) / (y1 - y0)) * height;
        c.dl->AddLine(ImVec2(c.pa.x, yz), ImVec2(c.pb.x, yz), IM_COL32(70, 70, 80, 255));
    }
    std::snprintf(info->y_label[1], sizeof info->y_label[1], "%.4g %s", y1, unit);
    std::snprintf(info->y_label[0], sizeof info->y_label[0], "%.4g %s", y0, unit);
    c.dl->AddText(ImVec2(c.pa.x + 3, c.pa.y + 1), kLabel, info->y_label[1]);
    c.dl->AddText(ImVec2(c.pa.x + 3, c.pb.y - c.line - 1), kLabel, info->y_label[0]);
    info->y0 = y0, info->y1 = y1;
    return c;
}

// The x axis' end labels under the canvas.
void x_labels(const Canvas &c, GuiPlotInfo *info) {
    c.dl->AddText(ImVec2(c.pa.x, c.pb.y + 1), kLabel, info->x_label[0]);
    c.dl->AddText(ImVec2(c.pb.x - ImGui::CalcTextSize(info->x_label[1]).x, c.pb.y + 1), kLabel,
                  info->x_label[1]);
}

void plot_canvas(const GuiState *s, const PlotMemory &p, const PlotData &d, double t0, double t1,
                 GuiPlotInfo *info) {
    double lo, hi, y0, y1;
    data_range(d, 0, &lo, &hi);
    plot_range(p.min_span, lo, hi, &y0, &y1);
    info->data_lo = lo, info->data_hi = hi;
    info->band = lo <= hi ? dead_band(p.min_span, lo, hi) : 0.0;
    const SeriesRef &first = p.series[0];
    Canvas c = begin_canvas(y0, y1, series_unit(s, series_set(first) ? first : p.series[1]), info);
    ImDrawList *dl = c.dl;
    ImVec2 pa = c.pa, pb = c.pb;
    float width = pb.x - pa.x;
    dl->PushClipRect(pa, pb, true);
    for (int k = 0; k < GUI_PLOT_SERIES; k++)
        draw_series(dl, d.t[k], d.v[k], d.n[k], pa, pb, t0, t1, y0, y1, kSeriesColors[k]);
    dl->PopClipRect();
    std::snprintf(info->x_label[0], sizeof info->x_label[0], "%.3f s", t0);
    std::snprintf(info->x_label[1], sizeof info->x_label[1], "%.3f s", t1);
    x_labels(c, info);
    if (!ImGui::IsItemHovered())
        return;
    float mx = ImGui::GetIO().MousePos.x;
    double at = t0 + (mx - pa.x) / width * (t1 - t0);
    dl->AddLine(ImVec2(mx, pa.y), ImVec2(mx, pb.y), IM_COL32(255, 255, 255, 120));
    ImGui::BeginTooltip();
    ImGui::Text("t = %.6f s", at);
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        if (!series_set(p.series[k]))
            continue;
        double v = sample_at(d.t[k], d.v[k], d.n[k], at);
        char value[64];
        if (std::isfinite(v))
            std::snprintf(value, sizeof value, "%.6g %s", v, series_unit(s, p.series[k]));
        else
            std::snprintf(value, sizeof value, "no sample here");
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kSeriesColors[k]), "%s  %s",
                           series_name(s, p.series[k]), value);
    }
    ImGui::EndTooltip();
}

// The index of the sample of (t, n) nearest `at`, walking forward from *from (the callers ask
// in increasing time, so a pass over two series is linear).
int nearest_from(const double *t, int n, double at, int *from) {
    int i = *from;
    while (i + 1 < n && fabs(t[i + 1] - at) <= fabs(t[i] - at))
        i++;
    *from = i;
    return i;
}

// The other series against the first, paired by time (each sample of y with the x sample
// nearest it): a contact force against depth draws its hysteresis loop. The newest point is
// marked. Both axes have ranges, units and the dead band.
void plot_canvas_versus(const GuiState *s, const PlotMemory &p, const PlotData &d,
                        GuiPlotInfo *info) {
    double lo, hi, y0, y1, xlo, xhi, x0, x1;
    data_range(d, 1, &lo, &hi);
    plot_range(p.min_span, lo, hi, &y0, &y1);
    info->data_lo = lo, info->data_hi = hi;
    info->band = lo <= hi ? dead_band(p.min_span, lo, hi) : 0.0;
    xlo = INFINITY, xhi = -INFINITY;
    for (int i = 0; i < d.n[0]; i++)
        if (std::isfinite(d.v[0][i]))
            xlo = fmin(xlo, d.v[0][i]), xhi = fmax(xhi, d.v[0][i]);
    plot_range(0.0f, xlo, xhi, &x0, &x1);
    info->x0 = x0, info->x1 = x1;
    const char *yunit = series_unit(s, series_set(p.series[1]) ? p.series[1] : p.series[2]);
    Canvas c = begin_canvas(y0, y1, yunit, info);
    float w = c.pb.x - c.pa.x, h = c.pb.y - c.pa.y;
    auto X = [&](double v) { return c.pa.x + (float)((v - x0) / (x1 - x0)) * w; };
    auto Y = [&](double v) { return c.pb.y - (float)((v - y0) / (y1 - y0)) * h; };
    ImVec2 *points = g_plots->points;
    c.dl->PushClipRect(c.pa, c.pb, true);
    for (int k = 1; k < GUI_PLOT_SERIES; k++) {
        int m = 0, from = 0;
        for (int i = 0; i < d.n[k] && d.n[0] > 0 && m < 8192; i++) {
            int j = nearest_from(d.t[0], d.n[0], d.t[k][i], &from);
            points[m++] = ImVec2(X(d.v[0][j]), Y(d.v[k][i]));
        }
        if (m > 1)
            c.dl->AddPolyline(points, m, kSeriesColors[k], 0, 1.5f);
        if (m > 0)
            c.dl->AddCircleFilled(points[m - 1], 3.5f, kSeriesColors[k]);
    }
    c.dl->PopClipRect();
    const char *xunit = series_unit(s, p.series[0]);
    std::snprintf(info->x_label[0], sizeof info->x_label[0], "%.4g %s", x0, xunit);
    std::snprintf(info->x_label[1], sizeof info->x_label[1], "%.4g %s", x1, xunit);
    x_labels(c, info);
    const char *title = "against the first";
    c.dl->AddText(ImVec2(c.pb.x - ImGui::CalcTextSize(title).x - 3, c.pa.y + 1), kLabel, title);
}

// What plot_one drew, for gui_plot_info.
void record_plot(const GuiState *s, const PlotMemory &p, const PlotData &d, double t0, double t1,
                 GuiPlotInfo *info) {
    info->versus = p.versus;
    info->t0 = t0, info->t1 = t1;
    info->series = 0;
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        std::snprintf(info->names[k], sizeof info->names[k], "%s", series_name(s, p.series[k]));
        std::snprintf(info->units[k], sizeof info->units[k], "%s", series_unit(s, p.series[k]));
        info->samples[k] = d.n[k];
        info->series += series_set(p.series[k]);
    }
}

void plot_one(const GuiState *s, int slot, float window) {
    PlotMemory &p = g_plots->plots[slot];
    ImGui::PushID(slot);
    for (int k = 0; k < GUI_PLOT_SERIES; k++)
        if (k == 0 || series_set(p.series[k - 1]) || series_set(p.series[k]))
            series_combo(s, &p.series[k], k);
    // Before a window's worth of time the window is [0, window]: the axis stays put and the
    // curves grow from the left.
    double t0 = fmax(0.0, s->display_time - window), t1 = t0 + window;
    PlotData d = {};
    for (int k = 0; k < GUI_PLOT_SERIES; k++) {
        d.t[k] = g_plots->times[k];
        d.v[k] = g_plots->values[k];
        d.n[k] =
            series_samples(s, p.series[k], t0, t1, g_plots->times[k], g_plots->values[k], 8192);
    }
    GuiPlotInfo *info = &g_plots->info[slot];
    *info = GuiPlotInfo();
    record_plot(s, p, d, t0, t1, info);
    if (p.versus)
        plot_canvas_versus(s, p, d, info);
    else
        plot_canvas(s, p, d, t0, t1, info);
    ImGui::SetNextItemWidth(120);
    ImGui::InputFloat("dead band (min y span)", &p.min_span, 0, 0, "%.3g");
    p.min_span = fmaxf(p.min_span, 0.0f);
    ImGui::Checkbox("against the first series (else time)", &p.versus);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("the other series against the first instead of time (e.g. contact "
                          "force against penetration: the hysteresis loop)");
    ImGui::PopID();
}

} // namespace

void gui_plots_panel(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Plots", ImGuiTreeNodeFlags_DefaultOpen) || !s->reg)
        return;
    choose_default_plots(s);
    apply_plot_requests(s);
    if (s->load_cycle && s->load_cycle[0]) {
        ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.1f, 1.0f), "%s", s->load_cycle);
        if (ImGui::Button(s->load_cycle_on ? "Stop the load cycle" : "Start the load cycle"))
            r->load_cycle_toggle = true;
    }
    ImGui::SetNextItemWidth(-80);
    ImGui::SliderFloat("window", &g_plots->window, 0.01f, 20.0f, "%.2f s",
                       ImGuiSliderFlags_Logarithmic);
    for (int k = 0; k < g_plots->count; k++) {
        plot_one(s, k, g_plots->window);
        ImGui::Separator();
    }
    if (g_plots->count < GUI_MAX_PLOTS && ImGui::Button("Add a plot"))
        g_plots->plots[g_plots->count++] = PlotMemory();
    if (g_plots->count > 1) {
        ImGui::SameLine();
        if (ImGui::Button("Remove the last"))
            g_plots->count--;
    }
}

// The selected body's contact map (000 ch. 3): a node's step response h(kT) and impulse
// response g(kT) = (h(kT) - h((k-1)T)) / T (eq. 3.16), and the live normal force of its contacts.
// The node shown follows the contact's active node unless the user picks one.
void gui_map_panel(const GuiState *s) {
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
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "h(kT), %.4g N/m at the end", h[n - 1]);
    float w = ImGui::GetContentRegionAvail().x;
    ImGui::PlotLines("##step", step, k, 0, overlay, FLT_MAX, FLT_MAX, ImVec2(w, 55));
    std::snprintf(overlay, sizeof overlay, "g(kT) over %.3g s", n * T);
    ImGui::PlotLines("##impulse", impulse, k, 0, overlay, FLT_MAX, FLT_MAX, ImVec2(w, 55));
    float last = m->force_count ? m->force[m->force_count - 1] : 0.0f;
    std::snprintf(overlay, sizeof overlay, "force %.4g N (last %.3g s)", last, m->force_seconds);
    ImGui::PlotLines("##force", m->force, m->force_count, 0, overlay, 0.0f, FLT_MAX, ImVec2(w, 55));
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

extern "C" int gui_plot_info(int k, GuiPlotInfo *out) {
    if (!g_plots)
        return 0;
    if (k >= 0 && k < g_plots->count && k < GUI_MAX_PLOTS)
        *out = g_plots->info[k];
    return g_plots->count;
}

extern "C" void gui_plot_window(double seconds) {
    if (!g_plots)
        return;
    g_plots->window = (float)fmin(fmax(seconds, 0.01), 20.0);
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
