"""The headers the frontend provides itself: the wheel ships libclang without Clang's builtin
headers (`<stddef.h>`, `<stdarg.h>`, ...), which the C library's headers include, so they
come from here, the same on every machine.
"""

from __future__ import annotations


# Virtual files (Clang's unsaved files): the Enzyme declarations a file lacks, and the
# folder of the builtin headers.
PRELUDE = "/tapeflow-c-frontend/enzyme-declarations.h"
BUILTIN_DIR = "/tapeflow-c-frontend/include"

# The routines `<cblas.h>` (include/cblas.h) defines; a call of another is refused.
CBLAS_ROUTINES = ("cblas_ddot", "cblas_daxpy", "cblas_dscal", "cblas_dnrm2", "cblas_dgemv",
                  "cblas_dgemm")

BUILTIN_HEADERS = {
    "stddef.h": """#ifndef _TAPEFLOW_STDDEF_H
#define _TAPEFLOW_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __WCHAR_TYPE__ wchar_t;
typedef struct { long long __ll; long double __ld; } max_align_t;
#define NULL ((void *)0)
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif
""",
    "stdarg.h": """#ifndef _TAPEFLOW_STDARG_H
#define _TAPEFLOW_STDARG_H
typedef __builtin_va_list va_list;
typedef __builtin_va_list __gnuc_va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define va_copy(d, s) __builtin_va_copy(d, s)
#endif
""",
    "limits.h": """#ifndef _TAPEFLOW_LIMITS_H
#define _TAPEFLOW_LIMITS_H
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-__SCHAR_MAX__ - 1)
#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)
#define CHAR_MAX __SCHAR_MAX__
#define CHAR_MIN SCHAR_MIN
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-__SHRT_MAX__ - 1)
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1L)
#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)
#define LLONG_MAX __LONG_LONG_MAX__
#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)
#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)
#endif
""",
    "float.h": """#ifndef _TAPEFLOW_FLOAT_H
#define _TAPEFLOW_FLOAT_H
#define FLT_RADIX __FLT_RADIX__
#define FLT_MANT_DIG __FLT_MANT_DIG__
#define DBL_MANT_DIG __DBL_MANT_DIG__
#define FLT_DIG __FLT_DIG__
#define DBL_DIG __DBL_DIG__
#define FLT_EPSILON __FLT_EPSILON__
#define DBL_EPSILON __DBL_EPSILON__
#define FLT_MIN __FLT_MIN__
#define DBL_MIN __DBL_MIN__
#define FLT_MAX __FLT_MAX__
#define DBL_MAX __DBL_MAX__
#endif
""",
    "stdbool.h": """#ifndef _TAPEFLOW_STDBOOL_H
#define _TAPEFLOW_STDBOOL_H
#define bool _Bool
#define true 1
#define false 0
#endif
""",
}
