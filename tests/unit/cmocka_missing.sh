#!/bin/sh
# cmocka_missing.sh: stands in for the cmocka unit tests when configure found no cmocka: says why, and skips.
echo "SKIP: the cmocka unit tests (tests/unit, tests/gpu) were not built: configure found no cmocka (install libcmocka-dev, or configure --with-cmocka)"
exit 77
