/* Where scenes are: the working directory, then the data directory of the installation the
 * running program belongs to (io.h, scene_find and scene_data_dir). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "issim/io.h"

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Only a directory holding scenes/ counts: a prefix's share/issim left half-removed, or a
 * source tree without its scenes, must not shadow the next candidate. */
static bool data_dir_at(const char *candidate, char *out, size_t size) {
    char real[PATH_MAX], scenes[PATH_MAX + 8];
    if (!realpath(candidate, real))
        return false;
    snprintf(scenes, sizeof scenes, "%s/scenes", real);
    if (!is_dir(scenes) || strlen(real) >= size)
        return false;
    issim_strlcpy(out, real, size);
    return true;
}

bool scene_data_dir(char *out, size_t size) {
    if (size)
        out[0] = '\0';
    /* Relative to the executable, not a configured prefix: an installation moved or unpacked
     * elsewhere keeps working. */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            char candidate[PATH_MAX + 32];
            snprintf(candidate, sizeof candidate, "%.*s/../share/issim", (int)(slash - self), self);
            if (data_dir_at(candidate, out, size))
                return true;
        }
    }
#ifdef ISSIM_SOURCE_TREE
    /* A program run from its build tree has no share/issim: the sources it was built from
     * hold the same scenes/, assets/ and docs/. */
    if (data_dir_at(ISSIM_SOURCE_TREE, out, size))
        return true;
#endif
    return false;
}

bool scene_source_dir(char *out, size_t size) {
    if (size)
        out[0] = '\0';
#ifdef ISSIM_SOURCE_TREE
    return data_dir_at(ISSIM_SOURCE_TREE, out, size);
#else
    return false;
#endif
}

static bool ends_with_lua(const char *name) {
    size_t n = strlen(name);
    return n >= 4 && strcmp(name + n - 4, ".lua") == 0;
}

/* base/name, base/name.lua, base/scenes/name, base/scenes/name.lua; base NULL is the working
 * directory, whose paths stay relative (they are what the summary and the GUI print). */
static bool find_in(const char *base, const char *name, char *out, size_t size) {
    const char *subdirs[] = {"", "scenes/"};
    const char *suffixes[] = {"", ".lua"};
    for (int d = 0; d < 2; d++) {
        for (int s = 0; s < 2; s++) {
            if (s == 1 && ends_with_lua(name))
                continue;
            char path[PATH_MAX];
            int len = snprintf(path, sizeof path, "%s%s%s%s%s", base ? base : "", base ? "/" : "",
                               subdirs[d], name, suffixes[s]);
            if (len < 0 || (size_t)len >= sizeof path || (size_t)len >= size || !is_file(path))
                continue;
            issim_strlcpy(out, path, size);
            return true;
        }
    }
    return false;
}

IssimStatus scene_find(const char *name, char *out, size_t size, IssimError *err) {
    struct stat st;
    /* What exists as given is used as given (a FIFO, /dev/stdin, a directory: the loader
     * says what is wrong with it), and an absolute path is never searched for. */
    if (name[0] == '/' || stat(name, &st) == 0) {
        if (strlen(name) >= size)
            return issim_error_set(err, ISSIM_ERR_RANGE, "scene path too long: '%s'", name);
        if (out != name)
            issim_strlcpy(out, name, size);
        return ISSIM_OK;
    }
    if (find_in(NULL, name, out, size))
        return ISSIM_OK;
    char data[PATH_MAX];
    bool have_data = scene_data_dir(data, sizeof data);
    if (have_data && find_in(data, name, out, size))
        return ISSIM_OK;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        issim_strlcpy(cwd, ".", sizeof cwd);
    const char *tried = ends_with_lua(name) ? "" : " and NAME.lua";
    if (have_data)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                               "cannot find scene '%s': looked in %s and %s/scenes, then in the "
                               "data directory %s and %s/scenes (NAME%s in each)",
                               name, cwd, cwd, data, data, tried);
    return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                           "cannot find scene '%s': looked in %s and %s/scenes (NAME%s in each); "
                           "no data directory (share/issim beside the executable's bin/)",
                           name, cwd, cwd, tried);
}
