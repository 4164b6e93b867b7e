# FXT_CHECK_CFLAG(FLAG, ACTION-IF-OK, [ACTION-IF-NOT])
# Compiles an empty program with FLAG (plus -Werror so that unknown warning
# options are refused rather than ignored) and runs the matching action.
AC_DEFUN([FXT_CHECK_CFLAG], [
  AS_VAR_PUSHDEF([fxt_cache], [fxt_cv_cflag_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [fxt_cache], [
    fxt_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AS_VAR_SET([fxt_cache], [yes])], [AS_VAR_SET([fxt_cache], [no])])
    CFLAGS=$fxt_save_CFLAGS])
  AS_VAR_IF([fxt_cache], [yes], [$2], [$3])
  AS_VAR_POPDEF([fxt_cache])
])
