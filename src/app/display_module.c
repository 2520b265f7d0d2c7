/* The display and GUI live in a module, libissim-display.so, loaded with dlopen only when
 * `issim run` opens a window. SDL2, OpenGL, GLEW and Dear ImGui pull about 50 libraries (audio,
 * systemd, X11...) whose loading would add to every headless process's start-up
 * (docs/performance.md, "Lazy display module", has the figure), and which cluster nodes often
 * lack: headless commands and MPI ranks must start without them. The module calls libissim through
 * the executable, which exports the whole of it (CMakeLists.txt: WHOLE_ARCHIVE, ENABLE_EXPORTS), so
 * one copy of its code and globals lives in the process. */
#include "display_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODULE_NAME "libissim-display.so"

typedef bool (*DisplayMatchesFn)(const char *, size_t, size_t);

/* The executable's own directory (/proc/self/exe: argv[0] may be a bare name from $PATH). */
static bool executable_dir(char *dir, size_t size) {
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0 || (size_t)n >= size - 1)
        return false;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return true;
}

/* The file to load: $ISSIM_DISPLAY_MODULE, else the first of the build-tree and installation
 * places that exists; when none does, false with both places named in why. */
static bool module_path(char *path, size_t size, char *why, size_t why_size) {
    const char *forced = getenv("ISSIM_DISPLAY_MODULE");
    if (forced && *forced) {
        snprintf(path, size, "%s", forced);
        return true;
    }
    char dir[PATH_MAX];
    if (!executable_dir(dir, sizeof dir)) {
        snprintf(why, why_size, "cannot find the display module %s: /proc/self/exe unreadable",
                 MODULE_NAME);
        return false;
    }
    char installed[PATH_MAX + 64];
    snprintf(path, size, "%s/%s", dir, MODULE_NAME);
    snprintf(installed, sizeof installed, "%s/../lib/issim/%s", dir, MODULE_NAME);
    if (access(path, F_OK) == 0)
        return true;
    if (access(installed, F_OK) == 0) {
        snprintf(path, size, "%s", installed);
        return true;
    }
    snprintf(why, why_size, "no display module: neither %s nor %s exists", path, installed);
    return false;
}

DisplayRunFn display_module_load(char *why, size_t why_size) {
    char path[PATH_MAX + 64];
    if (!module_path(path, sizeof path, why, why_size))
        return NULL;
    /* RTLD_NOW: a symbol missing from the module or its libraries is reported here, with the
     * file's name, not as a crash in the middle of a frame. */
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        snprintf(why, why_size, "cannot load the display module %s: %s", path, dlerror());
        return NULL;
    }
    DisplayMatchesFn matches = (DisplayMatchesFn)dlsym(module, "display_module_matches");
    DisplayRunFn run = (DisplayRunFn)dlsym(module, "display_run");
    if (!matches || !run) {
        snprintf(why, why_size, "%s is not an issim display module (no %s)", path,
                 matches ? "display_run" : "display_module_matches");
    } else if (!matches(ISSIM_VERSION, sizeof(DisplayOptions), sizeof(SimOptions))) {
        snprintf(why, why_size, "the display module %s was built for another issim than %s", path,
                 ISSIM_VERSION);
    } else {
        return run;
    }
    dlclose(module);
    return NULL;
}
