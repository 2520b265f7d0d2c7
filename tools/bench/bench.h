/* issim-bench: one executable, one subcommand per area. Each prints figures (not pass/fail). */
#ifndef ISSIM_BENCH_H
#define ISSIM_BENCH_H

/* Each returns a process exit code. argv[0] is the subcommand name. */
int bench_engine(int argc, char **argv);
int bench_registry(int argc, char **argv);
int bench_collision(int argc, char **argv);
int bench_dynamics(int argc, char **argv);
int bench_contact(int argc, char **argv);
int bench_contact_map(int argc, char **argv);
int bench_haptics(int argc, char **argv);
int bench_display(int argc, char **argv);
int bench_mapgen(int argc, char **argv);
int bench_lcp(int argc, char **argv);
int bench_surface(int argc, char **argv);
int bench_smooth(int argc, char **argv);
/* `python [STEPS [RUNS]]`: the Python module's costs (bench_python.c). */
int bench_python(int argc, char **argv);

/* Monotonic clock, seconds. */
double bench_now(void);
int bench_piles(int argc, char **argv);
/* `dynamics restitution [DT ...]`: argv holds only the steps. */
int bench_restitution(int argc, char **argv);

/* Sorts samples in place and returns the q-quantile (0..1) by nearest rank. */
double bench_quantile(double *samples, int n, double q);

#endif
