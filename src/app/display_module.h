/* The display module (libissim-display.so) loaded on demand: `issim run` with a window. */
#ifndef ISSIM_APP_DISPLAY_MODULE_H
#define ISSIM_APP_DISPLAY_MODULE_H

#include <stddef.h>

#include "issim/display.h"

/* display_run's type: the module's entry point. */
typedef int (*DisplayRunFn)(const char *scene_path, const SimOptions *sim_options,
                            const DisplayOptions *options);

/* Loads the module and returns its display_run; NULL when it is missing,
 * cannot be loaded or was built for another issim, with the reason, naming the file, in
 * why (why_size bytes). Looked for in $ISSIM_DISPLAY_MODULE when set, else beside the
 * executable (the build tree), else in ../lib/issim/ from it (an installation). */
DisplayRunFn display_module_load(char *why, size_t why_size);

#endif
