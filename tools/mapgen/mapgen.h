/* issim-mapgen: contact-response maps (seed 000 3.5, Definition 1; seed 003 sections 2-4) by
 * explicit finite elements in 2D plane strain. Internal to the tool and its test
 * (tests/test_mapgen.c); not part of libissim.
 *
 * Pieces: geometry and meshing through Gmsh (mapgen_mesh.c), the explicit solver and a static
 * solve for checks (mapgen_fem.c), the deformation-only drive with the rigid-body modes
 * removed (mapgen_relief.c), the per-node runs with threads, resume files and progress
 * (mapgen_run.c). The executable (mapgen_main.c) adds the command line and MPI.
 *
 * Threading: a MapgenMesh and a MapgenModel are read-only once built and may be shared by any
 * number of threads, each with its own MapgenState. Gmsh is not thread-safe: meshes are built
 * on one thread.
 */
#ifndef ISSIM_MAPGEN_H
#define ISSIM_MAPGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "issim/contactmap.h"
#include "issim/core.h"

#define MAPGEN_VERSION 2
#define MAPGEN_MAX_ANGLES 64
#define MAPGEN_CFL_SAFETY 0.9

/* ----------------------------------------------------------------------------------------------
 * Material (000 eqs. 3.2-3.3)
 */
typedef struct MapgenMaterial {
    double youngs;  /* E, Pa */
    double poisson; /* nu, (-1, 0.5) */
    double density; /* rho, kg/m^3 */
} MapgenMaterial;

/* The steel bar of 000 Table 4.2: c1 = 9660, c2 = 5163 m/s and rho = 7876.74 give a shear
 * modulus rho c2^2 = 2.1e11 Pa and nu = 0.3, hence E = 2 G (1 + nu) = 5.46e11 Pa (the table
 * labels 2.1e11 as E; VALIDATION.md V10). */
MapgenMaterial mapgen_material_steel_bar(void);
/* Refuses nu outside (-1, 0.5) and non-positive E or rho, naming the parameter and range. */
IssimStatus mapgen_material_check(const MapgenMaterial *m, IssimError *err);
/* Wave speeds of 000 eqs. 3.2 (dilatational c1) and 3.3 (shear c2), m/s. */
double mapgen_c1(const MapgenMaterial *m);
double mapgen_c2(const MapgenMaterial *m);

/* ----------------------------------------------------------------------------------------------
 * Geometry and mesh
 */
typedef enum MapgenShape {
    MAPGEN_SHAPE_BAR,     /* length (tip to tip) and diameter, hemispherical ends, axis x */
    MAPGEN_SHAPE_CIRCLE,  /* radius (2D); in 3D the sphere */
    MAPGEN_SHAPE_POLYGON, /* 2D only: vertices, the first repeated at the end */
} MapgenShape;

typedef struct MapgenGeometry {
    int dimension; /* 2: plane strain on the outline; 3: the solid (bar, sphere) */
    MapgenShape shape;
    double length, diameter; /* bar, m */
    double radius;           /* circle, m */
    const double *vertices;  /* polygon: x0 y0 x1 y1 ... (Borrowed) */
    int vertex_count;
    double element_size; /* m */
    /* Bar: impact angles (degrees, 0 < theta <= 90) at which the right cap gets a geometric
     * point, so a mesh node lies exactly there (see mapgen_bar_cap_point). */
    const double *angles;
    int angle_count;
} MapgenGeometry;

/* A mesh of linear simplices: triangles in 2D, tetrahedra in 3D. */
typedef struct MapgenMesh {
    int dimension; /* d: 2 or 3 */
    int node_count;
    double *points; /* node_count x d */
    int cell_count;
    int *cells; /* cell_count x (d + 1), positively oriented (counter-clockwise in 2D) */
    int boundary_count;
    int *boundary;     /* 2D: the outline's nodes in order around it; 3D: the surface's nodes */
    double *normals;   /* boundary_count x d: outward unit normals (facet-averaged) */
    double *arclength; /* 2D: boundary_count arc lengths from boundary[0]; 3D: NULL */
    double perimeter;  /* 2D: of the outline; 3D: surface area */
    double measure;    /* area (2D) or volume (3D) */
    double element_size;
} MapgenMesh;

