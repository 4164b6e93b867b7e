# tests/: shared test support, end-to-end tests and the fuzz targets.
# Unit tests are declared next to the code they test (fxt/local.mk ...).
EXTRA_DIST += tests/lib/test_subr.sh
