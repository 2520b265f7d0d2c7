// The right panel's plots and contact-map panel (gui_plots.cpp), called by gui.cpp. Internal to
// src/gui: the C API is issim/gui.h.
#ifndef ISSIM_GUI_PLOTS_H
#define ISSIM_GUI_PLOTS_H

#include <imgui.h>

// issim's headers are C11: its one C-only keyword gets the C++ spelling here.
#define _Noreturn [[noreturn]]
extern "C" {
#include "issim/contactmap.h"
#include "issim/core.h"
#include "issim/registry.h"
#include "issim/thing.h"
}
#include "issim/gui.h"
#undef _Noreturn

#include <cstddef>
#include <vector>

const int kPlotLevels = 5; // pyramid levels: blocks of 16, 256, ... 16^5 samples

// One plotted series' history, oldest first (gui_plot_store.cpp). A sample is a time and the
// smallest and largest value it stands for (equal until samples merge to fit the budget).
struct PlotStore {
    std::vector<double> t;
    std::vector<float> lo, hi;
    std::vector<float> level_lo[kPlotLevels], level_hi[kPlotLevels];
    double fed = -1e300; // the newest time taken in
    int halvings = 0;    // times the samples merged pairwise to fit the budget
    // Bumped by every change of the samples: a drawing cached from this store is stale when
    // its version differs (the paused plots' column extremes, gui_plots.cpp).
    unsigned long version = 0;
    // Bumped when samples already held change (cleared, cut by a rewind, merged to fit the
    // budget), not by an append: a pixel column drawn from samples that all came before the
    // newest stays right until this moves (the sliding window's kept columns, gui_plots.cpp).
    unsigned long rewrites = 0;

    void clear();
    // Appends a sample later than every other; merges pairs while over budget (bytes).
    void add(double time, double value, size_t budget);
    // Drops the samples at or after `from` (a rewind recomputed them).
    void truncate(double from);
    size_t bytes() const;
    // The first sample at or after time.
    size_t index_at(double time) const;
    // The same, searching from sample `from` (at or before it) on.
    size_t index_from(size_t from, double time) const;
    // The smallest and largest value of samples [i0, i1).
    void range(size_t i0, size_t i1, float *lo, float *hi) const;

  private:
    void push(double time, float low, float high);
    void complete_blocks();
    void halve();
};

// The plots' state lives from gui_create to gui_destroy; false: out of memory.
bool gui_plots_create();
void gui_plots_destroy();
// The "Plots" section: the series chosen, the window, the plots drawn.
void gui_plots_panel(const GuiState *s, GuiRequests *r);
// True for one frame after a scene that brings its own plots (universe.plots: the rattleback's
// spin) opened in a window under 900 pixels high: the sections above the plots (Universe,
// Recording) open folded, so its plots are on screen without scrolling.
bool gui_plots_need_room(const GuiState *s);
// CPU time the last frame's Plots section took to build, s (the plot benchmark).
double gui_plots_draw_seconds();
// The "Contact map" section: the selected body's map responses and its live contact force.
void gui_map_panel(const GuiState *s);

#endif
