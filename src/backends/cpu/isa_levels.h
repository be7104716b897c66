// fourfold's CPU ISA levels, from the least to the most capable: the one list. The enum and names of isa.h, the
// per-level declarations of the kernel headers, the registration switch
// (cpu_registration.h), the generic tier's tables, the roofline's probe loops and CMakeLists.txt's object
// libraries (which reads the levels from the line below and takes each one's -m flags from
// FOURFOLD_ISA_FLAGS_<level>) are all made from it. A level's CPUID test is isa.cpp's host_has, a switch over
// the enum: a level added here and not there is a -Wswitch warning (an error under -Werror).
#pragma once

// X(level, extra) for each level; extra is handed through, for expansions that need a second name.
#define FOURFOLD_ISA_LEVELS_WITH(X, extra) X(scalar, extra) X(avx2, extra) X(avx512, extra) X(avx512bf16, extra) X(amx, extra)

#define FOURFOLD_ISA_CALL_(level, X) X(level)
// X(level) for each level.
#define FOURFOLD_ISA_LEVELS(X) FOURFOLD_ISA_LEVELS_WITH(FOURFOLD_ISA_CALL_, X)
