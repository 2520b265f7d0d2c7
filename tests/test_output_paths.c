/* Outputs never destroy what is at a path (include/issim/io.h, "Output files"): a scene save,
 * a recording and a sweep's table refuse a symbolic link (it used to be replaced by a regular
 * file, or written through to what it points at) and a FIFO without a reader (the open hung),
 * write through a character device or a FIFO with a reader (a device used to be replaced by a
 * regular file), check every write (a full device is a non-zero exit) and never read a device
 * back (`--out /dev/zero` read until memory ran out). A sweep whose disk fills keeps whole rows,
 * says how many, exits 1 and resumes.
 *
 * Devices are made with mknod in a private directory where that is allowed (so no test, even of
 * a broken build, can replace /dev/full), else /dev/full and /dev/zero themselves. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "issim/io.h"
#include "testutil.h"

static char output[1 << 16];

/* `issim ARGS` from the source directory under a time limit (a blocking open must fail the
 * test, not hang it), with a file-size limit in KiB when limit_kib > 0; the exit status. */
static int issim_limited(const char *args, int limit_kib) {
    const char *bin = getenv("ISSIM_BINARY") ? getenv("ISSIM_BINARY") : "build/issim";
    char cmd[4096], limit[64] = "";
    if (limit_kib > 0)
        snprintf(limit, sizeof limit, "ulimit -f %d; ", 2 * limit_kib); /* 512-byte blocks */
    snprintf(cmd, sizeof cmd, "cd '%s' && (%sexec timeout -s KILL 60 '%s' %s) 2>&1",
             test_source_path(""), limit, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("issim %s\n  -> %d: %s", args, rc, output);
    assert_int_not_equal(rc, 137); /* killed by the time limit: something blocked */
    return rc;
}

static int issim(const char *args) {
    return issim_limited(args, 0);
}

static char dir[256];

static const char *in_dir(const char *name) {
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "%s.d", test_temp_path(""));
    assert_int_equal(mkdir(dir, 0700), 0);
    return 0;
}

static void reader_stop_active(void);

