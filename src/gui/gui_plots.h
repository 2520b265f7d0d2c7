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
}
#include "issim/gui.h"
#undef _Noreturn

// The plots' state lives from gui_create to gui_destroy; false: out of memory.
bool gui_plots_create();
void gui_plots_destroy();
// The "Plots" section: the series chosen, the window, the plots drawn.
void gui_plots_panel(const GuiState *s, GuiRequests *r);
// The "Contact map" section: the selected body's map responses and its live contact force.
void gui_map_panel(const GuiState *s);

#endif
