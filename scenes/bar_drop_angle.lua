-- bar_drop_angle: the rigid bar drop of Ullrich 1998 (seed 000, chapter 6, Table 6.1): a 0.2 m
-- steel rod falls without spin and strikes a massive foundation with its lower end at an
-- impact angle (VALIDATION.md V11, rigid part; Stoianovici and Hurmuzlu's experiment).
--
-- Scene parameters (--param NAME=VALUE; issim sweep --grid NAME=...):
--   angle_deg   the impact angle, degrees (90 = vertical bar): --param angle_deg=30
--   speed       the impact speed, m/s, straight down: --param speed=0.5
-- or the properties themselves with --set: bar.orient='0.866025 0 0.5 0' (60 degrees: a rotation
-- about y, {cos(a/2), 0, sin(a/2), 0}), bar.vel='0 0 -3'.
--
-- The foundation is Table 6.1's: Hunt-Crossley f = (K + B d(delta)/dt) delta with K = 5.5e7 N/m,
-- B = 2.2e7 N s/m^2 (the pair's alpha = 2 B / (3 K)), Coulomb friction mu_s = 0.1, mu_k = 0.075
-- (Goyal's penalty spring made stiff enough to stick within the 0.15 ms impact). `issim run`
-- integrates it in the engine; bar_drop_run() (include/issim/engine.h) is the same impact as an
-- engine-free model of eq. 6.2-6.10 that reads this scene (`issim-bench dynamics`,
-- tools/bar_drop_sweep.sh: the 7-angle x 3-speed sweep). They agree to 1e-3 m/s
-- (tests/test_validation_v11_bar_drop.c). Like eq. 6.3-6.5 the impact has no gravity.
local angle = math.rad(param("angle_deg", 60))   -- impact angle, rad
local speed = param("speed", 3.0)                 -- m/s
local length, diameter, density = 0.2, 0.0125, 7876.74   -- the V10 rod
local mass = density * math.pi * diameter ^ 2 / 4 * length
local i_centre = mass * length ^ 2 / 12                   -- uniform bar about its centre
local half = length / 2
return {
  name = "bar_drop_angle",
  description = "Rigid steel bar (0.2 m) striking a foundation at an angle, 000 ch. 6; "
    .. "no gravity: after the 0.15 ms impact it flies off, the camera follows it "
    .. "(slow the clock to watch the impact)",
  universe = {
    gravity = {0, 0, 0},      -- eq. 6.3-6.5: the impact without gravity
    planar = true,            -- x-z plane, rotation about y
    integrator = "bdf",
    dt = 1e-5,
    rtol = 1e-9,
    atol = 1e-12,
    record = "bar.pos.z,bar.vel.x,bar.vel.z,bar.angvel.y,universe.energy.total",
    -- the GUI's clock: a tenth of real time, and 1/5000 within 0.5 ms of each impact (the
    -- 0.15 ms strike lasts 0.75 s on screen)
    playback_speed = 0.1,
    slow_motion = 2e-4,
    slow_motion_window = 5e-4,
  },
  -- Without gravity the bar leaves the foundation for good after the 0.15 ms impact (and a
  -- second strike of its other end): the camera follows it.
  camera = { eye = {0.25, -0.5, 0.12}, target = {0, 0, 0.05}, fov = 45, follow = "bar" },
  things = {
    {
      name = "bar", kind = "body",
      mass = mass,                                   -- kg (0.193)
      inertia = {i_centre, i_centre, 1e-6},          -- kg m^2: about y, the planar axis
      -- the lower (+x) end 1 um above the foundation
      pos = {0, 0, half * math.sin(angle) + 1e-6},
      orient = {math.cos(angle / 2), 0, math.sin(angle / 2), 0},
      vel = {0, 0, -speed},
      vertices = {{-half, 0, 0}, {half, 0, 0}},      -- the bar's two ends
      material = "steel",
      color = {0.6, 0.6, 0.65},
    },
    {
      name = "foundation", kind = "obstacle",
      shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "foundation",
    },
  },
  contacts = {
    {
      name = "bar_foundation", materials = {"steel", "foundation"},
      model = "hunt_crossley",
      stiffness = 5.5e7,                -- K, N/m
      alpha = 2 * 2.2e7 / (3 * 5.5e7),  -- s/m: lambda = 3/2 alpha K = B = 2.2e7 N s/m^2
      friction_static = 0.1,
      friction_kinetic = 0.075,
      tangent_stiffness = 1e10,         -- N/m: Goyal's tangential spring, stiff (sticks < 1 um)
    },
  },
}
