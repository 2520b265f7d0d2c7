/* issim haptics: the P2 pantograph (seed 004 ch. 2), its device back-ends, the servo thread
 * and the haptic force models (004 ch. 3, 3.4, 4.9).
 *
 * A thin umbrella over the four headers by concern, bottom up; include the one you need:
 *  - haptics_pantograph.h: the five-bar linkage's kinematics, encoders, limits and the servo's
 *    kinematic state (pure functions);
 *  - haptics_device.h: the protocol codec, the device interface and back-ends (usb, serial,
 *    playback), the device simulator process;
 *  - haptics_render.h: local surfaces, Siira's stochastic texture, the virtual coupling's
 *    description;
 *  - haptics_servo.h: the servo thread, the registry slots it writes, the engine side of the
 *    coupling, scenes' haptics tables and sessions.
 * Each opens with its threading model. In short: a running servo owns its device, kinematics
 * and models; other threads talk to it only through the registry and its atomics.
 */
#ifndef ISSIM_HAPTICS_H
#define ISSIM_HAPTICS_H

#include "issim/haptics_device.h"
#include "issim/haptics_pantograph.h"
#include "issim/haptics_render.h"
#include "issim/haptics_servo.h"

#endif