static int teardown(void **state) {
    (void)state;
    reader_stop_active(); /* a failed assertion left a FIFO reader waiting for its writer */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A character device like /dev/full (minor 7) or /dev/zero (5) in the test's directory. */
static const char *device(const char *name, unsigned minor) {
    const char *path = in_dir(name);
    if (mknod(path, S_IFCHR | 0666, makedev(1, minor)) == 0)
        return path;
    return minor == 7 ? "/dev/full" : "/dev/zero";
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path) {
    static char text[1 << 16];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static mode_t kind_of(const char *path) {
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode & S_IFMT;
}

/* Reads a FIFO to the end on a thread: the reader a write-through needs. It opens without
 * blocking (so it is there before the writer comes) and polls: a FIFO reports a hang-up only
 * after a writer has come and gone. */
typedef struct Reader {
    const char *path;
    atomic_int opened;
    char text[1 << 16];
    size_t size;
    pthread_t thread;
} Reader;

static void *reader_main(void *arg) {
    Reader *r = arg;
    int fd = open(r->path, O_RDONLY | O_NONBLOCK);
    atomic_store(&r->opened, fd >= 0 ? 1 : -1);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (fd < 0 || poll(&p, 1, 60000) <= 0)
            break; /* no writer within a minute: the test's assertions say so */
        ssize_t n = read(fd, r->text + r->size, sizeof r->text - 1 - r->size);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            break;
        r->size += (size_t)n;
    }
    r->text[r->size] = '\0';
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* The reader a test started and has not joined yet (reader_join). */
static Reader *active_reader;

static void reader_join(Reader *r) {
    pthread_join(r->thread, NULL);
    active_reader = NULL;
}

/* A writer that comes and goes is the hang-up that ends the reader's wait. */
static void reader_stop_active(void) {
    if (!active_reader)
        return;
    int fd = open(active_reader->path, O_WRONLY | O_NONBLOCK);
    if (fd >= 0)
        close(fd);
    reader_join(active_reader);
}

static bool reader_opened(void *r) {
    return atomic_load(&((Reader *)r)->opened) != 0;
}

static void reader_start(Reader *r, const char *path) {
    memset(r, 0, sizeof *r);
    r->path = path;
    atomic_init(&r->opened, 0);
    assert_int_equal(pthread_create(&r->thread, NULL, reader_main, r), 0);
    active_reader = r;
    test_wait_for(reader_opened, r, "the FIFO reader to open");
    assert_int_equal(atomic_load(&r->opened), 1);
}

/* ===== Scene saves ===== */

static void test_scene_save(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(scene_load_file(test_source_path("scenes/point_drop.lua"), NULL, &db, &err),
                     ISSIM_OK);
    /* A link: refused, the link and what it points to untouched (the rename replaced the link
     * by a regular file). */
    const char *target = in_dir("target.lua"), *link = in_dir("link.lua");
    write_text(target, "keep me\n");
    assert_int_equal(symlink(target, link), 0);
    assert_int_not_equal(scene_save_file(db, link, &err), ISSIM_OK);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "symbolic link"));
    assert_int_equal(kind_of(link), S_IFLNK);
    assert_string_equal(read_text(target), "keep me\n");
    /* A temporary name planted as a link (the old PATH.tmp) is neither written through nor
     * removed: the save uses a fresh name of its own. */
    const char *saved = in_dir("saved.lua"), *planted = in_dir("saved.lua.tmp");
    assert_int_equal(symlink(target, planted), 0);
    assert_int_equal(scene_save_file(db, saved, &err), ISSIM_OK);
    assert_string_equal(read_text(target), "keep me\n");
    assert_int_equal(kind_of(planted), S_IFLNK);
    assert_int_equal(kind_of(saved), S_IFREG);
    assert_non_null(strstr(read_text(saved), "-- issim scene generated by issim"));
    /* A FIFO without a reader: refused at once (not replaced, not waited on). */
    const char *fifo = in_dir("scene.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_not_equal(scene_save_file(db, fifo, &err), ISSIM_OK);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "no process is reading"));
    assert_int_equal(kind_of(fifo), S_IFIFO);
    /* ... with a reader: written through, still a FIFO. */
    static Reader r; /* not on the stack: the teardown joins it after a failed assertion */
    reader_start(&r, fifo);
    assert_int_equal(scene_save_file(db, fifo, &err), ISSIM_OK);
    reader_join(&r);
    assert_string_equal(r.text, read_text(saved));
    assert_int_equal(kind_of(fifo), S_IFIFO);
    /* A full device: written through, the failure reported, the device still a device. */
    const char *full = device("full", 7);
    assert_int_not_equal(scene_save_file(db, full, &err), ISSIM_OK);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "No space left on device"));
    assert_int_equal(kind_of(full), S_IFCHR);
    /* Nothing else was left in the directory: no temporary of the saves. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    char count[16] = "";
    assert_non_null(fgets(count, sizeof count, p));
    pclose(p);
    assert_string_equal(count, "1\n"); /* the planted link only */
    thingdb_destroy(db);
}

/* `issim validate --save`: the same, through the command. */
static void test_validate_save(void **state) {
    (void)state;
    const char *target = in_dir("v-target.lua"), *link = in_dir("v-link.lua");
    write_text(target, "keep me\n");
    assert_int_equal(symlink(target, link), 0);
    char args[1024];
    snprintf(args, sizeof args, "validate scenes/point_drop.lua --save %s", link);
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "symbolic link"));
    assert_int_equal(kind_of(link), S_IFLNK);
    assert_string_equal(read_text(target), "keep me\n");
    snprintf(args, sizeof args, "validate scenes/point_drop.lua --save %s", device("vfull", 7));
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "No space left on device"));
}

/* ===== Recordings ===== */

static void test_recording(void **state) {
    (void)state;
    /* A FIFO nobody reads: a prompt error (the open blocked for ever). */
    const char *fifo = in_dir("rec.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char args[1024];
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --quiet --until 0.05 "
             "--record %s",
             fifo);
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "no process is reading"));
    assert_int_equal(kind_of(fifo), S_IFIFO);
    /* A link: refused, the file it points to untouched. */
    const char *target = in_dir("rec-target.csv"), *link = in_dir("rec-link.csv");
    write_text(target, "keep me\n");
    assert_int_equal(symlink(target, link), 0);
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --quiet --until 0.05 "
             "--record %s",
             link);
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "symbolic link"));
    assert_string_equal(read_text(target), "keep me\n");
    /* A FIFO with a reader: the whole recording goes through it. */
    static Reader r; /* not on the stack: the teardown joins it after a failed assertion */
    reader_start(&r, fifo);
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --quiet --until 0.05 "
             "--record %s",
             fifo);
    assert_int_equal(issim(args), 0);
    reader_join(&r);
    assert_non_null(strstr(r.text, "\nt,"));
    long lines = 0;
    for (const char *p = r.text; *p; p++)
        lines += *p == '\n';
    assert_true(lines > 50); /* 0.05 s at 1 ms, and the header */
    /* A full device: the run fails and says why. */
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --quiet --until 0.05 "
             "--record %s",
             device("rfull", 7));
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "No space left on device"));
}

