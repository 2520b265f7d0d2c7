// Layout helpers for panels as narrow as 250 pixels (a 1024 x 600 window; issue 31 item 8):
// items go on the same line only when they fit, labels go beside a widget or under it, never cut,
// and each panel's overflow (content reaching past its right edge, so ImGui cuts it) is measured
// for the tests (gui_layout_overflow in issim/gui.h). Internal to src/gui.
#ifndef ISSIM_GUI_LAYOUT_H
#define ISSIM_GUI_LAYOUT_H

#include <imgui.h>

// SameLine when an item `width` pixels wide fits after the last one, else nothing (a new line).
void same_line_if_fits(float width);
// A button on the same line as the last item when it fits, else on the next.
bool button_same_line_if_fits(const char *label);
// The same for a checkbox and its label.
bool checkbox_same_line_if_fits(const char *label, bool *value);
// A label for the last widget: beside it when the whole label fits, else `brief` beside it
// when that fits (the whole text is then its tooltip), else the whole on the next line, wrapped
// at spaces to the panel's width. Replaces the widget's own label, which ImGui cuts.
void label_beside(const char *text, bool disabled = false, const char *brief = nullptr);

// An auto-resizing window (the navigation bar, the arrow legend) is as wide as what it holds,
// so its own edge cannot say what fits: the helpers above use right_x (screen x) instead until
// it is set back to 0.
void layout_row_limit(float right_x);

// The panels whose overflow is measured (GUI_PANEL_* in issim/gui.h): call before End().
void layout_measure_overflow(int panel);
// Cleared at the start of each frame.
void layout_reset_overflow();

#endif
