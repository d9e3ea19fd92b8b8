# ax_pthread_lite.m4: checks that POSIX threads link, with -pthread where the compiler takes it.
AC_DEFUN([AX_PTHREAD_LITE], [
  AC_MSG_CHECKING([for -pthread])
  save_CFLAGS="$CFLAGS"; CFLAGS="$CFLAGS -pthread"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>]], [[pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; return pthread_mutex_lock(&m);]])],
    [AC_MSG_RESULT([yes]); LIBS="$LIBS -pthread"],
    [AC_MSG_RESULT([no]); CFLAGS="$save_CFLAGS"; AC_CHECK_LIB([pthread], [pthread_create], [], [AC_MSG_ERROR([POSIX threads not found])])])
])