/* ===== A sweep's table ===== */

static const char *sweep =
    "sweep scenes/bar_drop_angle.lua --grid angle_deg=10:90:60 --until 1e-5 --quiet --threads 2";

/* Lines of a file that end in a newline, and whether the file ends in one. */
static long whole_lines(const char *path, bool *ends_whole) {
    const char *text = read_text(path);
    long n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    *ends_whole = !*text || text[strlen(text) - 1] == '\n';
    return n;
}

static void test_sweep_table(void **state) {
    (void)state;
    char args[1024];
    /* A link: refused before any run, the link and the file it points to untouched (the final
     * sort renamed a regular file over the link). */
    const char *target = in_dir("t-target.csv"), *link = in_dir("t-link.csv");
    write_text(target, "keep me\n");
    assert_int_equal(symlink(target, link), 0);
    snprintf(args, sizeof args, "%s --out %s", sweep, link);
    assert_int_equal(issim(args), 2);
    assert_non_null(strstr(output, "symbolic link"));
    assert_null(strstr(output, "sweep    "));
    assert_int_equal(kind_of(link), S_IFLNK);
    assert_string_equal(read_text(target), "keep me\n");
    /* The disk fills up (a 2 KiB file-size limit) after some rows: exit 1, whole rows kept and
     * counted honestly ("the rows are all there" with a cut last line, exit 0, it said). */
    const char *table = in_dir("t.csv");
    snprintf(args, sizeof args, "%s --out %s", sweep, table);
    assert_int_equal(issim_limited(args, 2), 1);
    assert_non_null(strstr(output, "File too large"));
    bool whole = false;
    long lines = whole_lines(table, &whole);
    assert_true(whole);
    assert_true(lines > 1 && lines < 61);
    char said[128];
    snprintf(said, sizeof said, "60 runs, %ld rows in the table", lines - 1);
    assert_non_null(strstr(output, said));
    /* ... and the same command resumes from those rows once there is room. */
    assert_int_equal(issim(args), 0);
    snprintf(said, sizeof said, "60 runs (%ld done before, %ld to run)", lines - 1, 61 - lines);
    assert_non_null(strstr(output, said));
    assert_int_equal(whole_lines(table, &whole), 61);
    /* A FIFO without a reader: a prompt error, still a FIFO (reading it back blocked). */
    const char *fifo = in_dir("t.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(args, sizeof args, "%s --out %s", sweep, fifo);
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "no process is reading"));
    assert_int_equal(kind_of(fifo), S_IFIFO);
    /* ... with a reader: the header and every row go through, unsorted, nothing read back. */
    static Reader r; /* not on the stack: the teardown joins it after a failed assertion */
    reader_start(&r, fifo);
    assert_int_equal(issim(args), 0);
    reader_join(&r);
    long rows = 0;
    for (const char *p = r.text; *p; p++)
        rows += *p == '\n';
    assert_int_equal(rows, 61);
    assert_true(strncmp(r.text, "run,angle_deg,status,", 21) == 0);
    assert_int_equal(kind_of(fifo), S_IFIFO);
    /* A device that reads as endless zeros: written through, never read back. */
    const char *zero = device("zero", 5);
    snprintf(args, sizeof args, "%s --out %s", sweep, zero);
    assert_int_equal(issim(args), 0);
    assert_non_null(strstr(output, "60 rows in the table"));
    /* A full device: exit 1 and the reason. */
    const char *full = device("full", 7);
    snprintf(args, sizeof args, "%s --out %s", sweep, full);
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "No space left on device"));
    assert_int_equal(kind_of(full), S_IFCHR);
    /* --plot needs a table it can read back. */
    snprintf(args, sizeof args, "%s --out %s --plot angle_deg:v_out", sweep, zero);
    assert_int_equal(issim(args), 2);
    assert_non_null(strstr(output, "--plot reads the table back"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scene_save, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validate_save, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_table, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
