/*
 * core_tl.h - the core's side of the transport interface, for the .c files of src/core
 * alone: those that call transport operations include this instead of core.h, so the
 * layers above (api, coll, conv, mpi, shmem) never see transport.h. It also checks that
 * the constants core.h repeats for those layers agree with the transport's.
 */
#ifndef TERN_CORE_TL_H
#define TERN_CORE_TL_H

#include "core/core.h"
#include "transport/transport.h"

_Static_assert(CORE_MAX_IOV == TL_MAX_IOV, "core.h's CORE_MAX_IOV must be TL_MAX_IOV");
_Static_assert(CORE_CAP_WAKE == TL_CAP_WAKE && CORE_CAP_MAP == TL_CAP_MAP &&
                   CORE_CAP_SEND_REF == TL_CAP_SEND_REF &&
                   CORE_CAP_KERNEL_WAIT == TL_CAP_KERNEL_WAIT && CORE_CAP_GET == TL_CAP_GET &&
                   CORE_CAP_PUT == TL_CAP_PUT && CORE_CAP_ATOMIC == TL_CAP_ATOMIC,
               "core.h's CORE_CAP_* must be transport.h's TL_CAP_*");

#endif
