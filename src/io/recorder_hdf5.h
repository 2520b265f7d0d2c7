/* The HDF5 side of the recorder (recorder.c runs the thread and the ring; this file owns the
 * file). Every function but h5sink_open runs on the recorder's writer thread. */
#ifndef ISSIM_RECORDER_HDF5_H
#define ISSIM_RECORDER_HDF5_H

#include "issim/io.h"

typedef struct H5Sink H5Sink;

/* Creates the file, under a temporary name beside desc->path, with its root attributes and the
 * `edits` group; the first flush adds the columns and gives it its name. NULL with err filled. */
H5Sink *h5sink_open(const RecorderDesc *desc, IssimError *err);
/* Buffers one row (t + columns); returns the bytes now buffered (the caller flushes early past
 * a bound). */
size_t h5sink_append(H5Sink *s, const double *row);
/* Buffers one live edit. false: out of memory. */
bool h5sink_add_edit(H5Sink *s, double t, const char *path, const char *value);
/* Writes what is buffered and flushes the file: afterwards the file on disk holds every row and
 * edit so far. false with msg filled on a failure (the sink then discards what it is given). */
bool h5sink_flush(H5Sink *s, char *msg, size_t size);
uint64_t h5sink_rows(const H5Sink *s);  /* rows in the file as of the last flush */
uint64_t h5sink_bytes(const H5Sink *s); /* the file's size as of the last flush */
/* Flushes, closes the file and frees s; *bytes (Nullable): the file's final size. false with
 * msg filled when anything failed. */
bool h5sink_close(H5Sink *s, uint64_t *bytes, char *msg, size_t size);

#endif