/* The seeds' bar (000 4.4, Table 4.2 dimensions): 0.2 m tip to tip, 12.5 mm diameter. */
MapgenGeometry mapgen_geometry_steel_bar(int dimension, double element_size, const double *angles,
                                         int angle_count);
/* Checks the description before any meshing: positive sizes, an element size no larger than
 * the body, a closed simple polygon (at least 3 distinct vertices, no crossing edges), angles
 * in (0, 90]. */
IssimStatus mapgen_geometry_check(const MapgenGeometry *g, IssimError *err);
/* The range of a body's largest extent, m (and, for a polygon, of its coordinates' distance
 * from the origin). */
#define MAPGEN_MIN_EXTENT 1e-6
#define MAPGEN_MAX_EXTENT 100.0

/* What meshing and solving a checked geometry will take, before Gmsh runs: within tens of
 * per cent on the shapes measured (the machine's speed aside), enough to refuse a run that
 * would not fit or not end. */
typedef struct MapgenEstimate {
    double mesh_nodes;        /* nodes of the mesh */
    double boundary_nodes;    /* of them on the outline or surface */
    double dt_cfl;            /* the stable step, s */
    double bytes;             /* resident memory of one process, before the responses */
    double setup_seconds;     /* CPU: meshing, assembly, the stable step */
    double node_step_seconds; /* CPU: one time step of one map node's run */
} MapgenEstimate;
void mapgen_estimate(const MapgenGeometry *g, const MapgenMaterial *m, MapgenEstimate *e);

/* Meshes with Gmsh (linear triangles or tetrahedra). Owned: mapgen_mesh_free. Not thread-safe
 * (Gmsh). */
IssimStatus mapgen_mesh_build(const MapgenGeometry *g, MapgenMesh *mesh, IssimError *err);
void mapgen_mesh_free(MapgenMesh *mesh);
/* Finalizes Gmsh (once, before exit, after the last mesh). */
void mapgen_mesh_shutdown(void);
/* Reads a polygon file: one "x y" pair per line (m), '#' comments. Owned: free(). */
IssimStatus mapgen_polygon_read(const char *path, double **vertices, int *count, IssimError *err);

/* The point of the bar's right cap that answers impact angle theta (degrees): its outward
 * normal makes angle (90 - theta) with the bar axis, so theta = 90 is the tip. */
void mapgen_bar_cap_point(const MapgenGeometry *g, double theta, double point[2], double normal[2]);
/* Index into mesh->boundary of the boundary node nearest p (d coordinates); ISSIM_ERR_RANGE naming
 * `what` when it lies farther than half an element from p (not on the boundary). */
IssimStatus mapgen_boundary_nearest(const MapgenMesh *mesh, const double *p, const char *what,
                                    int *index, IssimError *err);
/* 3D: orients the tetrahedra, sums the volume, finds the surface (faces one tetrahedron uses)
 * and its nodes' area-weighted outward normals (mapgen_solid.c). */
IssimStatus mapgen_surface_boundary(MapgenMesh *mesh, IssimError *err);

/* ----------------------------------------------------------------------------------------------
 * Explicit solver (000 eq. 3.4; plane strain in 2D): linear simplices, lumped mass, central
 * differences
 */
typedef struct MapgenModel {
    const MapgenMesh *mesh; /* Borrowed */
    MapgenMaterial material;
    int dimension;  /* d, the mesh's */
    int dof_count;  /* d x nodes */
    int *row_start; /* node-block CSR stiffness (per unit thickness in 2D): node i couples to */
    int *columns;   /* columns[row_start[i] .. row_start[i + 1]) through the d x d blocks */
    double *values; /* values[d d e .. d d e + d d - 1] (row-major), N/m (per m in 2D) */
    double *inverse_mass; /* lumped, per dof */
    double *mass;
    double dt_cfl; /* the stable step 2 / sqrt(lambda_max(M^-1 K)) (before the safety factor), s */
} MapgenModel;

