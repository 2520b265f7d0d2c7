-- bowl_on_plane: a Loop-subdivision bowl rocking on a flat frictionless Bezier patch (seed 002
-- 6.2, App. B.2; V13).
--
-- Without friction no horizontal force acts, so the centre of mass may only move up and down:
-- the test of 002 6.2 ("Observing purely vertical motion of the center of mass validates much of
-- our implementation"), whose own run drifted at S-patch transitions. The bowl is 002 App. B.2's
-- control mesh scaled by 0.05 (as App. B.1's commented-out bowl), subdivided twice: 200 regular
-- Loop patches, then the 24 faces at its 6 extraordinary vertices evaluated exactly (Stam;
-- surface_extraordinary = "spatch": 6 S-patches instead, docs/smooth-contact.md). Its
-- centre of mass is put 1 cm above its lowest point ("close to its base"), and its mass and
-- inertia are those of a solid of 1300 kg/m^3 (rounded); both are choices, the seed gives none.
--
-- Start: in contact at a point of the bowl's underside whose normal is 0.3 rad from its axis
-- (patch 9), released at rest, so it rocks; the contact runs across patch boundaries.
--
-- Properties a user usually changes:
--   bowl_floor.start_coords   "patch s t floor_patch u v psi"
--   bowl.surface_levels       subdivision steps (2 or more; the S-patches shrink with each)
return {
  name = "bowl_on_plane",
  description = "A Loop bowl rocks on a frictionless plane: its centre of mass only moves up and down (002 6.2, V13)",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",
    dt = 5e-4,
    record = "bowl.pos.x,bowl.pos.y,bowl.pos.z,universe.energy.total",
  },
  camera = { eye = {0.18, -0.22, 0.12}, target = {0, 0, 0.01}, fov = 40 },
  things = {
    { name = "bowl", kind = "body", shape = "smooth", surface_file = "assets/loop_bowl.obj",
      surface_scale = {0.05, 0.05, 0.05}, surface_offset = {0, 0, 0.025}, surface_levels = 2,
      mass = 0.2, inertia = {9.2e-5, 9.2e-5, 1.07e-4}, material = "bowl",
      color = {0.75, 0.55, 0.35} },
    { name = "floor", kind = "obstacle", shape = "smooth",
      surface_points = {
        {-1.5, -1.5, 0}, {-1.5, -0.5, 0}, {-1.5, 0.5, 0}, {-1.5, 1.5, 0},
        {-0.5, -1.5, 0}, {-0.5, -0.5, 0}, {-0.5, 0.5, 0}, {-0.5, 1.5, 0},
        {0.5, -1.5, 0}, {0.5, -0.5, 0}, {0.5, 0.5, 0}, {0.5, 1.5, 0},
        {1.5, -1.5, 0}, {1.5, -0.5, 0}, {1.5, 0.5, 0}, {1.5, 1.5, 0} },
      material = "floor", color = {0.55, 0.6, 0.65} },
  },
  contacts = {
    { name = "bowl_floor", materials = {"bowl", "floor"}, resolver = "reduced",
      model = "spring_damper", stiffness = 1e4, restitution = 0.3,
      start_coords = "9 0.3 0.3 0 0.5 0.5 0" },
  },
}
