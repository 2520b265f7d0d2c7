/* Starting and stopping the device simulator program (tools/pantosim) for `issim device sim`,
 * the tests and the benchmarks: fork/exec with its stdout on a pipe and the link on a socket
 * (or a pty), the "LINK" (or "PTY <path>") line read with a deadline, and at the end SIGTERM
 * and the "SUMMARY ..." line. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "issim/haptics_device.h"

/* Reads one line from fd within timeout_s. */
static bool read_line(int fd, char *line, size_t size, double timeout_s) {
    size_t len = 0;
    double deadline = issim_wall_time() + timeout_s;
    while (len + 1 < size) {
        double left = deadline - issim_wall_time();
        if (left <= 0)
            break;
        fd_set in;
        FD_ZERO(&in);
        FD_SET(fd, &in);
        struct timeval tv = {0, (suseconds_t)(fmin(left, 0.5) * 1e6)};
        if (select(fd + 1, &in, NULL, NULL, &tv) <= 0)
            continue;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n <= 0)
            break;
        if (c == '\n') {
            line[len] = '\0';
            return true;
        }
        line[len++] = c;
    }
    line[len] = '\0';
    return false;
}

static void default_exe(char *out, size_t size) {
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(out, size, "%s/issim-pantosim", n > 0 ? dirname(self) : ".");
}

/* The child: stdout on the pipe, the socket's end (if any) on SIMULATOR_LINK_FD. */
#define SIMULATOR_LINK_FD 3
static void exec_simulator(const char *path, const char **argv, int out_fd, int link_fd) {
    dup2(out_fd, STDOUT_FILENO);
    if (link_fd >= 0) {
        if (link_fd != SIMULATOR_LINK_FD)
            dup2(link_fd, SIMULATOR_LINK_FD);
        fcntl(SIMULATOR_LINK_FD, F_SETFD, 0); /* kept across exec */
    }
    execv(path, (char *const *)argv);
    _exit(127);
}

static IssimStatus spawn(HapticSimulator *sim, const char *exe, const char *const *args, bool pty,
                         IssimError *err) {
    *sim = (HapticSimulator){.pid = -1, .stdout_fd = -1, .link_fd = -1};
    char path[1100];
    if (exe)
        issim_strlcpy(path, exe, sizeof path);
    else
        default_exe(path, sizeof path);
    if (access(path, X_OK) != 0)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND, "device simulator %s not found: %s", path,
                               strerror(errno));
    int fds[2], link[2] = {-1, -1};
    if (pipe(fds) != 0)
        return issim_error_set(err, ISSIM_ERR_IO, "pipe: %s", strerror(errno));
    /* not inherited by the other children this process starts (a second simulator, mpirun) */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    if (!pty && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) != 0) {
        close(fds[0]);
        close(fds[1]);
        return issim_error_set(err, ISSIM_ERR_IO, "socketpair: %s", strerror(errno));
    }
    const char *argv[34] = {path};
    int argc = 1;
    if (!pty) {
        argv[argc++] = "--link-fd";
        argv[argc++] = "3";
    }
    for (int i = 0; args && args[i] && argc < 33; i++)
        argv[argc++] = args[i];
    pid_t pid = fork();
    if (pid == 0)
        exec_simulator(path, argv, fds[1], link[1]);
    close(fds[1]);
    if (link[1] >= 0)
        close(link[1]);
    sim->stdout_fd = fds[0];
    sim->link_fd = link[0];
    if (pid < 0) {
        haptic_simulator_stop(sim);
        return issim_error_set(err, ISSIM_ERR_IO, "fork: %s", strerror(errno));
    }
    sim->pid = pid;
    char line[256];
    const char *expect = pty ? "PTY " : "LINK";
    if (!read_line(fds[0], line, sizeof line, 2.0) || strncmp(line, expect, 4) != 0) {
        haptic_simulator_stop(sim);
        return issim_error_set(err, ISSIM_ERR_IO, "device simulator %s did not start (%s)", path,
                               line[0] ? line : "no output");
    }
    if (pty) {
        issim_strlcpy(sim->pty, line + 4, sizeof sim->pty);
        snprintf(sim->spec, sizeof sim->spec, "serial:%s", sim->pty);
    } else {
        snprintf(sim->spec, sizeof sim->spec, "link:%d", sim->link_fd);
    }
    return ISSIM_OK;
}

IssimStatus haptic_simulator_spawn(HapticSimulator *sim, const char *exe, const char *const *args,
                                   IssimError *err) {
    return spawn(sim, exe, args, false, err);
}

IssimStatus haptic_simulator_spawn_pty(HapticSimulator *sim, const char *exe,
                                       const char *const *args, IssimError *err) {
    return spawn(sim, exe, args, true, err);
}

void haptic_simulator_stop(HapticSimulator *sim) {
    if (sim->pid > 0) {
        kill(sim->pid, SIGTERM);
        char line[512];
        while (read_line(sim->stdout_fd, line, sizeof line, 2.0))
            if (strncmp(line, "SUMMARY ", 8) == 0)
                issim_strlcpy(sim->summary, line + 8, sizeof sim->summary);
        waitpid(sim->pid, NULL, 0);
        sim->pid = -1;
    }
    if (sim->stdout_fd >= 0)
        close(sim->stdout_fd);
    sim->stdout_fd = -1;
    if (sim->link_fd >= 0)
        close(sim->link_fd);
    sim->link_fd = -1;
}

double haptic_simulator_summary_value(const HapticSimulator *sim, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "%s=", key);
    const char *p = sim->summary;
    while ((p = strstr(p, pattern)) != NULL) {
        if (p == sim->summary || p[-1] == ' ')
            return atof(p + strlen(pattern));
        p++;
    }
    return NAN;
}