IssimStatus mapgen_model_build(const MapgenMesh *mesh, const MapgenMaterial *material,
                               MapgenModel *model, IssimError *err);
void mapgen_model_free(MapgenModel *model);
/* y = K x (per unit thickness). */
void mapgen_model_apply(const MapgenModel *model, const double *x, double *y);

/* A drive: boundary nodes whose normal displacement is prescribed (the map node and, for a
 * segment, its neighbours; each along `direction`, the map node's normal) and optional dofs
 * held at zero (supports, for checks; NULL for a free body). */
typedef struct MapgenDrive {
    int node_count;
    const int *nodes;          /* mesh node indices */
    double direction[3];       /* the prescribed displacement is -D H(t) direction (eq. 3.11) */
    const unsigned char *held; /* dof_count flags, Nullable */
    /* The deformable part only (mapgen_relief.c): the prescribed displacement is the driven
     * nodes' motion relative to the body's rigid-body motion, whose modes are projected out of
     * the solution, so the body keeps a steady compliance instead of recoiling as a whole.
     * Refused with held dofs (a supported body has no rigid-body motion to remove). */
    bool deformation_only;
} MapgenDrive;

/* The step response of 000 3.5: displacement D = 1 m (linear: h is per unit displacement) into
 * the body at the driven nodes from t = 0, the rest traction-free (eq. 3.12) or held. Fills
 * h[k], k < samples: the force the body pushes back with, per unit thickness and unit
 * displacement (Pa), averaged over the sample interval (k T, (k + 1) T]: the impulse the
 * indenter gives the body in that interval (the momentum the scheme transfers, the jump's at
 * t = 0 included in the first), divided by T. Why the mean: the explicit solution carries
 * mesh-scale ringing (periods of a few time steps) that point samples at a coarser T would
 * alias into the map, and the jump's impulse, spread over the first few steps, is what the
 * first sample must hold whatever the step. The time step is the largest dt <= safety x
 * dt_cfl that divides period. progress (Nullable) is called every 1000 steps with the fraction
 * done. */
typedef void (*MapgenProgress)(void *user, double fraction);
IssimStatus mapgen_step_response(const MapgenModel *model, const MapgenDrive *drive, double period,
                                 int samples, double safety, double *h, MapgenProgress progress,
                                 void *user, IssimError *err);
/* The time step mapgen_step_response uses for `period`. */
double mapgen_time_step(const MapgenModel *model, double period, double safety);

/* Static solve of the same boundary-value problem (K u = 0 on free dofs, the drive prescribed,
 * held dofs 0) by Jacobi-preconditioned conjugate gradients: the steady reaction (Pa per unit
 * thickness and displacement). Needs supports (held dofs) to be well posed. */
IssimStatus mapgen_static_response(const MapgenModel *model, const MapgenDrive *drive,
                                   double *reaction, IssimError *err);

/* ----------------------------------------------------------------------------------------------
 * The deformable part only (mapgen_relief.c): the rigid-body modes removed by inertia relief
 */

/* The rigid-body modes of the mesh (2 translations and 1 rotation in 2D, 3 and 3 in 3D, the
 * rotations about the centre of mass), orthonormal in the mass inner product: modes holds
 * 6 x dof_count entries; returns the count. */
int mapgen_rigid_modes(const MapgenModel *model, double *modes);
/* x -= Phi Phi^T M x: the part of x that moves the body as a whole, removed. */
void mapgen_rigid_remove(const MapgenModel *model, const double *modes, int count, double *x);

/* What the deformation-only drive needs per step: the rigid-body modes and the constraint
 * forces' accelerations P M^-1 e_k with the gain (E^T P M^-1 E)^-1 that keeps the driven dofs
 * still. Owned: mapgen_relief_free. One per run (it holds scratch): one per thread. */
