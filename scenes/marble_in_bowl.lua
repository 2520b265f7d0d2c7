-- marble_in_bowl: a lumpy Loop marble sliding and rolling in a shallow Loop dish (seed 002 6.3,
-- Fig. 6.3).
--
-- Both are Loop subdivision surfaces (assets/loop_marble.obj, a jittered icosahedron, 5 cm
-- across; assets/loop_plate.obj, a closed dish 0.7 m wide whose floor is a sphere of about 2 m
-- radius), so the contact matrix H has every term (002 6.3: "the matrix H is more complex in this
-- case"). The marble starts 15 cm from the centre, spinning about the vertical; with Coulomb
-- friction 0.3 it slides toward the middle until friction makes it roll (stick_slip: rolling
-- without slip once the slip falls below slip_tolerance, 002 4.4.2-4.4.4), then rolls to and fro
-- across the dish.
--
-- Both are evaluated exactly at their extraordinary vertices (surface_extraordinary = "exact",
-- Stam): once rolling, the energy never rises above its lowest by more than 1.4e-10 J in 5 s,
-- where 002's S-patches ("spatch") let it rise by 1e-5 J at their edges (docs/smooth-contact.md).
--
-- Properties a user usually changes:
--   marble_plate.friction_kinetic, .friction_static   Coulomb coefficients
--   marble_plate.smooth_friction                      sliding (002 4.4.1 only) or stick_slip
--   marble_plate.rolling_friction                     rolling resistance (m), stops it in time
return {
  name = "marble_in_bowl",
  description = "A lumpy Loop marble slides, then rolls, in a shallow Loop dish (002 6.3)",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",
    dt = 5e-4,
    record = "marble.pos.x,marble.pos.y,marble.pos.z,universe.energy.total",
  },
  camera = { eye = {0.35, -0.55, 0.35}, target = {0.05, 0, 0.03}, fov = 40 },
  things = {
    { name = "marble", kind = "body", shape = "smooth", surface_file = "assets/loop_marble.obj",
      surface_scale = {0.05, 0.05, 0.05}, surface_levels = 2, surface_extraordinary = "exact",
      mass = 0.05, inertia = {1.25e-5, 1.25e-5, 1.25e-5}, material = "marble",
      color = {0.3, 0.5, 0.85} },
    { name = "plate", kind = "obstacle", shape = "smooth", surface_file = "assets/loop_plate.obj",
      surface_scale = {0.1, 0.1, 0.1}, surface_levels = 2, surface_extraordinary = "exact",
      material = "plate",
      color = {0.7, 0.6, 0.45} },
  },
  contacts = {
    { name = "marble_plate", materials = {"marble", "plate"}, resolver = "reduced",
      friction_static = 0.3, friction_kinetic = 0.3, slip_tolerance = 1e-3,
      model = "spring_damper", stiffness = 1e4, restitution = 0.3,
      start_coords = "108 0.099035303 0.854901835 2230 0.210292272 0.789707728 0",
      start_rates = "0 0 0 0 20" },
  },
}
