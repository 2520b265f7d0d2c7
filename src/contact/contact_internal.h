/* Private: the model classes, one source file each. */
#ifndef ISSIM_CONTACT_INTERNAL_H
#define ISSIM_CONTACT_INTERNAL_H

#include "issim/contact.h"

extern const ContactModelClass contact_spring_damper_class;

#endif