typedef struct MapgenRelief {
    const MapgenModel *model; /* Borrowed */
    const MapgenDrive *drive; /* Borrowed */
    int mode_count;
    double *modes;      /* mode_count x dof_count */
    double *constraint; /* node_count x dof_count: P M^-1 e_k */
    double *gain;       /* node_count x node_count */
    double *lambda;     /* node_count: scratch */
} MapgenRelief;

IssimStatus mapgen_relief_build(const MapgenModel *model, const MapgenDrive *drive,
                                MapgenRelief *relief, IssimError *err);
void mapgen_relief_free(MapgenRelief *relief);
/* The initial displacement: -D at the driven dofs, free of rigid-body motion. */
IssimStatus mapgen_relief_start(const MapgenRelief *relief, double *w, IssimError *err);
/* a holds M^-1 (-K w) on entry, the constrained acceleration of the deformation on return;
 * returns the force the body pushes the indenter back with (the sum of the constraint forces
 * along the drive's direction, sign as mapgen_step_response's h). */
double mapgen_relief_accelerate(const MapgenRelief *relief, double *a);
/* The steady (static) answer of the same drive: K w = P^T E lambda, w free of rigid-body
 * motion, E^T w = -D; the reaction per unit thickness and displacement (Pa). */
IssimStatus mapgen_relief_static(const MapgenModel *model, const MapgenDrive *drive,
                                 double *reaction, IssimError *err);

/* Jacobi-preconditioned conjugate gradients for K u = b from u with residual r = b - K u:
 * constrain (Nullable) removes what the problem forbids from a dof vector (applied to the
 * residual and the preconditioned residual). ISSIM_ERR_NUMERIC when it does not converge. */
typedef void (*MapgenConstrain)(const void *user, double *x);
IssimStatus mapgen_conjugate_gradients(const MapgenModel *model, double *u, double *r,
                                       MapgenConstrain constrain, const void *user,
                                       IssimError *err);

/* Free vibration from an initial velocity field for `steps` steps of dt: the energies
 * 1/2 v.M v + 1/2 u.K u at each whole step (v the mean of the half-step velocities), for the
 * energy check. energy has steps + 1 entries. */
void mapgen_free_run(const MapgenModel *model, const double *velocity0, double dt, int steps,
                     double *energy);

/* ----------------------------------------------------------------------------------------------
 * A map run: nodes independent, threads, resume files, progress
 */
typedef struct MapgenJob {
    const MapgenModel *model;
    int node_count;
    const int *boundary_index; /* per map node: index into mesh->boundary */
    const double *directions;  /* per map node: outward unit normal (d); Nullable: the mesh's */
    double segment;            /* driven arc length around each node, m; 0: the node alone */
    bool deformation_only;     /* MapgenDrive.deformation_only for every node */
    double period;
    int samples;
    double safety;
    int threads;
    const char *partial_dir; /* per-node result files (resume); Nullable: none */
    unsigned long long key;  /* identifies the job's inputs in the partial files */
    bool quiet;              /* no progress lines */
    int rank, rank_count;    /* this process computes nodes j with j % rank_count == rank */
} MapgenJob;

/* Computes (or reads from finished partial files) the step responses of this rank's nodes
 * into h (node-major, samples each; other ranks' rows untouched). computed (Nullable) gets the
 * number of nodes actually solved (not resumed). */
IssimStatus mapgen_run(const MapgenJob *job, double *h, int *computed, IssimError *err);
/* Removes a finished run's partial directory: its node files (and temporaries a killed run
 * left), then the directory. False when it holds anything else (a directory the user named)
 * and was kept; true when removed or already gone. Several ranks may call it at once. */
bool mapgen_partial_remove(const char *dir);
/* The driven nodes of map node b (boundary index): those within segment / 2 of arc length (2D)
 * or of distance (3D).
 * nodes must hold mesh->boundary_count entries. Returns the count. */
int mapgen_segment_nodes(const MapgenMesh *mesh, int b, double segment, int *nodes);

#endif
