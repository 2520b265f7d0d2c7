// Time around impacts and branches in the GUI (gui_playback.cpp; issue 31 items 1 and 6), called
// by gui.cpp (transport, video) and gui_plots.cpp (time plots). Internal to src/gui.
#ifndef ISSIM_GUI_PLAYBACK_H
#define ISSIM_GUI_PLAYBACK_H

#include "gui_plots.h" // issim's C headers, included the C++ way

// Slow motion around impacts, "pause at next contact", and a branch's question with the
// preference that answers it.
void gui_playback_controls(const GuiState *s, GuiRequests *r);
// Marks over the timeline (the history slider just drawn, spanning lo .. hi s): impacts (amber),
// accepted edits (cyan), the last branch (magenta).
void gui_timeline_marks(const GuiState *s, double lo, double hi);
// Impacts in t0 .. t1 as dashed amber lines over a time plot's area pa .. pb; returns how many,
// the first one's time in *first (NaN: none).
int gui_plot_impact_marks(const GuiState *s, ImDrawList *dl, ImVec2 pa, ImVec2 pb, double t0,
                          double t1, double *first);
// The video's slow-motion factor field (simulated time): video seconds per simulated second.
double gui_video_slow_factor();

#endif
